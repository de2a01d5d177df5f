"""forge: dotted overrides applied to a JobConfig.

Module config/override.py.
"""

import dataclasses


def _convert(old, value):
    if isinstance(old, bool):
        return str(value).lower() in ("1", "true", "yes")
    if isinstance(old, int):
        return int(value)
    if isinstance(old, float):
        return float(value)
    if isinstance(old, tuple):
        return tuple(str(value).split(","))
    return value


def apply_overrides(config, overrides):
    for dotted, value in sorted(overrides.items()):
        section_name, key = dotted.split(".", 1)
        section = getattr(config, section_name)
        old = getattr(section, key)
        section = dataclasses.replace(section, **{key: _convert(old, value)})
        config = dataclasses.replace(config, **{section_name: section})
    return config
