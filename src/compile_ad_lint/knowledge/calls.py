"""One index over every table that gives a called name a meaning: qualified name -> its meanings.

The interpreter resolves a call to a qualified name and looks it up here once; each meaning names an
effect and carries its table row, and the effect's one handler (registered in ``linking/effects/``)
reads the row's fields. No code branches on a particular name: a new spelling is a row in
``torch_api`` or ``frameworks``.

A name may have several meanings (``torch.autograd.functional.jacobian`` is both a forward-mode
function and a second-order one); their handlers run in table order, the ``REACH_EFFECTS`` first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from . import containers, switches
from . import frameworks as fw
from . import torch_api as api
from .effects import Effect


@dataclass(frozen=True)
class Meaning:
    """One effect of calling a name, with the table row (or table value) that parameterizes it."""

    effect: Effect
    row: object


def _index(*tables: tuple[Effect, Mapping[str, object] | Iterable[str]]) -> dict[str, tuple[Meaning, ...]]:
    index: dict[str, tuple[Meaning, ...]] = {}
    for effect, table in tables:
        items = table.items() if isinstance(table, Mapping) else ((name, name) for name in table)
        for name, row in items:
            index[name] = (*index.get(name, ()), Meaning(effect, row))
    return index


#: Effects tried before anything else a name means (module wrappers, grad modes, registries,
#: frameworks, ...): each may pass, and a call passing ``requires_grad=`` is a tensor factory first.
REACH_EFFECTS = frozenset(
    {
        Effect.WRAPPER,
        Effect.SAME_MODULE,
        Effect.GRAD_MODE,
        Effect.DATACLASS,
        Effect.EMPTY_CONTAINER,
        Effect.GETATTR,
        Effect.SETATTR,
        Effect.FORWARD_MODE,
        Effect.FRAMEWORK_CLASS,
    }
)

CALLS: dict[str, tuple[Meaning, ...]] = _index(
    (Effect.WRAPPER, api.WRAPPER_BY_NAME),
    (Effect.SAME_MODULE, api.SAME_MODULE_FUNCTIONS),
    (Effect.GRAD_MODE, api.GRAD_MODES),
    (Effect.DATACLASS, api.DATACLASS_DECORATORS),
    (Effect.EMPTY_CONTAINER, containers.EMPTY_CONTAINER_FACTORIES),
    (Effect.FORWARD_MODE, api.FORWARD_MODE_FUNCTIONS),
    (Effect.FRAMEWORK_CLASS, fw.CLASS_BY_NAME),
    *((row.effect, {name: row for name in row.names}) for row in api.TORCH_CALLS),
    (Effect.AUTOCAST, api.AUTOCAST),
    (Effect.CONFIG_PATCH, api.CONFIG_PATCH_BY_NAME),
    (Effect.BACKWARD, api.BACKWARD_FUNCTIONS),
    (Effect.AUTOGRAD_FUNCTIONAL, api.AUTOGRAD_FUNCTIONAL),
    (Effect.SETTINGS, switches.SETTINGS_CALL_BY_NAME),
    (Effect.FIELD_DEFAULT, switches.FIELD_DEFAULT_BY_NAME),
)


#: Every qualified name a table compares what the code reaches with: the called names above, and the
#: names matched as base classes, module classes, parameter factories, dtypes and config modules.
#: Attribute chains that leave every one of them behind name nothing the analysis knows
#: (``linking.values.ExternalNames``); ``tests/knowledge/test_knowledge.py`` checks that every dotted name in
#: the tables is here.
MATCHED_NAMES: frozenset[str] = (
    frozenset(CALLS)
    | frozenset(fw.FRAMEWORK_BASES)
    | frozenset(fw.MODULE_BASES)
    | api.PARAMETERIZED_MODULES
    | api.PARAMETERLESS_MODULES
    | api.PARAMETER_FACTORIES
    | api.KEYWORD_FIELD_BASES
    | api.AUTOCAST_FP32_MODULES
    | api.FLOAT32_DTYPES
    | api.CONTEXT_MANAGER_DECORATORS
    | frozenset(module for module, _ in api.CONFIG_ATTRIBUTES)
    | switches.SWITCH_NAMES
)


def with_compile_wrappers(wrappers: Iterable[str]) -> dict[str, tuple[Meaning, ...]]:
    """``CALLS`` plus the project's own ``compile-wrappers`` (configuration), which mean ``torch.compile``
    ahead of anything else the name means."""
    row = api.TorchCall(Effect.COMPILE, frozenset(wrappers), "pyproject.toml [tool.compile-ad-lint] compile-wrappers")
    if not row.names:
        return CALLS
    index = dict(CALLS)
    for name in row.names:
        index[name] = (Meaning(Effect.COMPILE, row), *index.get(name, ()))
    return index
