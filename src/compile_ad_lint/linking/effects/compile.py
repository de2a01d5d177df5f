"""``torch.compile`` and its spellings (``knowledge.torch_api.TORCH_CALLS``): compiled callables and
compilers, ``torch._dynamo.optimize``, ``functools.partial(torch.compile, ...)`` and ``disable``."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ...core.locations import Location
from ...knowledge import torch_api as api
from ...knowledge.effects import Effect
from ...knowledge.torch_api import CompileHow
from ...summary import model as ir
from ..arguments import Args, Values, fullgraph_of, keyword_arg, positional
from ..frames import Frame
from ..stores import compile_target
from ..values import (
    DEFAULT_BACKEND,
    UNKNOWN_BACKEND,
    UNKNOWN_VALUES,
    ClassVal,
    Compiled,
    Compiler,
    ConstVal,
    Disabled,
    Disabler,
    External,
    FunctionVal,
    Instance,
)
from .registry import register

if TYPE_CHECKING:
    from ..engine_context import EngineContext


def backend_of(args: Args, compile_effect: Effect, engine: EngineContext | None = None) -> str:
    """The backend a compile call names (``knowledge.torch_api.BACKEND_ARGUMENTS``); with the
    ``engine``, a backend function of the checked code that hands the graph back as it came is
    torch's eager backend (``api.PASS_THROUGH_BACKEND``)."""
    keyword, positional_index = api.BACKEND_ARGUMENTS[compile_effect]
    values = keyword_arg(args, keyword)
    if values is None and positional_index is not None:
        values = positional(args, positional_index) or None
    if values is None:
        return DEFAULT_BACKEND
    strings = {v.value for v in values if isinstance(v, ConstVal) and isinstance(v.value, str)}
    if len(strings) == 1 and len(values) == 1:
        return strings.pop()
    if engine is not None and values and all(_passes_graph_through(engine, v) for v in values):
        return api.PASS_THROUGH_BACKEND
    return UNKNOWN_BACKEND


def _passes_graph_through(engine: EngineContext, value: object) -> bool:
    """``value`` is a function of the checked code whose every ``return`` gives back its first
    parameter (the graph module) or its ``forward``, as torch's eager backend does."""
    if not isinstance(value, FunctionVal) or value.bound_self is not None:
        return False
    summary = engine.index.function(value.path, value.qualname)
    if summary is None or not summary.params:
        return False
    graph = summary.params[0]
    returned = [statement.value for statement in ir.statements_in(summary.body) if isinstance(statement, ir.Return)]
    return bool(returned) and all(
        isinstance(expr, ir.Ref)
        and expr.name == graph
        or isinstance(expr, ir.Attr)
        and isinstance(expr.base, ir.Ref)
        and expr.base.name == graph
        and expr.attr in api.PASS_THROUGH_ATTRIBUTES
        for expr in returned
    )


@register(Effect.COMPILE)
def compile_call(engine: EngineContext, row: object, name: str, args: Args, site: Location, frame: Frame) -> Values:
    backend = backend_of(args, Effect.COMPILE, engine)
    fullgraph = fullgraph_of(args, api.FULLGRAPH_KEYWORDS[Effect.COMPILE])
    targets = positional(args, 0)
    if targets and frame.ctx.harvest:
        return targets  # a method nothing may call: its compile does not count
    how = CompileHow.CALL if name in api.COMPILE else CompileHow.WRAPPER
    edit = api.BACKEND_EDITS.get(how)
    if targets:
        made = frozenset(
            Compiled(compile_target(t), backend, site, name, fullgraph, conditions=frame.conditions, how=how, edit=edit)
            for t in targets
        )
        for compiled in made:
            engine.second_orders.note(compiled)
        return compiled_classes(engine, made)
    return frozenset([Compiler(backend, site, name, fullgraph, how, edit)])


def compiled_classes(engine: EngineContext, compiled: Values) -> Values:
    """``compiled`` with each compiled ``nn.Module`` class (``@torch.compile`` on its definition,
    ``Net = torch.compile(Net)``) left the class it is: torch compiles the class's ``_call_impl``
    (``_TorchDynamoContext.__call__``), so the calls of every instance run compiled
    (``facts/compile_scope.py``), as after ``self.compile()`` in the module's own method."""
    if not any(isinstance(v, Compiled) and isinstance(v.target, ClassVal) for v in compiled):
        return compiled
    result = set()
    for value in compiled:
        cls = value.target if isinstance(value, Compiled) else None
        if isinstance(cls, ClassVal) and engine.is_module_class(cls):
            instance = Instance(cls)
            engine.reach.set_attribute(
                frozenset([instance]),
                frozenset([ConstVal(api.FORWARD.name)]),
                frozenset([replace(value, target=instance)]),
            )
            result.add(cls)
        else:
            result.add(value)
    return frozenset(result)


@register(Effect.COMPILER)
def compiler_call(engine: EngineContext, row: object, name: str, args: Args, site: Location, frame: Frame) -> Values:
    fullgraph = fullgraph_of(args, api.FULLGRAPH_KEYWORDS[Effect.COMPILER])
    backend = backend_of(args, Effect.COMPILER, engine)
    return frozenset(
        [Compiler(backend, site, name, fullgraph, CompileHow.OPTIMIZE, api.BACKEND_EDITS[CompileHow.OPTIMIZE])]
    )


@register(Effect.PARTIAL)
def partial_call(engine: EngineContext, row: object, name: str, args: Args, site: Location, frame: Frame) -> Values:
    first = positional(args, 0)
    if any(isinstance(f, External) and f.name in engine.compile_names for f in first):
        backend = backend_of(args, Effect.COMPILE, engine)
        fullgraph = fullgraph_of(args, api.FULLGRAPH_KEYWORDS[Effect.COMPILE])
        edit = api.BACKEND_EDITS[CompileHow.PARTIAL]
        return frozenset(
            [Compiler(backend, site, "functools.partial(torch.compile)", fullgraph, CompileHow.PARTIAL, edit)]
        )
    return first or UNKNOWN_VALUES


@register(Effect.DISABLE)
def disable_call(engine: EngineContext, row: object, name: str, args: Args, site: Location, frame: Frame) -> Values:
    targets = positional(args, 0)
    return frozenset(Disabled(t) for t in targets) if targets else frozenset([Disabler()])
