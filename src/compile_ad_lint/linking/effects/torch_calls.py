"""What calls into torch do (``knowledge.calls`` rows, keyed by ``Effect``): compile and its
wrappers, forward AD, autocast and config patches, backward and ``torch.autograd.functional``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any, cast

from ...core.locations import Location
from ...knowledge import torch_api as api
from ...knowledge.effects import Effect
from ...knowledge.torch_api import CompileHow
from ...summary import model as ir
from ..arguments import Args, Values, argument_data, fullgraph_of, keyword_arg, positional
from ..contexts import AutocastContext, AutocastState, ConfigPatch, ConfigState, DualLevelContext, NullContext
from ..events import (
    BackwardThroughCompiled,
    ConfigWrite,
    FunctionalThroughCompiled,
)
from ..frames import Frame
from ..incremental.memo import Memo
from ..stores import compile_target, flag_key
from ..values import (
    DEFAULT_BACKEND,
    PLAIN,
    UNKNOWN_BACKEND,
    UNKNOWN_VALUES,
    Collection,
    Compiled,
    CompiledOutput,
    Compiler,
    ConstVal,
    Data,
    Disabled,
    Disabler,
    External,
    ExternalInstance,
    derived,
    normalize,
    stable_text,
)
from ..walk_records import RequestEntry


def _in_order(origins: Iterable[CompiledOutput]) -> tuple[CompiledOutput, ...]:
    """Compiled outputs by call site and compile site, ties (one generic compile site reached with
    several block classes) by their text: sets iterate in a per-process order, and a finding's
    message and related locations must not depend on which process produced them."""
    return tuple(sorted(origins, key=lambda o: (o.call_site.compared(), o.compiled.site.compared(), stable_text(o))))


def written_argument(arguments: Sequence[ir.Arg], keyword: str, position: int | None) -> ir.Expr | None:
    """The expression passed as ``keyword=`` or, when it has one, in ``position`` (before any star)."""
    for argument in arguments:
        if argument.keyword == keyword:
            return argument.value
    if position is None:
        return None
    for index, argument in enumerate(arguments):
        if argument.keyword is not None:
            return None  # keywords and stars come after the positions
        if index == position:
            return argument.value
    return None


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


def constant_string(values: Values | None) -> str | None:
    strings = {v.value for v in values or () if isinstance(v, ConstVal) and isinstance(v.value, str)}
    return strings.pop() if len(strings) == 1 else None


def symbol_dtype(values: Values) -> str | None:
    names = {api.dtype_name(v.name) for v in values if isinstance(v, External)}
    names |= {api.dtype_name(v.value) for v in values if isinstance(v, ConstVal) and isinstance(v.value, str)}
    return names.pop() if len(names) == 1 else None


def iter_values(args: Args) -> Iterable[object]:
    for _, values in args:
        yield from values


_MISSING = object()


class TorchEffects(Memo):
    def call_external(self, name: str, args: Args, site: Location, frame: Frame) -> Values:
        """A call of a name outside the project: what the knowledge tables say it means (one lookup in
        ``knowledge.calls``), else an external function or class whose result derives from its arguments."""
        meanings = self.calls.get(name, ())
        handled = self.reach.external(name, meanings, args, site, frame)  # wrappers, grad modes, frameworks, ...
        if handled is not None:
            return handled
        for meaning in meanings:
            effect = self._effects.get(meaning.effect)
            if effect is not None:
                return effect(meaning.row, name, args, site, frame)
        if not api.is_torch(name):
            self.escape_arguments(args, site, frame)  # ``wandb.log(aux)``, ``print(out)``: a backward may hide there
        last = name.rsplit(".", 1)[-1]
        if last[:1].isupper() and not last.isupper():
            return frozenset([ExternalInstance(name)])
        return frozenset([argument_data(args)])

    def compile_call(self, row: object, name: str, args: Args, site: Location, frame: Frame) -> Values:
        backend = self.backend_of(args, Effect.COMPILE)
        fullgraph = fullgraph_of(args, api.FULLGRAPH_KEYWORDS[Effect.COMPILE])
        targets = positional(args, 0)
        if targets and frame.ctx.harvest:
            return targets  # a method nothing may call: its compile does not count
        how = CompileHow.CALL if name in api.COMPILE else CompileHow.WRAPPER
        edit = api.BACKEND_EDITS.get(how)
        if targets:
            return frozenset(
                Compiled(
                    compile_target(t), backend, site, name, fullgraph, conditions=frame.conditions, how=how, edit=edit
                )
                for t in targets
            )
        return frozenset([Compiler(backend, site, name, fullgraph, how, edit)])

    def compiler_call(self, row: object, name: str, args: Args, site: Location, frame: Frame) -> Values:
        fullgraph = fullgraph_of(args, api.FULLGRAPH_KEYWORDS[Effect.COMPILER])
        backend = self.backend_of(args, Effect.COMPILER)
        return frozenset(
            [Compiler(backend, site, name, fullgraph, CompileHow.OPTIMIZE, api.BACKEND_EDITS[CompileHow.OPTIMIZE])]
        )

    def partial_call(self, row: object, name: str, args: Args, site: Location, frame: Frame) -> Values:
        first = positional(args, 0)
        if any(isinstance(f, External) and f.name in self.compile_names for f in first):
            backend = self.backend_of(args, Effect.COMPILE)
            fullgraph = fullgraph_of(args, api.FULLGRAPH_KEYWORDS[Effect.COMPILE])
            edit = api.BACKEND_EDITS[CompileHow.PARTIAL]
            return frozenset(
                [Compiler(backend, site, "functools.partial(torch.compile)", fullgraph, CompileHow.PARTIAL, edit)]
            )
        return first or UNKNOWN_VALUES

    def disable_call(self, row: object, name: str, args: Args, site: Location, frame: Frame) -> Values:
        targets = positional(args, 0)
        return frozenset(Disabled(t) for t in targets) if targets else frozenset([Disabler()])

    def backward_call(self, row: api.BackwardFunction, name: str, args: Args, site: Location, frame: Frame) -> Values:
        receivers = positional(args, 0) or keyword_arg(args, row.receiver) or frozenset()
        written = written_text(written_argument(frame.call_args, api.CREATE_GRAPH.name, row.create_graph_position))
        create_graph = create_graph_of(args, row.create_graph_position)
        self.record_backward(
            receivers, site, f"{name}()", frame, create_graph, written, returns_gradients=row.returns_gradients
        )
        return frozenset([PLAIN])

    def functional_call(self, row: api.FunctionalSpec, name: str, args: Args, site: Location, frame: Frame) -> Values:
        self.autograd_functional(name, args, site, frame)
        return frozenset([argument_data(args)])

    def collection_call(self, row: object, name: str, args: Args, site: Location, frame: Frame) -> Values:
        return frozenset(
            [Collection(self.elements(frozenset().union(*(values for _, values in args))) if args else frozenset())]
        )

    def sequential_call(self, row: object, name: str, args: Args, site: Location, frame: Frame) -> Values:
        items = frozenset().union(*(values for keyword, values in args if keyword is None)) if args else frozenset()
        return frozenset([Collection(normalize(items), sequential=True)])

    def torch_effects(self) -> dict[Effect, Callable[[Any, str, Args, Location, Frame], Values]]:
        """The implementation of each torch effect (``knowledge.calls``); the rest are ``Reach``'s."""
        return {
            Effect.COMPILE: self.compile_call,
            Effect.COMPILER: self.compiler_call,
            Effect.PARTIAL: self.partial_call,
            Effect.DISABLE: self.disable_call,
            Effect.DUAL_LEVEL: lambda row, name, args, site, frame: frozenset([DualLevelContext(site)]),
            Effect.MAKE_DUAL: lambda row, name, args, site, frame: frozenset([Data(argument_data(args).origins, True)]),
            Effect.UNPACK_DUAL: lambda row, name, args, site, frame: frozenset(
                [Data(argument_data(args).origins, False)]
            ),
            Effect.AUTOCAST: lambda row, name, args, site, frame: frozenset(
                [AutocastContext(self.autocast_state(name, args, site, frame))]
            ),
            Effect.CONFIG_PATCH: lambda row, name, args, site, frame: frozenset(
                [ConfigPatch(self.config_patch(row, args, site, frame))]
            ),
            Effect.NULL_CONTEXT: lambda row, name, args, site, frame: frozenset([NullContext()]),
            Effect.BACKWARD: self.backward_call,
            Effect.AUTOGRAD_FUNCTIONAL: self.functional_call,
            Effect.COLLECTION: self.collection_call,
            Effect.SEQUENTIAL: self.sequential_call,
        }

    def backend_of(self, args: Args, compile_effect: Effect) -> str:
        """The backend a compile call names (``knowledge.torch_api.BACKEND_ARGUMENTS``)."""
        keyword, positional_index = api.BACKEND_ARGUMENTS[compile_effect]
        values = keyword_arg(args, keyword)
        if values is None and positional_index is not None:
            values = positional(args, positional_index) or None
        if values is None:
            return DEFAULT_BACKEND
        strings = {v.value for v in values if isinstance(v, ConstVal) and isinstance(v.value, str)}
        return strings.pop() if len(strings) == 1 and len(values) == 1 else UNKNOWN_BACKEND

    def autocast_state(self, name: str, args: Args, site: Location, frame: Frame | None = None) -> AutocastState:
        spelling = api.AUTOCAST[name]
        device = spelling.device
        if spelling.device_argument is not None:
            keyword, position = spelling.device_argument
            device = constant_string(positional(args, position) or keyword_arg(args, keyword))
        keyword, position = spelling.dtype_argument
        dtype_values = keyword_arg(args, keyword) or positional(args, position)
        dtype = (
            symbol_dtype(dtype_values)
            if dtype_values
            else (spelling.default_dtype or api.AUTOCAST_DEFAULT_DTYPE.get(device or ""))
        )
        keyword, enabled_position = spelling.enabled_argument
        enabled_values = keyword_arg(args, keyword) or (
            positional(args, enabled_position) if enabled_position is not None else None
        )
        enabled = {v.value for v in enabled_values if isinstance(v, ConstVal)} if enabled_values else {True}
        # ``enabled=<flag>`` (or the flag in its position): on exactly when the flag is; known inside
        # an ``if <flag>:`` arm.
        written = written_argument(frame.call_args if frame else (), keyword, enabled_position)
        known = all(isinstance(v, ConstVal) for v in enabled_values or ()) and len({bool(v) for v in enabled}) <= 1
        condition = flag_key(written) if enabled_values and not known else None
        if condition is not None and frame is not None and condition in frame.assumptions:
            enabled, condition = {frame.assumptions[condition]}, None
        active = enabled != {False}  # "may be autocast" counts as autocast
        return AutocastState(
            active, device, dtype if active else None, site, f"`{name}(...)`", condition if active else None
        )

    def config_patch(self, row: api.ConfigPatch, args: Args, site: Location, frame: Frame) -> ConfigState | None:
        values = keyword_arg(args, row.key)
        first = positional(args, 0)
        if values is None and first:
            if any(isinstance(v, ConstVal) and v.value == row.key for v in first):
                values = positional(args, 1)
            else:
                picked = {
                    v.value.get(row.key, _MISSING)
                    for v in first
                    if isinstance(v, ConstVal) and isinstance(v.value, ir.DictLiteral)
                }
                picked.discard(_MISSING)
                # A dict literal's values are literals themselves (``DictLiteral.get`` is typed loosely).
                values = frozenset(ConstVal(cast(ir.LiteralValue, p)) for p in picked) or None
        if values is None:
            return None
        self.record_config_writes(values, site, "config.patch")
        return self.config_state(values, site, "config.patch")

    def record_config_writes(self, values: Values, site: Location, how: str) -> None:
        """Record every value written to ``backward_pass_autocast``, in any context (walks included
        that record nothing else): a literal that torch rejects is wrong wherever it is written."""
        for value in values:
            literal = isinstance(value, ConstVal)
            self.emit(ConfigWrite(site, how, value.value if literal else None, literal))

    def request_callers(self, frame: Frame) -> None:
        """Ask for the callers of the function this walk started from (they bind its parameters).
        That function is the stack's first, so what a walk below it asks for depends on the entry
        it was walked from (a shared step walked from one script's entry point asks for that
        entry's callers): a summary replays the request for its replay's entry (``RequestEntry``)."""
        if frame.record and frame.stack:
            path, qualname = frame.stack[0]
            self.caller_requests.add((str(path), qualname))
            self.log_effect(RequestEntry())

    def record_backward(
        self,
        receivers: Values,
        site: Location,
        spelling: str,
        frame: Frame,
        create_graph: bool | None = False,
        create_graph_text: str = "",
        ask_callers: bool = True,
        returns_gradients: bool = False,
    ) -> None:
        data = derived(receivers)
        origins = data.origins
        if not origins and data.from_parameter and ask_callers:
            self.request_callers(frame)
        if origins and frame.record:
            ordered = _in_order(self.reach.refine(origins, frame))
            backward_autocast = self.reach.refined_state(frame.ctx.autocast, frame)
            islands = self.islands.of(ordered)
            self.emit(
                BackwardThroughCompiled(
                    site,
                    spelling,
                    backward_autocast,
                    ordered,
                    create_graph,
                    data.elements,
                    islands,
                    self.site_of(frame, site),
                    frame.conditions,
                    create_graph_text if create_graph is None else "",
                    returns_gradients,
                )
            )

    def autograd_functional(self, name: str, args: Args, site: Location, frame: Frame) -> None:
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
        spread = (
            (("*", self.elements(inputs)),) if any(isinstance(v, Collection) for v in inputs) else ((None, inputs),)
        )
        saved = frame.ctx
        frame.ctx = replace(saved, region=None)  # reverse mode: no forward-AD region inside
        try:
            span = ir.Span(site.line, site.column, site.end_line, site.end_column)
            returned = self.call_values(functions, spread, span, frame)
        finally:
            frame.ctx = saved
        origins = derived(returned).origins
        if origins:
            ordered = _in_order(origins)
            self.record(
                FunctionalThroughCompiled(
                    site, name, ordered, second_order, self.site_of(frame, site), frame.conditions, written
                ),
                frame,
            )
