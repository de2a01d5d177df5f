"""Executing statements (assignments, branches, ``with`` blocks, definitions, decorators, in-place
compiles) and evaluating expressions."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from ..core.findings import Condition
from ..core.locations import Location
from ..core.torch_versions import Series
from ..knowledge import torch_api as api
from ..knowledge.effects import Effect
from ..knowledge.torch_api import CompileHow
from ..summary import model as ir
from .analyses.results import indexed_outputs
from .analyses.switches import Switched, stamp_arm, stamped, with_condition
from .arguments import Values, fullgraph_of
from .calls import Calls
from .constants import decided
from .contexts import (
    AutocastContext,
    ConfigPatch,
    ConfigState,
    DualLevelContext,
    ExitStackContext,
    GradMode,
    NullContext,
    active_when,
    one_of,
)
from .effects.autocast import enabled_test
from .effects.compile import backend_of, compiled_classes
from .events import (
    CompiledCallInDualRegion,
    GradReset,
    LeafRead,
)
from .frames import Context, Frame, runs_once
from .stores import compile_target, flag_key
from .values import (
    DEFAULT_BACKEND,
    MAX_POSITIONS,
    UNKNOWN_VALUES,
    ClassVal,
    Collection,
    Compiled,
    Compiler,
    ConstVal,
    Data,
    Disabled,
    Disabler,
    External,
    ExternalInstance,
    FunctionVal,
    Imported,
    Instance,
    OutputElement,
    Value,
    Wrapper,
    compiled_by,
    derived_from_sets,
    normalize,
)


def _carried_over(env: dict[str, Values], arms: Sequence[Sequence[ir.Stmt]]) -> None:
    """A name holding only literals before a loop whose body rebinds it holds, at the body's start,
    whatever the previous iteration left (``step = 0`` ... ``if step > warmup:`` ... ``step += 1``):
    the literal alone would decide the test on the first iteration's value, and skip an arm the
    later ones take."""
    literal = {name for name, values in env.items() if values and all(isinstance(v, ConstVal) for v in values)}
    if not literal:
        return
    for statement in ir.statements_in(s for arm in arms for s in arm):
        if isinstance(statement, ir.Assign):
            for target in statement.targets:
                if isinstance(target, ir.NameTarget) and target.name in literal:
                    env[target.name] = env[target.name] | {Data()}
                    literal.discard(target.name)


def _calls_super(statements: Iterable[ir.Stmt], method: str) -> bool:
    """Whether a method body calls ``super().<method>(...)`` (directly, not in a nested def)."""
    return _calls(
        statements,
        lambda func: (
            isinstance(func, ir.Attr)
            and func.attr == method
            and isinstance(func.base, ir.Call)
            and func.base.func == ir.Ref("super")
        ),
    )


def _calls_itself(function: ir.FunctionSummary) -> bool:
    """Whether a function's body calls it by its name (``r(x, n - 1)``), or a method's through its
    first parameter (``self.r(...)``; not ``loss.backward()`` in a function named ``backward``)."""
    name = function.name
    receiver = function.receiver
    return _calls(
        function.body,
        lambda func: (
            (isinstance(func, ir.Ref) and func.name == name and function.owner_class is None)
            or (
                isinstance(func, ir.Attr)
                and func.attr == name
                and isinstance(func.base, ir.Ref)
                and func.base.name == receiver
            )
        ),
    )


def _calls(statements: Iterable[ir.Stmt], callee: Callable[[ir.Expr], bool]) -> bool:
    """Whether ``statements`` call something ``callee`` accepts (directly, not in a nested def)."""
    pending: list[object] = list(statements)
    while pending:
        node = pending.pop()
        if isinstance(node, ir.Call):
            if callee(node.func):
                return True
            pending.extend([node.func, *(a.value for a in node.args)])
        elif isinstance(node, (ir.Assign, ir.Evaluate, ir.Return)):
            pending.append(getattr(node, "value", None) if not isinstance(node, ir.Evaluate) else node.expr)
        elif isinstance(node, ir.With):
            pending.extend(node.body)
        elif isinstance(node, ir.Branch):
            pending.extend(s for arm in node.arms for s in arm)
        elif isinstance(node, (ir.Attr,)):
            pending.append(node.base)
        elif isinstance(node, (ir.Combine, ir.Elements, ir.Choice)):
            pending.extend(node.options if isinstance(node, ir.Choice) else node.parts)
    return False


def _on_flag(value: object, flag: str) -> object:
    """An active autocast context made on the true option of ``... if <flag> else ...``."""
    if isinstance(value, AutocastContext):
        return AutocastContext(active_when(value.state, flag))
    return value


def entered_through_stacks(values: Values) -> Values:
    """``values`` with each exit stack replaced by the contexts entered into it (stacks in stacks too)."""
    for _ in range(_STACKS_DEEP):
        stacks = [v for v in values if isinstance(v, ExitStackContext)]
        if not stacks:
            return values
        values = values.difference(stacks).union(*(stack.entered for stack in stacks))
    return values


#: Exit stacks entered into exit stacks that are followed (a stack entered into itself ends there).
_STACKS_DEEP = 4


def symbols_in(value: object):
    """The ``Symbol`` names inside a literal."""
    if isinstance(value, ir.Symbol):
        yield value.name
    elif isinstance(value, (tuple, ir.ListLiteral, ir.DictLiteral)):
        for item in value if isinstance(value, tuple) else value.items:
            yield from symbols_in(item)


def dotted_expr(name: str) -> ir.Expr:
    head, *rest = name.split(".")
    expr: ir.Expr = ir.Ref(head)
    for attribute in rest:
        expr = ir.Attr(expr, attribute)
    return expr


class Statements(Calls):
    def exec_block(self, statements: Sequence[ir.Stmt], frame: Frame) -> None:
        conditions = frame.conditions  # ``exec_branch`` may narrow them for the rest of this block
        for statement in statements:
            self.exec_statement(statement, frame)
        frame.conditions = conditions

    def exec_statement(self, statement: ir.Stmt, frame: Frame) -> None:
        span = statement.span if isinstance(statement, (ir.Assign, ir.Evaluate, ir.Return)) else None
        if span is None:
            self._exec_statement(statement, frame)
            return
        saved, frame.statement = frame.statement, (span.line, span.end_line)
        try:
            self._exec_statement(statement, frame)
        finally:
            frame.statement = saved

    def _exec_statement(self, statement: ir.Stmt, frame: Frame) -> None:
        if isinstance(statement, ir.Assign):
            values = self.eval(statement.value, frame)
            for target in statement.targets:
                self.assign(target, values, frame, statement.span)
            self.reach.note_element_binding(statement, frame)
        elif isinstance(statement, ir.Evaluate) and statement.yields:
            self.eval(statement.expr, frame)
            if frame.entry_ctx is not None:
                frame.returns |= self.yielded_contexts(frame)
        elif isinstance(statement, ir.Evaluate):
            if not self.in_place_compile(statement.expr, frame) and not self.reach.in_place_statement(
                statement.expr, frame
            ):
                self.eval(statement.expr, frame)
        elif isinstance(statement, ir.With):
            self.exec_with(statement, frame)
        elif isinstance(statement, ir.Return):
            frame.returns |= self.eval(statement.value, frame) if statement.value is not None else {ConstVal(None)}
        elif isinstance(statement, ir.Branch):
            self.exec_branch(statement, frame)
        elif isinstance(statement, ir.Define) and statement.is_class:
            frame.env[statement.name] = self.define_class(statement, frame)
        elif isinstance(statement, ir.Define):
            frame.env[statement.name] = self.define_function(statement, frame)

    def captured_by(self, frame: Frame) -> tuple[tuple[str, Values], ...]:
        """What a function defined in ``frame`` closes over (nothing at module level), one object
        per distinct closure in this analysis. Closures hold functions with closures of their own;
        each walk of the enclosing code built equal ones anew, and comparing two of them (a memo
        lookup of a call of, or with, a nested function) compared every level, once per path
        through the shared parts: 0.27 s for one lookup in Megatron-LM's
        tests/unit_tests/distributed/mfsdp_v2/test_mcore_adapter.py. Built once each, inner
        closures are the same object and the comparison stops there."""
        if not frame.stack:
            return ()
        closure = tuple(sorted({**frame.closure, **frame.env}.items()))
        return self._captured.setdefault(closure, closure)

    def define_function(self, statement: ir.Define, frame: Frame) -> Values:
        function = FunctionVal(frame.path, statement.qualname, closure=self.captured_by(frame))
        definition = self.index.definition(frame.path, statement.qualname)
        values: Values = frozenset([function])
        if definition is None:
            return values
        if definition.is_property_accessor and statement.name in frame.env:
            return frame.env[statement.name]  # ``@value.setter``: the name still reads the getter
        for decorator in reversed(definition.decorators):
            values = self.apply_decorator(self.eval(decorator, frame), values, frame, definition.span)
        return values

    def define_class(self, statement: ir.Define, frame: Frame) -> Values:
        """The class a ``class`` statement binds; a compile decorator on it (``@torch.compile``)
        makes its instances' calls compiled (``effects.compile.compiled_classes``). Other class
        decorators (``@dataclass``, a registry's ``@register``) leave the class as it is."""
        cls = ClassVal(frame.path, statement.qualname)
        values: Values = frozenset([cls])
        summary = self.class_summary(cls)
        if summary is None:
            return values
        for decorator in reversed(summary.decorators):
            decorators = frozenset(
                v
                for v in self.eval(decorator, frame)
                if isinstance(v, Compiler)
                or (v.name if isinstance(v, External) else self.dotted_name(v)) in self.compile_names
            )
            if decorators:
                values = compiled_classes(self.engine, self.apply_decorator(decorators, values, frame, summary.span))
        return values

    def apply_decorator(self, decorators: Values, wrapped: Values, frame: Frame, span: ir.Span) -> Values:
        site = self.loc(frame.path, span)
        result: set = set()
        for decorator in decorators:
            compiler_name = decorator.name if isinstance(decorator, External) else self.dotted_name(decorator)
            if frame.ctx.harvest and (compiler_name in self.compile_names or isinstance(decorator, Compiler)):
                result |= set(wrapped)
            elif compiler_name in self.compile_names:
                how = CompileHow.DECORATOR if compiler_name in api.COMPILE else CompileHow.WRAPPER
                edit = api.BACKEND_EDITS.get(how)
                result |= {
                    Compiled(
                        v, DEFAULT_BACKEND, site, f"@{compiler_name}", conditions=frame.conditions, how=how, edit=edit
                    )
                    for v in wrapped
                }
            elif isinstance(decorator, Compiler):
                result |= {compiled_by(decorator, v, frame.conditions) for v in wrapped}
            elif isinstance(decorator, Disabler) or (isinstance(decorator, External) and decorator.name in api.DISABLE):
                result |= {Disabled(v) for v in wrapped}
            elif isinstance(decorator, FunctionVal):
                returned = self.call_values(frozenset([decorator]), ((None, wrapped),), span, frame)
                interesting = {v for v in returned if isinstance(v, (Compiled, FunctionVal, Disabled))}
                result |= interesting or set(wrapped)
            elif isinstance(decorator, ClassVal) and self.wraps_calls(decorator):
                # ``@compile_wrap`` a project class with ``__call__`` (k-diffusion's lazy compile):
                # the name holds its instance, and calls of it run its ``__call__``.
                returned = self.call_values(frozenset([decorator]), ((None, wrapped),), span, frame)
                result |= {v for v in returned if isinstance(v, Instance)} or set(wrapped)
            else:
                result |= set(wrapped)
        for made in result:
            if isinstance(made, Compiled):
                self.second_orders.note(made)
        return frozenset(result)

    def chosen(self, expr: ir.Choice, frame: Frame) -> Values:
        """``a if c else b``: the option a known ``c`` picks; on a run-time switch each option's
        compiled values and autocast contexts carry its condition (``model = torch.compile(m) if
        args.compile else m``, ``with autocast() if args.amp else nullcontext():``), as the arms
        of an ``if`` on it would; else both options."""
        assert expr.test is not None
        tests = self.eval(expr.test, frame)
        switched = self.switches.arm_conditions(expr.test, expr.text, tests, frame)
        if switched is None:
            truth = self.known_truth(tests, frame)
            if truth is not None:
                return self.eval(expr.options[0 if truth else 1], frame)
            options = [self.eval(option, frame) for option in expr.options]
            flag = flag_key(expr.test)
            if flag is not None and options:
                # ``torch.autocast(...) if autocast_dtype else nullcontext()`` (pytorch/rl's dreamer):
                # the autocast is on exactly when the flag is, as with ``enabled=<flag>``, so an
                # ``if <flag>:`` / ``else:`` later knows it on or off.
                options[0] = frozenset(_on_flag(value, flag) for value in options[0])
            return normalize(frozenset().union(*options))
        values: set = set()
        before = frame.conditions
        for option, condition in zip(expr.options, switched):
            frame.conditions = with_condition(before, condition)
            try:
                values |= stamped(self.eval(option, frame), condition)
            finally:
                frame.conditions = before
        return normalize(values)

    def known_truth(self, tests: Values, frame: Frame) -> bool | None:
        """What a test nothing can rebind at launch is, when its literals all agree; None when it
        is unknown, or read in a function that calls itself (``calls_itself``)."""
        if not tests or not all(isinstance(t, ConstVal) for t in tests):
            return None
        truths = {bool(t.value) for t in tests}  # type: ignore[union-attr]
        if len(truths) != 1 or self.calls_itself(frame):
            return None
        return truths.pop()

    def calls_itself(self, frame: Frame) -> bool:
        """The function walked calls itself: its branches are not decided by literals. Its recursive
        call is not walked again (the stack cuts it), so ``return f(x) if n == 0 else r(x, n - 1)``
        called with ``n=3`` would never reach ``f``, which the deeper calls run."""
        if not frame.stack:
            return False
        key = frame.stack[-1]
        known = self._self_calling.get(key)
        if known is None:
            function = self.index.function(*key)
            known = self._self_calling[key] = function is not None and _calls_itself(function)
        return known

    def wraps_calls(self, cls: ClassVal) -> bool:
        """Whether an instance of project class ``cls`` stands for the function it decorates: it
        defines ``__call__`` and is no descriptor (one with ``__get__``, a ``cached_property``-like
        decorator of methods, is left as the function it wraps)."""
        return self.find_member(cls, "__call__") is not None and self.find_member(cls, "__get__") is None

    def decided_arms(self, statement: ir.Branch, frame: Frame) -> tuple[tuple[tuple[ir.Stmt, ...], ...], Switched]:
        """The arms ``statement`` may run (a known flag picks one), and the condition each of the
        two arms of ``if <switch>:`` runs under (None when the test reads no switch)."""
        arms, switched = statement.arms, None
        if statement.condition is not None:
            tests = self.eval(statement.condition, frame)
            # A test the user sets at launch may go either way: each arm runs under its condition.
            if len(arms) == 2:
                switched = self.switches.arm_conditions(statement.condition, statement.test, tests, frame)
            truth = self.known_truth(tests, frame) if switched is None else None
            if truth is not None:
                arms = (arms[0] if truth else arms[1],)  # a known flag picks its arm
        elif len(arms) == 2 and not arms[1] and arms[0] and self.reach.always_iterates(arms[0][0]):
            arms = (arms[0],)  # ``for p in model.parameters():`` runs its body
        return arms, switched

    def exec_branch(self, statement: ir.Branch, frame: Frame) -> None:
        arms, switched = self.decided_arms(statement, frame)
        before_env, before_ctx, before_conditions = dict(frame.env), frame.ctx, frame.conditions
        if statement.loop:
            _carried_over(before_env, arms)
        frame.loops += statement.loop
        # ``if <flag>:`` / ``else:``: each arm knows the flag (an ``autocast(enabled=<flag>)`` too).
        flag = flag_key(statement.condition) if statement.condition is not None and len(arms) == 2 else None
        before_assumptions = frame.assumptions
        outcomes = []
        for position, arm in enumerate(arms):
            frame.env.clear()
            frame.env.update(before_env)
            frame.ctx = before_ctx
            if switched is not None:
                frame.conditions = with_condition(before_conditions, switched[position])
            if flag is not None:
                frame.assumptions = {**before_assumptions, flag: position == 0}
            if switched is None:
                self.exec_block(arm, frame)
            else:
                self.start_arm_writes()
                try:
                    self.exec_block(arm, frame)
                finally:
                    self.stamp_arm_writes(frame.conditions)
                # What a callee compiled and returned into this arm exists on this arm only.
                stamp_arm(frame.env, before_env, switched[position])
                frame.conditions = before_conditions
            outcomes.append((dict(frame.env), frame.ctx))
        frame.assumptions = before_assumptions
        frame.loops -= statement.loop
        # Most names keep in every arm what they held before it: that set is kept as it is, not
        # copied into a new one (a trainer's names hold ~60 values each, in composer's tests).
        merged: dict[str, Values] = {}
        for env, _ in outcomes:
            for name, values in env.items():
                known = merged.get(name)
                merged[name] = values if known is None or known is values else known | values
        frame.env.clear()
        frame.env.update({name: normalize(values) for name, values in merged.items()})
        if switched is not None and len(arms) == 2:
            returns = [bool(arm) and isinstance(arm[-1], ir.Return) and arm[-1].value is not None for arm in arms]
            if returns.count(True) == 1:
                # ``if not args.compile: return model``: what follows in this block runs on the other
                # arm only (the walk goes on after a return, so it would otherwise hold on both). A
                # bare ``return`` (``if args.debug_dataset: ...; return`` in a script's ``main``) ends
                # a mode, not a choice of result: naming it would crowd out the switches that matter.
                frame.conditions = with_condition(before_conditions, switched[returns.index(False)])
        frame.ctx = self.arms_context(before_ctx, [ctx for _, ctx in outcomes], statement, switched)

    def arms_context(
        self,
        before: Context,
        contexts: Sequence[Context],
        statement: ir.Branch,
        switched: tuple[Condition, Condition] | None,
    ) -> Context:
        """The context after a branch whose arms left ``contexts``: an autocast or grad mode one arm
        entered for the rest of the block (``stack.enter_context(torch.autocast(...))`` under ``if
        self.autocast_precision is not None:``, OLMo-core) holds on that arm's condition, as
        ``autocast(enabled=<flag>)`` does; a config set on some arms only is not known."""
        if len(set(contexts)) == 1:
            return contexts[0]
        test = enabled_test(statement.condition) if statement.condition is not None else None
        options = []
        for position, ctx in enumerate(contexts):
            state = ctx.autocast
            if state != before.autocast and state.active:
                if switched is not None:
                    state = replace(state, switches=with_condition(state.switches, switched[position]))
                elif position == 0 and test is not None and not before.autocast.active:
                    state = active_when(state, test)
            options.append(state)
        merged = replace(
            before,
            autocast=one_of(options) or before.autocast,
            grad_enabled=any(ctx.grad_enabled for ctx in contexts),  # grad may be on: outputs keep a backward
        )
        if len({ctx.config for ctx in contexts}) > 1:
            merged = replace(merged, config=ConfigState(None, None, "depends on a branch"))
        return merged

    def exec_with(self, statement: ir.With, frame: Frame) -> None:
        saved = frame.ctx
        region_site = Location.point(self.index.display(frame.path), statement.span.line, statement.span.column)
        for item in statement.items:
            values = self.eval(item.context, frame)
            frame.ctx = self.enter_contexts(values, frame.ctx, region_site)
            if item.target is not None:
                self.assign(item.target, values, frame, statement.span)
        start = len(frame.pending)
        self.exec_block(statement.body, frame)
        self.finish_region(frame, region_site, start)
        frame.ctx = replace(
            saved, config=frame.ctx.config if frame.ctx.config.origin.startswith("assignment") else saved.config
        )

    def yielded_contexts(self, frame: Frame) -> Values:
        """What a ``@contextmanager``'s ``yield`` runs under that its caller's ``with`` did not: an
        ``autocast``, a grad mode or a ``config.patch`` the generator entered (OLMo-core's
        ``_model_forward_context``), each carrying the switches of the arms the ``yield`` is in; a
        bare ``yield`` changes nothing (``nullcontext``)."""
        ctx, entry = frame.ctx, frame.entry_ctx
        assert entry is not None
        found: set = set()
        if ctx.autocast != entry.autocast:
            found.add(AutocastContext(ctx.autocast))
        if ctx.grad_enabled != entry.grad_enabled and ctx.grad_enabled is not None:
            found.add(GradMode(ctx.grad_enabled))
        if ctx.config != entry.config:
            found.add(ConfigPatch(ctx.config))
        return stamped(frozenset(found) if found else frozenset([NullContext()]), *frame.conditions)

    def enter_contexts(self, values: Values, ctx: Context, site: Location) -> Context:
        """The context inside ``with <values>:`` (or a function decorated with them); an exit stack
        enters what its ``enter_context`` calls entered (a helper returned it)."""
        values = entered_through_stacks(values)
        if any(isinstance(v, DualLevelContext) for v in values):
            ctx = replace(ctx, region=site)
        autocast = one_of(v.state for v in values if isinstance(v, AutocastContext))
        if autocast is not None:
            ctx = replace(ctx, autocast=autocast)
        modes = {v.enabled for v in values if isinstance(v, GradMode)}
        mode = next(iter(modes)) if len(modes) == 1 else None
        if mode is not None and all(isinstance(v, GradMode) for v in values):
            ctx = replace(ctx, grad_enabled=mode)  # only a certain mode: ``nullcontext() if ...`` may keep grad
        patches = {v.state for v in values if isinstance(v, ConfigPatch) and v.state is not None}
        if len(patches) == 1:
            ctx = replace(ctx, config=patches.pop())
        elif patches:
            ctx = replace(ctx, config=ConfigState(None, None, "one of several config.patch values"))
        return ctx

    def finish_region(self, frame: Frame, region: Location, start: int) -> None:
        """Attribute compiled calls inside ``region`` to the region's own frame as events."""
        keep = frame.pending[:start]
        for pending in frame.pending[start:]:
            if pending.region == region:
                if frame.record:
                    once = runs_once(frame)
                    self.emit(
                        CompiledCallInDualRegion(
                            region,
                            pending.chain,
                            pending.compiled,
                            pending.dual_inputs,
                            once,
                            conditions=pending.conditions,
                        )
                    )
            else:
                keep.append(pending)
        frame.pending[:] = keep

    def assign(self, target: ir.Target, values: Values, frame: Frame, span: ir.Span) -> None:
        if isinstance(target, ir.NameTarget):
            frame.env[target.name] = values
            frame.element_of.pop(target.name, None)
            frame.aliases.pop(target.name, None)
        elif isinstance(target, ir.MultiTarget):
            for position, element in enumerate(target.targets):
                self.assign(element, self.unpacked(values, position, len(target.targets)), frame, span)
        elif isinstance(target, ir.AttrTarget):
            bases = self.eval(target.base, frame)
            if (
                target.attr == api.GRAD.name
                and values
                and all(isinstance(v, ConstVal) and v.value is None for v in values)
            ):
                self.record(GradReset(self.loc(frame.path, span)), frame)
            if any(isinstance(base, Instance) for base in bases):
                self.escape(values, self.loc(frame.path, span), frame)  # ``self.aux = aux``: read back anywhere
            if frame.ctx.region is not None:
                self.dual_params.assigned(bases, values, frame.ctx.region)  # ``model.weight = fwAD.make_dual(...)``
            for base in bases:
                if isinstance(base, External) and (base.name, target.attr) in api.CONFIG_ATTRIBUTES:
                    self.write_config(values, self.loc(frame.path, span), frame, "assignment")
                elif isinstance(base, Instance):
                    self.join_attribute(base.cls, target.attr, values)
            if target.attr == api.FORWARD.name:
                self.replace_forward(target, bases, values, frame, span)
            self.reach.parameter_flag(target, values, frame, span)
        else:
            for part in target.parts:
                self.eval(part, frame)
            if target.parts:  # ``container[key] = value``: the container may now hold ``value``
                container = target.parts[0]
                self.reach.store_element(container, values, frame, span)
                if isinstance(container, ir.Ref) and container.name in frame.aliases:
                    # ``blocks = model.layers; blocks[i] = torch.compile(blocks[i])``: the holder too.
                    self.reach.store_element(frame.aliases[container.name], values, frame, span)

    def replace_forward(
        self, target: ir.AttrTarget, bases: Values, values: Values, frame: Frame, span: ir.Span
    ) -> None:
        """``model.forward = torch.compile(model.forward)``: calls of ``model`` run the compiled forward.

        On a project module the instance attribute does it (``call_one``); a module of unknown type
        (``AutoModel.from_pretrained(...)``) is rebound to a compiled callable."""
        compiled = [v for v in values if isinstance(v, Compiled)]
        holder = self.reach_target(target.base)
        if not compiled or holder is None:
            return
        others = frozenset(b for b in bases if not isinstance(b, Instance))
        if others:
            first = compiled[0]
            rebound = frozenset(
                Compiled(
                    None if isinstance(b, Data) else b,
                    first.backend,
                    first.site,
                    f"{first.spelling} (replaces .forward)",
                    first.fullgraph,
                    conditions=first.conditions,
                    how=first.how,
                    # The fix edits ``torch.compile(model.forward)`` only.
                    edit=first.edit if first.how is CompileHow.CALL else None,
                )
                for b in others
            )
            self.assign(holder, rebound | frozenset(b for b in bases if isinstance(b, Instance)), frame, span)

    @staticmethod
    def reach_target(expr: ir.Expr) -> ir.Target | None:
        if isinstance(expr, ir.Ref):
            return ir.NameTarget(expr.name)
        if isinstance(expr, ir.Attr):
            return ir.AttrTarget(expr.base, expr.attr)
        return None

    def unpacked(self, values: Values, position: int, count: int) -> Values:
        """What ``a, b = <values>`` binds to target ``position``: element ``position`` of a compiled
        call's result when it is a tuple of ``count`` outputs, else (over-approximated) the whole."""
        result: set[Value] = set()
        for value in values:
            if isinstance(value, Collection) and not value.sequential:
                # ``encoder, predictor = build()``: each name gets its element; unknown order: any element.
                result |= (
                    value.positions[position] if len(value.positions) == count else (value.elements() or UNKNOWN_VALUES)
                )
                continue
            if isinstance(value, ConstVal) and isinstance(value.value, tuple) and len(value.value) == count:
                result.add(ConstVal(value.value[position]))
                continue
            if isinstance(value, Data) and value.exact:
                elements = set(value.elements)
                for site in value.exact:
                    if self._result_sizes.get(site) == {count}:
                        elements.discard(OutputElement(site))
                        elements.add(OutputElement(site, position))
                value = replace(value, elements=frozenset(elements), exact=frozenset())
            result.add(value)
        return normalize(result)

    def in_place_compile(self, expr: ir.Expr, frame: Frame) -> bool:
        """``model.compile(...)`` (``nn.Module.compile``) rebinds ``model`` to a compiled module. An
        element or attribute compiled in place (``for block in model.blocks: block.compile()``,
        ``getattr(model, name).compile()``) changes what holds it too. The methods are
        ``knowledge.torch_api.IN_PLACE_COMPILE_METHODS``."""
        if not (
            isinstance(expr, ir.Call)
            and isinstance(expr.func, ir.Attr)
            and expr.func.attr in api.IN_PLACE_COMPILE_METHODS
        ):
            return False
        method = expr.func.attr
        receiver = expr.func.base
        if frame.ctx.harvest:
            return True  # ``model.compile()`` in a method walked only for its stores: it may never run
        is_getattr = (
            isinstance(receiver, ir.Call) and isinstance(receiver.func, ir.Ref) and receiver.func.name == "getattr"
        )
        if not (isinstance(receiver, (ir.Ref, ir.Attr, ir.Item)) or is_getattr):
            return False
        current = self.eval(receiver, frame)
        overrides = self.compile_overrides(current, method)
        if overrides is None:
            return False  # a project ``compile`` that never reaches ``nn.Module.compile``: an ordinary call
        compiled_on = {v: self.compiled_in_place_on(v, method) for v in current if v not in overrides}
        # ``for m in self.modules(): m.compile()`` meets modules that compile nothing on the target
        # (built-in layers before 2.14): they stay eager, the others compile.
        current = frozenset(v for v in current if v in overrides or compiled_on[v] != ()) or current
        if not current or not all(v in overrides or compiled_on[v] != () for v in current):
            return False
        args = self.eval_args(expr.args, frame)
        if overrides:  # the override's own body runs too
            self.call_values(self.attribute(frozenset(overrides), method), args, expr.span, frame, expr.func)
        backend = backend_of(args, Effect.COMPILE, self.engine)
        fullgraph = fullgraph_of(args, api.FULLGRAPH_KEYWORDS[Effect.COMPILE])
        site = self.loc(frame.path, expr.span)
        compiled = frozenset(
            Compiled(
                compile_target(v),
                backend,
                site,
                overrides.get(v, f"nn.Module.{method}()"),
                fullgraph,
                compiled_on.get(v),
                conditions=frame.conditions,
                how=CompileHow.IN_PLACE_OVERRIDE if v in overrides else CompileHow.IN_PLACE,
                edit=None if v in overrides else api.BACKEND_EDITS[CompileHow.IN_PLACE],
            )
            for v in current
        )
        self.reach.in_place_elsewhere(receiver, compiled, frame, expr.span)
        walked = self.index.function(*frame.stack[-1]) if frame.stack else None
        if isinstance(receiver, ir.Ref) and walked is not None and walked.receiver == receiver.name:
            # ``self.compile()`` in the module's own method (OLMo-core's ``apply_compile``): its calls
            # run compiled from now on, as a ``forward`` replaced on it does (in every instance of
            # the class: attributes are kept per class).
            instances = frozenset(v for v in current if isinstance(v, Instance))
            own = frozenset(c for c in compiled if c.target in instances)
            if own:
                self.reach.set_attribute(instances, frozenset([ConstVal(api.FORWARD.name)]), own)
        target = self.reach_target(receiver)
        if target is not None:
            self.assign(target, compiled, frame, expr.span)
        return True

    def compile_overrides(self, values: Values, method: str) -> dict[object, str] | None:
        """Instances whose class overrides ``compile`` and calls ``super().compile()`` in it, with how
        to name the call (``TrainingTask.compile()``); None when an override never calls it."""
        found: dict[object, str] = {}
        for value in values:
            if not isinstance(value, Instance):
                continue
            members = self.find_member(value.cls, method)
            if members is None:
                continue
            functions = [m for m in members if isinstance(m, FunctionVal)]
            summaries = [self.index.function(f.path, f.qualname) for f in functions]
            if not summaries or not all(s is not None and _calls_super(s.body, method) for s in summaries):
                return None
            owner = functions[0].qualname.rsplit(".", 1)[0]
            found[value] = (
                f"{owner.rsplit('.', 1)[-1]}.{method}() (overrides nn.Module.{method}, calls super().{method}())"
            )
        return found

    def compiled_in_place_on(self, value: object, method: str) -> tuple[Series, ...] | None:
        """On which of the target's series ``value.<method>()`` (an in-place compile) compiles
        anything: None on every one, ``()`` on none.

        Project modules, containers holding one, and values of unknown type are compiled on every
        version; a module torch.nn defines (``nn.Linear(...).compile()``, an ``nn.Sequential`` of
        them) only where ``knowledge.behaviour.IN_PLACE_COMPILE_ROWS`` says Dynamo traces torch.nn's
        own frames.
        """
        if isinstance(value, Instance):
            return None if self.find_member(value.cls, method) is None and self.is_module_class(value.cls) else ()
        if isinstance(value, Data):
            return None
        if isinstance(value, ExternalInstance):
            return self.torch_nn_compiled_on if api.is_torch_nn(value.cls) else ()
        if isinstance(value, Collection) and value.sequential:
            items = [self.compiled_in_place_on(item, method) for item in value.items]
        elif isinstance(value, Wrapper):
            items = [self.compiled_in_place_on(item, method) for item in value.inner]
        else:
            return ()
        if any(on is None for on in items):
            return None
        return tuple(sorted({series for on in items if on is not None for series in on}))

    def eval(self, expr: ir.Expr, frame: Frame) -> Values:
        if isinstance(expr, ir.Ref):
            return self.lookup(expr.name, frame)
        if isinstance(expr, ir.Import):
            return frozenset([Imported(expr.name, frame.path)])
        if isinstance(expr, ir.Attr):
            return self.properties_read(self.attribute(self.eval(expr.base, frame), expr.attr), frame)
        if isinstance(expr, ir.Call):
            return self.eval_call(expr, frame)
        if isinstance(expr, ir.Const):
            literal = self.literals.get(id(expr))
            if literal is None or literal[0] is not expr:
                names = tuple(symbols_in(expr.value))
                literal = self.literals[id(expr)] = (expr, names, None if names else frozenset([ConstVal(expr.value)]))
            _, names, constant = literal
            if constant is not None:
                return constant
            # ``[self.loss]`` or ``{"dtype": torch.bfloat16}``: keep the literal and what its names hold.
            held = frozenset().union(*(self.eval(dotted_expr(name), frame) for name in names))
            return frozenset([ConstVal(expr.value), Collection(held)])
        if isinstance(expr, ir.Choice):
            if expr.test is not None:
                return self.chosen(expr, frame)
            return normalize(frozenset().union(*(self.eval(option, frame) for option in expr.options)))
        if isinstance(expr, ir.Elements):
            parts = tuple(self.eval(p, frame) for p in expr.parts)
            # Positions for flat, short displays only (``return model, optimizer``): nested ones
            # would hold every element twice per level.
            flat = len(parts) <= MAX_POSITIONS and not any(
                isinstance(v, Collection) and v.positions for part in parts for v in part
            )
            return frozenset([Collection(normalize(frozenset().union(*parts)), positions=parts if flat else ())])
        if isinstance(expr, ir.Item):
            bases = self.eval(expr.base, frame)
            if expr.index is not None and self._result_sizes:  # ``out[1]``, ``out["aux"]`` of a compiled call
                indexed = indexed_outputs(bases, expr.index, self._result_sizes, self._result_keys)
                if indexed is not None:
                    return indexed
            return self.reach.container_elements(expr.base, bases, frame, expr.index)
        if isinstance(expr, ir.Combine):
            operands = [self.eval(part, frame) for part in expr.parts]
            if expr.op:  # ``optimizer_idx == 0`` with a literal bound: known
                known = decided(expr.op, operands)
                if known is not None:
                    return known
            return frozenset([derived_from_sets(operands)])
        if isinstance(expr, ir.FunctionRef):
            return frozenset([FunctionVal(frame.path, expr.qualname, closure=self.captured_by(frame))])
        return UNKNOWN_VALUES

    def note_leaf_reads(self, bases: Values, name: str, frame: Frame) -> None:
        """``model.aux_head(...)`` outside the module's own methods (CAL005: another path to that leaf)."""
        for base in bases:
            target = base.target if isinstance(base, Compiled) else base
            if isinstance(target, Instance) and self.find_member(target.cls, name) is None:
                for klass in self.mro(target.cls):
                    if isinstance(klass, ClassVal):
                        self.record(LeafRead(f"{klass.path}:{klass.qualname}.{name}"), frame)
