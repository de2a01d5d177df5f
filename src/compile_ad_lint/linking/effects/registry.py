"""The handler of each ``Effect``: what a call whose ``knowledge.calls`` row names it does.

Each behaviour module of this package registers its handlers with ``@register(Effect.X)`` when the
package is imported (as pytype's overlays register theirs); the engine looks one up per meaning of
a called name. A handler takes the engine through ``EngineContext`` (never the engine's classes),
the table row, the called name, the evaluated arguments, the call site and the frame; it returns
the call's values, or None when the call is not one it knows after all (the engine goes on)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from ...core.locations import Location
from ...knowledge.effects import Effect
from ..arguments import Args, Values
from ..frames import Frame

if TYPE_CHECKING:
    from ..engine_context import EngineContext

#: ``(engine, row, name, args, site, frame) -> values``; the row's type is the effect's table's.
EffectHandler = Callable[["EngineContext", Any, str, Args, Location, Frame], "Values | None"]

H = TypeVar("H", bound=EffectHandler)

_HANDLERS: dict[Effect, EffectHandler] = {}


def register(effect: Effect) -> Callable[[H], H]:
    """Make the decorated function ``effect``'s handler; an effect has one."""

    def add(handler: H) -> H:
        if effect in _HANDLERS:
            raise ValueError(f"{effect} has a handler already: {_HANDLERS[effect].__qualname__}")
        _HANDLERS[effect] = handler
        return handler

    return add


def handler(effect: Effect) -> EffectHandler:
    return _HANDLERS[effect]


def handlers() -> Mapping[Effect, EffectHandler]:
    """Every registered handler, by effect (what ``tests/architecture`` compares with the tables)."""
    return dict(_HANDLERS)
