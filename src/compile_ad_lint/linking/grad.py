"""Autograd history on abstract values: what ``no_grad`` and frozen modules leave of it, and the
``requires_grad`` argument of ``requires_grad_()``. Plain functions, shared by ``reach`` and the
container effects."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from ..knowledge import torch_api as api
from .arguments import Args, Values
from .stores import argument_or_none, constants_of
from .values import Data, ExternalInstance, Wrapper


def without_graph(values: Values, keep: Data | None = None) -> Values:
    """The same data without autograd history (what ``no_grad`` or a frozen module yields);
    ``keep``: the inputs' history, which a frozen module's output still carries."""
    kept = keep.origins if keep is not None else frozenset()
    elements = keep.elements if keep is not None else frozenset()
    return frozenset(
        replace(v, origins=v.origins & kept, requires_grad=False, elements=v.elements & elements, exact=frozenset())
        if isinstance(v, Data)
        else v
        for v in values
    )


def need_grad(inputs: Data, values: Iterable[object]) -> bool:
    """Whether inputs require grad: module outputs, parameters (``nn.Parameter(...)``), explicit flags."""
    return (
        inputs.requires_grad
        or bool(inputs.origins)
        or any(isinstance(v, ExternalInstance) and v.cls in api.PARAMETER_FACTORIES for v in values)
    )


def is_frozen(value: object) -> bool:
    return isinstance(value, Wrapper) and value.frozen


def requires_grad_argument(args: Args) -> bool | None:
    """What ``requires_grad_(...)`` sets: True without an argument, None when not one constant."""
    values = argument_or_none(args, api.REQUIRES_GRAD.name, 0)
    if values is None:
        return True
    constants = constants_of(values)
    return bool(constants.pop()) if constants and len(constants) == 1 else None
