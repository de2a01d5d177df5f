"""Which optional packages are installed, looked up once without importing them."""

import importlib.util
from functools import lru_cache


@lru_cache(maxsize=None)
def _available(name):
    return importlib.util.find_spec(name) is not None


def is_xformers_available():
    return _available("xformers")


def is_wandb_available():
    return _available("wandb")


def is_bitsandbytes_available():
    return _available("bitsandbytes")


def is_peft_available():
    return _available("peft")


def is_transformers_available():
    return _available("transformers")


def is_tensorboard_available():
    return _available("tensorboard") or _available("tensorboardX")
