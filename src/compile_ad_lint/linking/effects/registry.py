"""The handler of each effect: what a call whose knowledge row names the effect does.

Each behaviour module of this package registers its handlers when the package is imported (as
pytype's overlays register theirs): ``@register(Effect.X)`` for the effects of called names
(``knowledge.calls``), ``@register_framework_method(FrameworkEffect.X)`` for those of framework
methods (``knowledge.frameworks.FRAMEWORK_METHODS``); the engine looks one up per meaning of a call.
A handler takes the engine as ``EngineContext`` (never the engine's classes), then what the call
gives it, and returns the call's values; a called name's handler may return None instead when the
call is not one it knows after all (the engine goes on with the name's other meanings)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ...core.locations import Location
from ...knowledge.effects import Effect
from ...knowledge.frameworks import FrameworkEffect
from ...summary import model as ir
from ..arguments import Args, Values
from ..frames import Frame
from ..values import FrameworkCall

if TYPE_CHECKING:
    from ..engine_context import EngineContext

#: ``(engine, row, name, args, site, frame) -> values``; the row's type is the effect's table's.
EffectHandler = Callable[["EngineContext", Any, str, Args, Location, Frame], "Values | None"]
#: ``(engine, call, args, site, span, frame) -> values`` for a framework method's call.
FrameworkHandler = Callable[["EngineContext", FrameworkCall, Args, Location, ir.Span, Frame], Values]


def site_span(site: Location) -> ir.Span:
    """The span of the call a handler was given the ``site`` of (what ``call_values`` locates by)."""
    return ir.Span(site.line, site.column, site.end_line, site.end_column)


K = TypeVar("K", bound=Hashable)
H = TypeVar("H", bound=Callable[..., Any])


class Registry(Generic[K, H]):
    """One handler per key; a second one for a key is an error."""

    def __init__(self) -> None:
        self._handlers: dict[K, H] = {}

    def register(self, key: K) -> Callable[[H], H]:
        def add(handler: H) -> H:
            if key in self._handlers:
                raise ValueError(f"{key} has a handler already: {self._handlers[key].__qualname__}")
            self._handlers[key] = handler
            return handler

        return add

    def __getitem__(self, key: K) -> H:
        return self._handlers[key]

    def handlers(self) -> Mapping[K, H]:
        """Every registered handler, by key (what ``tests/architecture`` compares with the tables)."""
        return dict(self._handlers)


EFFECTS: Registry[Effect, EffectHandler] = Registry()
FRAMEWORK_METHODS: Registry[FrameworkEffect, FrameworkHandler] = Registry()

register = EFFECTS.register
register_framework_method = FRAMEWORK_METHODS.register
