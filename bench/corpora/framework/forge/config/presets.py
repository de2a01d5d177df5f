"""forge: named presets per model family.

Module config/presets.py.
"""

from forge.config.job_config import JobConfig
from forge.config.override import apply_overrides

PRESETS = {
    "llama": {"model.name": "llama", "model.flavor": "debug"},
    "qwen": {"model.name": "qwen", "model.flavor": "debug"},
    "mistral": {"model.name": "mistral", "model.flavor": "debug"},
    "gemma": {"model.name": "gemma", "model.flavor": "debug"},
    "phi": {"model.name": "phi", "model.flavor": "debug"},
    "falcon": {"model.name": "falcon", "model.flavor": "debug"},
    "mpt": {"model.name": "mpt", "model.flavor": "debug"},
    "bloom": {"model.name": "bloom", "model.flavor": "debug"},
    "gptj": {"model.name": "gptj", "model.flavor": "debug"},
    "mamba": {"model.name": "mamba", "model.flavor": "debug"},
    "vit": {"model.name": "vit", "model.flavor": "debug"},
    "dit": {"model.name": "dit", "model.flavor": "debug"},
    "clip": {"model.name": "clip", "model.flavor": "debug"},
    "whisper": {"model.name": "whisper", "model.flavor": "debug"},
}


def preset(name):
    return apply_overrides(JobConfig(), PRESETS[name])
