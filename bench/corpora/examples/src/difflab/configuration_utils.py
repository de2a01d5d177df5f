"""Configuration of models and schedulers: constructor arguments recorded, saved as JSON, reloaded."""

import functools
import inspect
import json
import os

from .utils.constants import CONFIG_NAME
from .utils.logging import get_logger

logger = get_logger(__name__)


class FrozenDict(dict):
    def __setitem__(self, key, value):
        raise TypeError(f"cannot set {key}: the config is frozen, use register_to_config")

    def __getattr__(self, name):
        if name in self:
            return self[name]
        raise AttributeError(name)


class ConfigMixin:
    config_name = CONFIG_NAME
    ignore_for_config = ()

    def register_to_config(self, **kwargs):
        internal = dict(getattr(self, "_internal_dict", {}))
        internal.update(kwargs)
        self._internal_dict = FrozenDict(internal)

    @property
    def config(self):
        return getattr(self, "_internal_dict", FrozenDict())

    def save_config(self, folder):
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, self.config_name), "w", encoding="utf-8") as handle:
            json.dump({"_class_name": type(self).__name__, **self.config}, handle, indent=2, sort_keys=True)

    @classmethod
    def load_config(cls, folder, subfolder=None):
        path = os.path.join(folder, subfolder or "", cls.config_name)
        if not os.path.exists(path):
            logger.warning("no %s in %s: using the defaults of %s", cls.config_name, folder, cls.__name__)
            return {}
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)

    @classmethod
    def from_config(cls, config=None, **kwargs):
        config = dict(config or {})
        config.pop("_class_name", None)
        config.update(kwargs)
        accepted = set(inspect.signature(cls.__init__).parameters) - {"self"}
        unused = sorted(set(config) - accepted)
        if unused:
            logger.info("%s ignores config keys %s", cls.__name__, unused)
        return cls(**{k: v for k, v in config.items() if k in accepted})


def register_to_config(init):
    """Record the constructor's arguments (defaults included) as the object's config."""

    @functools.wraps(init)
    def inner(self, *args, **kwargs):
        signature = inspect.signature(init)
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        recorded = {k: v for k, v in bound.arguments.items() if k != "self" and k not in self.ignore_for_config}
        init(self, *args, **kwargs)
        self.register_to_config(**recorded)

    return inner
