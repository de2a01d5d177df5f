"""Settings the user sets at launch (``knowledge.switches``): the command-line and config frameworks'
calls that return them (``tyro.cli(TrainConfig)``, ``parser.parse_args()``) and ``field(default=...)``
in a config class; ``linking/analyses/switches.py`` reads them as run-time switches."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.locations import Location
from ...knowledge import switches as knowledge
from ...knowledge.effects import Effect
from ...summary import model as ir
from ..arguments import Args, Values, keyword_arg, positional
from ..frames import Frame
from ..values import ClassVal, Data, Instance, Settings
from .registry import register, site_span

if TYPE_CHECKING:
    from ..engine_context import EngineContext


@register(Effect.SETTINGS)
def settings_call(
    engine: EngineContext, row: knowledge.SettingsCall, name: str, args: Args, site: Location, frame: Frame
) -> Values:
    """The launch settings; an instance of the config class the call fills (``tyro.cli(TrainConfig)``),
    whose fields are switches with their defaults known."""
    if row.builds is not None:
        keyword, position = row.builds
        given = keyword_arg(args, keyword) or positional(args, position)
        built = [Instance(v) if isinstance(v, ClassVal) else v for v in given if isinstance(v, (ClassVal, Instance))]
        if built:
            return frozenset(built)
    return frozenset([Settings(row.kind)])


@register(Effect.FIELD_DEFAULT)
def field_default(
    engine: EngineContext, row: knowledge.FieldDefault, name: str, args: Args, site: Location, frame: Frame
) -> Values:
    """``field(default_factory=ModelConfig)`` in a config class body: the factory's result."""
    default = keyword_arg(args, row.default)
    if default is not None:
        return default
    factory = keyword_arg(args, row.factory)
    if factory:
        span = site_span(site)
        return engine.call_values(factory, (), span, frame, ir.Ref(row.factory))
    return frozenset([Data()])
