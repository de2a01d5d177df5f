"""forge: train specs in a module-level registry.

Module protocols/train_spec.py.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

import torch.nn as nn

ParallelizeFunction: TypeAlias = Callable[..., nn.Module]
LossFunctionBuilder: TypeAlias = Callable[..., Callable]


@dataclass
class TrainSpec:
    name: str
    model_cls: type
    flavors: dict
    parallelize_fn: ParallelizeFunction
    build_loss_fn: LossFunctionBuilder
    state_dict_adapter: type | None = None


_train_specs: dict[str, TrainSpec] = {}


def register_train_spec(train_spec: TrainSpec) -> None:
    if train_spec.name in _train_specs:
        raise ValueError(f"train spec {train_spec.name} is already registered")
    _train_specs[train_spec.name] = train_spec


def get_train_spec(name: str) -> TrainSpec:
    if name not in _train_specs:
        raise ValueError(f"train spec {name} is not registered")
    return _train_specs[name]


def list_train_specs() -> list[str]:
    return sorted(_train_specs)
