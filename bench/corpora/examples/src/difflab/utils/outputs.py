"""Model and pipeline outputs: dataclasses that also index like tuples (``out[0]``, ``return_dict=False``)."""

from collections import OrderedDict
from dataclasses import fields, is_dataclass


class BaseOutput(OrderedDict):
    def __post_init__(self):
        if not is_dataclass(self):
            raise TypeError(f"{type(self).__name__} must be a dataclass")
        for item in fields(self):
            value = getattr(self, item.name)
            if value is not None:
                self[item.name] = value

    def __getitem__(self, key):
        if isinstance(key, str):
            return dict(self.items())[key]
        return self.to_tuple()[key]

    def __setattr__(self, name, value):
        if name in self.keys() and value is not None:
            super().__setitem__(name, value)
        super().__setattr__(name, value)

    def to_tuple(self):
        return tuple(self[k] for k in self.keys())
