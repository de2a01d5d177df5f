"""forge: command line to JobConfig.

Module config/parse.py.
"""

import argparse
import dataclasses

from forge.config.job_config import JobConfig
from forge.config.override import apply_overrides
from forge.config.validate import validate


def _add_section(parser, prefix, section):
    for item in dataclasses.fields(section):
        parser.add_argument(f"--{prefix}.{item.name}", default=None)


def parse_args(argv=None):
    config = JobConfig()
    parser = argparse.ArgumentParser()
    parser.add_argument("--preset", default=None)
    for item in dataclasses.fields(config):
        value = getattr(config, item.name)
        if dataclasses.is_dataclass(value):
            _add_section(parser, item.name, value)
    args = parser.parse_args(argv)
    overrides = {k: v for k, v in vars(args).items() if v is not None and "." in k}
    config = apply_overrides(config, overrides)
    validate(config)
    return config
