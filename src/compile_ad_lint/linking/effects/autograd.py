"""Reverse-mode autograd (``knowledge.torch_api``): ``torch.autograd.backward``/``grad`` and their
spellings, ``torch.autograd.functional`` (second order: CAL004), and the grad modes (``no_grad``,
``enable_grad``, ``set_grad_enabled``, ``inference_mode``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from ...core.locations import Location
from ...knowledge import torch_api as api
from ...knowledge.effects import Effect
from ...summary import model as ir
from ..arguments import Args, Values, argument_data, keyword_arg, positional, written_argument
from ..contexts import GradMode
from ..events import FunctionalThroughCompiled
from ..frames import Frame
from ..stores import argument_or_none, constants_of, flag_key
from ..values import PLAIN, UNKNOWN_VALUES, Collection, CompiledOutput, ConstVal, derived, stable_text
from .registry import register, site_span

if TYPE_CHECKING:
    from ..engine_context import EngineContext


def in_order(origins: Iterable[CompiledOutput]) -> tuple[CompiledOutput, ...]:
    """Compiled outputs by call site and compile site, ties (one generic compile site reached with
    several block classes) by their text: sets iterate in a per-process order, and a finding's
    message and related locations must not depend on which process produced them."""
    return tuple(sorted(origins, key=lambda o: (o.call_site.compared(), o.compiled.site.compared(), stable_text(o))))


def create_graph_of(args: Args, position: int) -> bool | None:
    """``create_graph=`` of a backward call: a constant, False when absent, None when not constant."""
    values = keyword_arg(args, api.CREATE_GRAPH.name)
    if values is None:
        plain = [values for keyword, values in args if keyword is None]
        values = plain[position] if position < len(plain) else None
    if not values:
        return False
    constants = {bool(v.value) for v in values if isinstance(v, ConstVal)}
    if len(constants) == 1 and all(isinstance(v, ConstVal) for v in values):
        return constants.pop()
    return None


def written_text(expr: ir.Expr | None) -> str:
    """A name or attribute chain as written (``second_order``, ``self.cfg.create_graph``), else empty."""
    return (flag_key(expr) or "") if expr is not None else ""


@register(Effect.BACKWARD)
def backward_call(
    engine: EngineContext, row: api.BackwardFunction, name: str, args: Args, site: Location, frame: Frame
) -> Values:
    receivers = positional(args, 0) or keyword_arg(args, row.receiver) or frozenset()
    written = written_text(written_argument(frame.call_args, api.CREATE_GRAPH.name, row.create_graph_position))
    create_graph = create_graph_of(args, row.create_graph_position)
    engine.record_backward(
        receivers, site, f"{name}()", frame, create_graph, written, returns_gradients=row.returns_gradients
    )
    return frozenset([PLAIN])


@register(Effect.AUTOGRAD_FUNCTIONAL)
def autograd_functional_call(
    engine: EngineContext, row: api.FunctionalSpec, name: str, args: Args, site: Location, frame: Frame
) -> Values:
    autograd_functional(engine, name, args, site, frame)
    return frozenset([argument_data(args)])


def autograd_functional(engine: EngineContext, name: str, args: Args, site: Location, frame: Frame) -> None:
    """``torch.autograd.functional.hvp(f, inputs, ...)``: call ``f`` on ``inputs`` and record
    the compiled calls its result goes through when the function may differentiate twice (CAL004)."""
    spec = api.AUTOGRAD_FUNCTIONAL[name]
    second_order = True if spec.always_second_order else create_graph_of(args, spec.create_graph_position)
    written = (
        written_text(written_argument(frame.call_args, api.CREATE_GRAPH.name, spec.create_graph_position))
        if second_order is None
        else ""
    )
    functions = positional(args, 0) or keyword_arg(args, "func")
    if second_order is False or not functions:
        return
    inputs = positional(args, 1) or keyword_arg(args, "inputs") or UNKNOWN_VALUES
    spread = (("*", engine.elements(inputs)),) if any(isinstance(v, Collection) for v in inputs) else ((None, inputs),)
    saved = frame.ctx
    frame.ctx = replace(saved, region=None)  # reverse mode: no forward-AD region inside
    try:
        span = site_span(site)
        returned = engine.call_values(functions, spread, span, frame)
    finally:
        frame.ctx = saved
    origins = derived(returned).origins
    if origins:
        ordered = in_order(origins)
        engine.record(
            FunctionalThroughCompiled(
                site, name, ordered, second_order, engine.site_of(frame, site), frame.conditions, written
            ),
            frame,
        )


def grad_mode(name: str, args: Args) -> bool | None:
    default = api.GRAD_MODES[name]
    keyword = api.GRAD_MODE_ARGUMENT.get(name)
    if keyword is None:
        return default
    values = argument_or_none(args, keyword, 0)
    if values is None:
        return False if default is False else None  # inference_mode() disables grad by default
    constants = constants_of(values)
    if constants is None or len(constants) != 1:
        return None
    flag = bool(constants.pop())
    if default is False:  # inference_mode(mode): mode=False leaves grad as it was
        return False if flag else None
    return flag


@register(Effect.GRAD_MODE)
def grad_mode_call(engine: EngineContext, row: object, name: str, args: Args, site: Location, frame: Frame) -> Values:
    return frozenset([GradMode(grad_mode(name, args))])
