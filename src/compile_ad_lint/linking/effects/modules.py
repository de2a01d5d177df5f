"""Module wrappers and module collections (``knowledge.torch_api``): ``DistributedDataParallel`` and
the other wrappers (``MODULE_WRAPPERS``), functions that return the module they are given, and
``nn.ModuleList``/``nn.Sequential`` and the builtins that build collections of their arguments."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.locations import Location
from ...knowledge import torch_api as api
from ...knowledge.effects import Effect
from ...summary import model as ir
from ..arguments import Args, Values, positional
from ..frames import Frame
from ..stores import argument_or_none
from ..values import UNKNOWN_VALUES, Collection, Wrapper, normalize
from .registry import register, site_span

if TYPE_CHECKING:
    from ..engine_context import EngineContext


@register(Effect.WRAPPER)
def wrap_module(
    engine: EngineContext, row: api.ModuleWrapper, name: str, args: Args, site: Location, frame: Frame
) -> Values:
    inner = argument_or_none(args, "module", 0) or UNKNOWN_VALUES
    # ``DDP(DDP(m))`` from code walked again is ``DDP(m)``.
    inner = frozenset(i for v in inner for i in (v.inner if isinstance(v, Wrapper) and v.kind == row.label else (v,)))
    return frozenset([Wrapper(normalize(inner), row.label, site)])


@register(Effect.SAME_MODULE)
def same_module(engine: EngineContext, row: object, name: str, args: Args, site: Location, frame: Frame) -> Values:
    return argument_or_none(args, "module", 0) or positional(args, 0) or UNKNOWN_VALUES


@register(Effect.COLLECTION)
def collection(engine: EngineContext, row: object, name: str, args: Args, site: Location, frame: Frame) -> Values:
    by_name = isinstance(row, api.TorchCall) and row.items_by_name
    items = engine.elements(frozenset().union(*(values for _, values in args))) if args else frozenset()
    return frozenset([Collection(items, by_name=by_name)])


@register(Effect.CALL_THROUGH)
def call_through(
    engine: EngineContext, row: api.TorchCall, name: str, args: Args, site: Location, frame: Frame
) -> Values:
    """``checkpoint(block, x, use_reentrant=False)``: ``block(x)``, made here. Not in a forward-AD
    region: a reentrant checkpoint raises NotImplementedError there even eagerly, and what a
    compiled function inside a non-reentrant one does with tangents is not among the recorded facts."""
    functions = positional(args, 0)
    if not functions or frame.ctx.region is not None:
        return UNKNOWN_VALUES
    passed: list[tuple[str | None, Values]] = []
    skipped = False
    for keyword, values in args:
        if keyword is None and not skipped:
            skipped = True  # the function itself
        elif keyword not in row.own_keywords:
            passed.append((keyword, values))
    span = site_span(site)
    return normalize(engine.call_values(functions, tuple(passed), span, frame, ir.Ref(name.rsplit(".", 1)[-1])))


@register(Effect.SEQUENTIAL)
def sequential(engine: EngineContext, row: object, name: str, args: Args, site: Location, frame: Frame) -> Values:
    items = frozenset().union(*(values for keyword, values in args if keyword is None)) if args else frozenset()
    return frozenset([Collection(normalize(items), sequential=True)])
