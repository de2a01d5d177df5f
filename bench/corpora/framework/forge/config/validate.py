"""forge: consistency checks of a JobConfig.

Module config/validate.py.
"""

from forge.config.defaults import DTYPE_NAMES


class ConfigError(ValueError):
    pass


def validate(config):
    if config.training.mixed_precision not in DTYPE_NAMES:
        raise ConfigError(f"unknown dtype {config.training.mixed_precision}")
    if config.training.gradient_accumulation_steps < 1:
        raise ConfigError("gradient_accumulation_steps must be positive")
    if config.parallel.pipeline_parallel_degree > 1 and config.compile.enable:
        raise ConfigError("compile with pipeline parallelism is not supported here")
    return config
