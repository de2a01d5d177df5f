"""Forward-mode AD (``knowledge.torch_api``): ``dual_level`` regions, ``make_dual``/``unpack_dual``,
``torch.func.functional_call`` with dual parameters, and the ``jacobian``/``hessian`` calls that run
their function on dual tensors (a CAL001 region of their own)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ...core.locations import Location
from ...knowledge import torch_api as api
from ...knowledge.effects import Effect
from ...summary import model as ir
from ..arguments import Args, Values, argument_data, keyword_arg, positional
from ..contexts import DualLevelContext
from ..frames import Frame
from ..stores import argument_or_none, constants_of
from ..values import Collection, ConstVal, Data, normalize
from .registry import register, site_span

if TYPE_CHECKING:
    from ..engine_context import EngineContext


@register(Effect.DUAL_LEVEL)
def dual_level(engine: EngineContext, row: object, name: str, args: Args, site: Location, frame: Frame) -> Values:
    return frozenset([DualLevelContext(site)])


@register(Effect.MAKE_DUAL)
def make_dual(engine: EngineContext, row: object, name: str, args: Args, site: Location, frame: Frame) -> Values:
    return frozenset([Data(argument_data(args).origins, True)])


@register(Effect.UNPACK_DUAL)
def unpack_dual(engine: EngineContext, row: object, name: str, args: Args, site: Location, frame: Frame) -> Values:
    return frozenset([Data(argument_data(args).origins, False)])


@register(Effect.FUNCTIONAL_CALL)
def functional_call(engine: EngineContext, row: object, name: str, args: Args, site: Location, frame: Frame) -> Values:
    """``functional_call(module, parameters, args, kwargs)``: the module runs on ``args`` with the
    given parameters (torch/_functorch/functional_call.py ``functional_call(module,
    parameter_and_buffer_dicts, args=None, kwargs=None, ...)``; a single non-tuple ``args`` is one
    positional argument). Dual parameters make the module dual (``linking/analyses/dual_params.py``)."""
    modules = positional(args, 0) or keyword_arg(args, "module") or frozenset()
    parameters = positional(args, 1) or keyword_arg(args, "parameter_and_buffer_dicts") or frozenset()
    if frame.ctx.region is not None and argument_data(((None, parameters),)).dual:
        engine.dual_params.mark(modules, frame.ctx.region)
    inputs = positional(args, 2) or keyword_arg(args, "args") or frozenset()
    keywords = positional(args, 3) or keyword_arg(args, "kwargs") or frozenset()
    spread: list[tuple[str | None, Values]] = []
    for value in inputs:
        if isinstance(value, Collection) and value.positions:
            spread.extend((None, position) for position in value.positions)
        elif isinstance(value, Collection) or isinstance(value, ConstVal):
            spread.append(("*", engine.elements(frozenset([value]))))
        else:
            spread.append((None, frozenset([value])))
    if keywords:
        spread.append(("**", keywords))
    span = site_span(site)
    return normalize(engine.call_values(modules, tuple(spread), span, frame, ir.Ref(name.rsplit(".", 1)[-1])))


@register(Effect.FORWARD_MODE)
def forward_mode_call(
    engine: EngineContext, row: object, name: str, args: Args, site: Location, frame: Frame
) -> Values | None:
    """``jacobian(f, x, strategy="forward-mode", vectorize=True)`` calls ``f`` on dual tensors inside
    a ``dual_level`` of its own: a CAL001 region at this call. None: the reverse-mode questions
    (CAL004, ``autograd.py``) still apply, so the name's other effects go on."""
    (keyword, index, value), (guard, guard_index) = api.FORWARD_MODE_FUNCTIONS[name]
    if constants_of(argument_or_none(args, keyword, index)) != {value}:
        return None
    vectorize = argument_or_none(args, guard, guard_index)
    if vectorize is None or constants_of(vectorize) == {False}:
        return None  # without vectorize=True it raises NotImplementedError at once: loud
    functions = argument_or_none(args, "func", 0) or frozenset()
    saved = frame.ctx
    frame.ctx = replace(saved, region=site)
    start = len(frame.pending)
    try:
        span = site_span(site)
        engine.call_values(
            functions, ((None, frozenset([Data(dual=True)])),), span, frame, ir.Ref(name.rsplit(".", 1)[-1])
        )
    finally:
        frame.ctx = saved
    engine.finish_region(frame, site, start)
    return None
