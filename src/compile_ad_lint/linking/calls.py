"""Call dispatch: evaluating a call's arguments, choosing what each callee does (project functions,
classes, compiled callables, torch and framework effects) and walking project functions with
their bound arguments and entry contexts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..core.locations import Location
from ..knowledge import containers
from ..knowledge import switches as settings
from ..knowledge import torch_api as api
from ..summary import model as ir
from .analyses.switches import stamped
from .arguments import Args, Values, argument_data, argument_values, keyword_arg, positional, written_argument
from .cancellation import AnalysisCancelled
from .contexts import ENTERED_CONTEXTS, AutocastContext, ConfigPatch, DualLevelContext, ExitStackContext, GradMode
from .effects.autograd import create_graph_of, written_text
from .effects.compile import compiled_classes
from .effects.registry import FRAMEWORK_METHODS
from .events import (
    CompiledCallPlain,
    CompiledResult,
    Hop,
)
from .external_calls import ExternalCalls
from .frames import Context, Decorated, Frame, PendingCall, runs_once
from .incremental import ResultKeys, ResultSize, each_version
from .stores import compile_target
from .values import (
    MAX_POSITIONS,
    PARAMETER,
    PLAIN,
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
    FrameworkCall,
    FunctionVal,
    Instance,
    OnSwitch,
    OutputElement,
    Settings,
    Value,
    Wrapper,
    compiled_by,
    compiled_output,
    derived,
    in_stable_order,
    normalize,
)

_NONE_SET = frozenset([ConstVal(None)])


#: Tensor methods a call of which is handled before attribute lookup: the backward, and those whose
#: result carries no history.
_TENSOR_METHODS = frozenset({api.TENSOR_BACKWARD.name, *api.DETACHING_METHODS})


#: Methods whose receiver decides what they do (``Reach.receiver_method``).
_RECEIVER_METHODS = frozenset(
    {
        *api.MODULE_RETURNING_METHODS,
        *api.MODULE_CHILDREN_METHODS,
        *api.MODULE_PARAMETER_METHODS,
        *containers.CONTAINER_ELEMENT_METHODS,
        *api.MODULE_REGISTRATION_METHODS,
        *settings.SELF_RETURNING_BY_NAME,
    }
)


#: What a call walks the project's code for: literals read from a switch are passed on marked.
_PROJECT_CALLABLES = (FunctionVal, ClassVal, Instance)


def describe_callee(func: ir.Expr | None) -> str:
    if isinstance(func, ir.Ref):
        return ir.written_name(func.name)
    if isinstance(func, ir.Attr):
        return f"{describe_callee(func.base)}.{func.attr}"
    if isinstance(func, ir.Call):
        return f"{describe_callee(func.func)}(...)"
    return "<expression>"


class Calls(ExternalCalls):
    def eval_args(self, args: Sequence[ir.Arg], frame: Frame) -> Args:
        return tuple((arg.keyword, self.engine.eval(arg.value, frame)) for arg in args)

    def eval_call(self, call: ir.Call, frame: Frame) -> Values:
        if isinstance(call.func, ir.Attr) and call.func.attr in _TENSOR_METHODS:
            # ``None.backward()`` would raise: a path where the receiver is None (``loss = None``
            # when no targets are given) is not the one that runs it.
            evaluated = self.engine.eval(call.func.base, frame)
            # Nor is a tuple or list's: ``return pred, cond`` on one path, ``return pred`` on the one
            # whose result is differentiated (ostris/ai-toolkit's ``predict_noise``).
            receivers = frozenset(r for r in evaluated - _NONE_SET if not isinstance(r, Collection))
            if receivers and all(isinstance(r, Data) for r in receivers):
                args = self.eval_args(call.args, frame)
                if call.func.attr == api.TENSOR_BACKWARD.name:
                    position = api.TENSOR_BACKWARD.create_graph_position
                    create_graph = create_graph_of(args, position)
                    self.record_backward(
                        receivers,
                        self.loc(frame.path, call.span),
                        "Tensor.backward()",
                        frame,
                        create_graph,
                        written_text(written_argument(call.args, api.CREATE_GRAPH.name, position)),
                        # An optional loss (None on another path) did not ask for the callers before
                        # it was followed: asking now walked pytorch-image-models' five ``main``
                        # scripts again (2.3x walks) for no finding.
                        ask_callers=len(receivers) == len(evaluated),
                    )
                    return frozenset([ConstVal(None)])
                return frozenset([PLAIN])  # detached: no history, no tangent
        if isinstance(call.func, ir.Attr) and call.func.attr in _RECEIVER_METHODS:
            return self.reach.receiver_method(call, frame)  # ``.cuda()``, ``.children()``, ``.get()``, ...
        if isinstance(call.func, ir.Attr) and call.func.attr == containers.CONTAINER_UPDATE:
            updated = self.reach.container_update(call, frame)  # ``self.transformer.update({...})``
            if updated is not None:
                return updated
        if isinstance(call.func, ir.Attr) and call.func.attr in containers.CONTAINER_STORE_METHODS:
            stored = self.reach.container_store(call, frame)  # ``residuals.append(h)``
            if stored is not None:
                return stored
        if isinstance(call.func, ir.Attr) and call.func.attr == api.EXIT_STACK_ENTER.name:
            entered = self.enter_into_stack(call, call.func, frame)  # ``stack.enter_context(torch.autocast(...))``
            if entered is not None:
                return entered
        if frame.ctx.region is not None and isinstance(call.func, ir.Attr) and call.func.attr == api.COPY_IN_PLACE.name:
            self.dual_params.copy_into(call, frame)  # ``p.copy_(fwAD.make_dual(p, t))`` on a module's parameter
        if isinstance(call.func, ir.Attr):
            bases = self.engine.eval(call.func.base, frame)
            if frame.record and not (isinstance(call.func.base, ir.Ref) and call.func.base.name == "self"):
                self.engine.note_leaf_reads(bases, call.func.attr, frame)
            callees = self.properties_read(self.attribute(bases, call.func.attr), frame)
        else:
            callees = self.engine.eval(call.func, frame)
        args = self.eval_args(call.args, frame)
        if any(isinstance(callee, _PROJECT_CALLABLES) for callee in callees):
            args = self.switches.passed_on(call.args, args, frame)
        saved, frame.call_args = frame.call_args, call.args
        try:
            return self.call_values(callees, args, call.span, frame, call.func)
        finally:
            frame.call_args = saved

    def enter_into_stack(self, call: ir.Call, func: ir.Attr, frame: Frame) -> Values | None:
        """``stack.enter_context(cm)`` on a ``contextlib.ExitStack``: ``cm`` is entered at once and
        stays entered until the stack's ``with`` ends (``exec_with`` restores the context there; in an
        arm, ``exec_branch`` keeps it on that arm's condition). A stack named by a local name also
        carries what it entered, for a caller's ``with`` when it is returned. None when the receiver
        is not known to be a stack (any other ``enter_context`` method is an ordinary call)."""
        bases = self.engine.eval(func.base, frame)
        stacks = [base for base in bases if isinstance(base, ExitStackContext)]
        if not stacks:
            return None
        args = self.eval_args(call.args, frame)
        entered = positional(args, 0) or keyword_arg(args, "cm")
        if not entered:
            return UNKNOWN_VALUES
        frame.ctx = self.engine.enter_contexts(entered, frame.ctx, self.loc(frame.path, call.span))
        contexts = frozenset(v for v in entered if isinstance(v, ENTERED_CONTEXTS))
        if contexts and isinstance(func.base, ir.Ref) and func.base.name in frame.env:
            contexts = stamped(contexts, *frame.conditions)  # entered on the arms of the switches around it only
            carried = {replace(stack, entered=stack.entered | contexts) for stack in stacks}
            frame.env[func.base.name] = normalize(bases.difference(stacks).union(carried))
        return entered

    def properties_read(self, values: Values, frame: Frame) -> Values:
        """``values`` (an attribute read) with each property of an instance replaced by what its
        getter returns: ``self.model`` where ``model`` is a ``@property`` holds the getter's result,
        not the method (``self.model(x)`` calls that result)."""
        getters: dict[FunctionVal, ir.Span] = {}
        for value in values:
            if isinstance(value, FunctionVal) and value.bound_self is not None:
                definition = self.index.definition(value.path, value.qualname)
                if definition is not None and definition.is_property:
                    getters[value] = definition.span
        if not getters:
            return values
        result = set(values).difference(getters)
        for getter, span in getters.items():
            result |= self.call_values(frozenset([getter]), (), span, frame)
        return normalize(result) if result else UNKNOWN_VALUES

    def call_values(
        self, callees: Values, args: Args, span: ir.Span, frame: Frame, func: ir.Expr | None = None
    ) -> Values:
        result: set = set()
        # One call reaches the same callees again through what it calls (a DDP wrapper around an
        # FSDP wrapper around modules whose replaced forwards are those wrappers, each holding
        # every model a trainer may hold): each is called once per arguments and context, or the
        # nesting multiplies (composer's callback tests called one tokenizer 65,000 times).
        known = frame.callee_results
        outermost = known is None and len(callees) > 1  # one callee, nothing called yet: nothing to share
        if outermost:
            known = frame.callee_results = {}
        running = frozenset(self._replaced_forwards_running) if self._replaced_forwards_running else None
        same_call = known.setdefault((args, span, frame.ctx, running), {}) if known is not None else {}
        try:
            # A fixed order makes events reproducible in every process.
            for callee in in_stable_order(callees):
                found = same_call.get(callee)
                if found is None:
                    found = same_call[callee] = self.call_one(callee, args, span, frame, func)
                result |= found
        finally:
            if outermost:
                frame.callee_results = None
        return normalize(result) if result else UNKNOWN_VALUES

    def call_one(self, callee: object, args: Args, span: ir.Span, frame: Frame, func: ir.Expr | None) -> Values:
        site = self.loc(frame.path, span)
        if isinstance(callee, External):
            return self.call_external(callee.name, args, site, frame)
        if isinstance(callee, OnSwitch):
            # ``autocast = torch.cuda.amp.autocast if use_fp16 else nullcontext``: the context (or
            # compiled value) made exists on those arms only.
            return stamped(self.call_one(callee.callable, args, span, frame, func), *callee.conditions)
        if isinstance(callee, Compiled):
            return self.call_compiled(callee, args, site, frame, func)
        if isinstance(callee, Compiler):
            if frame.ctx.harvest:
                return positional(args, 0) or UNKNOWN_VALUES
            compiled = frozenset(compiled_by(callee, compile_target(v), frame.conditions) for v in positional(args, 0))
            for made in compiled:
                self.second_orders.note(made)
            return compiled_classes(self.engine, compiled)  # ``torch.compile(backend=...)(Net)``
        if isinstance(callee, Settings):
            return frozenset([callee])  # ``cfg.get("compile")``, ``args.model.lower()``
        if isinstance(callee, Disabler):
            return frozenset(Disabled(v) for v in positional(args, 0))
        wrapper = self.dotted_name(callee)
        if wrapper is not None and wrapper in self.compile_names:
            return self.call_external(wrapper, args, site, frame)  # a configured compile wrapper
        if isinstance(callee, FunctionVal):
            name = describe_callee(func)
            hop = Hop(site, name, f"calls `{name}` ({callee.qualname})", self.site_of(frame, site))
            return self.call_function(callee, args, frame, hop)
        if isinstance(callee, ClassVal):
            instance = Instance(callee)
            initializer = self.find_member(callee, "__init__")
            if initializer is not None:  # binds constructor arguments stored on ``self``
                self.call_values(self.bind_methods(initializer, instance), args, span, frame, func)
            elif self.reach.keyword_fields(callee):  # a dataclass stores its fields
                self.reach.construct_fields(callee, args)
            return frozenset([instance])
        if isinstance(callee, Instance):
            method = self.find_member(callee.cls, "__call__")
            module = self.is_module_class(callee.cls)
            if method is None and module:
                method = self.find_member(callee.cls, api.FORWARD.name)
                replaced = self.reach.instance_forward(callee)  # ``self.forward = torch.compile(self.forward)``
                running = self._replaced_forwards_running
                fresh = replaced - running
                if len(fresh) < len(replaced):
                    # A replacement that is already being called reaches this module again: it wraps
                    # the module itself (``m.forward = ctx(m.forward)`` stored on a wrapper of ``m``),
                    # or modules that share one attribute got each other's replacements. The call
                    # in progress explores it; in here the module runs its own ``forward`` and the
                    # replacements not yet followed. composer's trainer recursed to the frame limit
                    # (CAL900), then followed every order of its test models' shared replacements.
                    self._depends_on_walk(None)
                if fresh:
                    callees = (self.bind_methods(method, callee) if method is not None else frozenset()) | fresh
                    running.update(fresh)
                    try:
                        return self.reach.graded(self.call_values(callees, args, span, frame, func), frame)
                    finally:
                        running.difference_update(fresh)
            if method is not None:
                results = self.call_values(self.bind_methods(method, callee), args, span, frame, func)
                return self.reach.graded(results, frame, requires_grad=module)
        if isinstance(callee, Wrapper):
            return self.reach.call_wrapper(callee, args, span, frame, func)
        if isinstance(callee, FrameworkCall):
            return FRAMEWORK_METHODS[callee.method.effect](self.engine, callee, args, site, span, frame)
        if isinstance(callee, Collection):
            if callee.sequential:
                return self.call_values(callee.items, args, span, frame, func)
            if isinstance(func, ir.Attr) and not containers.own_attribute(func.attr):
                # An ``nn.ModuleDict``'s item by name that is a list or dict of modules: calling it
                # raises, so this is not the item the code calls (``self.transformer.ln_f(x)``).
                return frozenset()
            self.escape_arguments(args, site, frame)  # ``outputs.append(aux)``
            return frozenset([callee])
        if isinstance(callee, Disabled) and callee.target is not None:
            # Dynamo skips the function itself, but compiled callables it calls still run compiled
            # (facts/double_backward_and_unused_outputs.py: disable around a compiled callable).
            return self.call_values(frozenset([callee.target]), args, span, frame, func)
        if isinstance(callee, Data) and callee.from_parameter and frame.ctx.region is not None:
            self.request_callers(frame)
        if not (isinstance(callee, ExternalInstance) and api.is_torch(callee.cls)):
            self.escape_arguments(args, site, frame)  # an unknown callable may run a backward
        # Unknown callables (tensor methods among them) yield data derived from the callee and arguments.
        result = frozenset([derived([callee, argument_data(args)])])
        if isinstance(callee, ExternalInstance) and callee.cls in api.PARAMETERIZED_MODULES:
            return self.reach.graded(result, frame)  # ``nn.Linear(...)(x)`` requires grad
        return self.reach.graded(result, frame, requires_grad=False)

    def call_compiled(
        self, compiled: Compiled, args: Args, site: Location, frame: Frame, func: ir.Expr | None
    ) -> Values:
        dual = argument_data(args).dual
        if frame.record:
            self.second_orders.note(compiled, called=True)
        if frame.ctx.region is None or not dual:  # torch >= 2.14: a later dual call reuses the graph traced here
            self.record(CompiledCallPlain(compiled, site, runs_once(frame)), frame)
        if frame.ctx.region is not None:
            dual = dual or self.dual_params.holds(compiled, frame.ctx.region)  # ``setattr(model, n, make_dual(p, t))``
            name = describe_callee(func)
            frame.pending.append(
                PendingCall(
                    frame.ctx.region,
                    (Hop(site, name, f"calls compiled `{name}`", self.site_of(frame, site)),),
                    compiled,
                    dual,
                    frame.conditions,
                )
            )
        inputs = argument_data(args)
        self._units += len(inputs.elements) + len(inputs.origins)
        output = compiled_output(
            site, compiled, frame.ctx.autocast, frame.ctx.config, self.site_of(frame, site), frame.conditions
        )
        keeps_tangent = compiled.backend in self.tangent_safe
        structure = self.results.structure(compiled, args, site)
        if structure is not None:
            self._result_sizes.setdefault(site, set()).add(len(structure))
            self.log_effect(ResultSize(site, len(structure)))
            keys = tuple(element.key for element in structure)
            if all(isinstance(key, str) for key in keys):
                self._result_keys.setdefault(site, set()).add(keys)
                self.log_effect(ResultKeys(site, keys))
            self.record(CompiledResult(site, compiled, structure), frame)
        elements = inputs.elements | {OutputElement(site)}
        result = frozenset(
            [Data(inputs.origins | {output}, dual and keeps_tangent, elements=elements, exact=frozenset([site]))]
        )
        return self.reach.compiled_output(
            compiled, result, inputs, frame, tuple(argument_values(args))
        )  # none under no_grad, or frozen

    def call_function(self, function: FunctionVal, args: Args, frame: Frame, hop: Hop | None) -> Values:
        summary = self.index.callee(function.path, function.qualname)
        fallback = frozenset([argument_data(args)])
        if (
            summary is None
            or (function.path, function.qualname) in frame.stack
            or len(frame.stack) >= self.config.max_call_depth + 1
        ):
            if summary is not None and (function.path, function.qualname) in frame.stack:
                self._depends_on_stack((function.path, function.qualname), frame.stack)
            else:
                self.escape_arguments(args, self._call_site(function, hop), frame)
            return fallback
        bound = self.bind(function, summary, args, called=hop is not None)
        memo_key = (function, bound, frame.ctx, frame.record)
        cached = self._memo.get(memo_key)
        fresh = cached is None or not self.still_valid(cached.reads)
        if fresh and self.walks_spent:
            self.stopped_walking = True  # the root's analysis says it is incomplete
            self._depends_on_walk(None)
            self.escape_arguments(args, self._call_site(function, hop), frame)
            return fallback
        if cached is None or fresh:
            cached = self._walk_or_replay(memo_key, function, summary, bound, frame, fallback)
        elif cached.requests:
            # The walk, reused from another entry point, asked for that entry's callers: this
            # entry's callers bind what it depends on too (open_lm's ``backward(loss, scaler)``
            # helper, walked first as an entry of its own, then from ``train_one_epoch``). Not
            # logged: the call itself is (``_note_call``), and replaying it asks again only if the
            # callee's outcome then does (a request logged here was replayed where it did not).
            self.request_callers(frame, log=False)
        if self._recordings:
            self._note_call(memo_key, frame.stack, fallback, cached, fresh)
        if cached.reads:  # the caller's result depends on what this walk read
            self.depend_on_reads(each_version(cached.reads))
        returns, pending = cached.returns, cached.pending
        if frame.record and hop is not None:
            frame.pending.extend(p.through(hop) for p in pending)
        return returns

    def walk_function(
        self, function: FunctionVal, summary: ir.FunctionSummary, bound: tuple, caller: Frame
    ) -> tuple[Values, tuple[PendingCall, ...]]:
        if self.cancelled is not None and self.cancelled():
            raise AnalysisCancelled(function.qualname)
        ctx = caller.ctx
        regions = []
        for values, site in self.entry_contexts(function, summary):
            ctx = self.engine.enter_contexts(values, ctx, site)
            if ctx.region == site:
                regions.append(site)
        frame = Frame(
            function.path,
            dict(bound),
            ctx,
            record=caller.record,
            stack=(*caller.stack, (function.path, function.qualname)),
            closure=dict(function.closure),
            function_lines=summary.lines,
            star=summary.star,
        )
        if self.context_manager(function, summary):
            frame.entry_ctx = ctx
        self.engine.exec_block(summary.body, frame)
        for region in regions:
            self.engine.finish_region(frame, region, 0)
        returns = normalize(frame.returns) if frame.returns else frozenset([ConstVal(None)])
        if not caller.stack:  # returned to callers the analysis may not see
            self.escape(returns, self.loc(function.path, summary.span), frame)
        return returns, tuple(frame.pending)

    def entry_contexts(self, function: FunctionVal, summary: ir.FunctionSummary) -> list[tuple[Values, Location]]:
        """Context managers used as decorators (``@dual_level()``, ``@torch.autocast(...)``, ``@config.patch``)."""
        return self.decorated(function, summary).contexts

    def context_manager(self, function: FunctionVal, summary: ir.FunctionSummary) -> bool:
        """Whether the function is a ``@contextlib.contextmanager`` generator: calling it gives the
        contexts its ``yield`` runs under (``Statements.yielded_contexts``)."""
        return bool(summary.decorators) and self.decorated(function, summary).context_manager

    def decorated(self, function: FunctionVal, summary: ir.FunctionSummary) -> Decorated:
        """What the function's decorators make of it, its decorators evaluated once per function."""
        key = replace(function, bound_self=None, closure=())
        if not self._recordings and key in self._decorated:
            return self._decorated[key]

        def evaluate() -> Decorated:
            frame = Frame(function.path, {}, Context(), record=False)
            contexts = []
            context_manager = False
            for decorator in summary.decorators:
                values = self.engine.eval(decorator, frame)
                context_manager |= any(
                    isinstance(v, External) and v.name in api.CONTEXT_MANAGER_DECORATORS for v in values
                )
                # ``@torch.no_grad`` without parentheses works too.
                values = frozenset(
                    GradMode(api.GRAD_MODES[v.name]) if isinstance(v, External) and v.name in api.GRAD_MODES else v
                    for v in values
                )
                if any(isinstance(v, (DualLevelContext, AutocastContext, ConfigPatch, GradMode)) for v in values):
                    contexts.append((values, self.loc(function.path, summary.span)))
            return Decorated(contexts, context_manager)

        return self.cached(self._decorated, key, evaluate)

    def bind(self, function: FunctionVal, summary: ir.FunctionSummary, args: Args, called: bool = True) -> tuple:
        """The walk's parameters: what ``args`` bind, a literal default where a call omits one (not
        for an entry point, a harvest or a closure walked without a caller: ``called`` False), and
        an unknown parameter (or a command-line framework's settings) for the rest."""
        params = list(summary.params)
        env: dict[str, set] = {}
        if function.bound_self is not None and params and not params[0].startswith("*"):
            env[params.pop(0)] = {function.bound_self}
        positional_params = [p for p in params if not p.startswith("*") and p not in summary.keyword_only]
        keyword_params = [p for p in params if not p.startswith("*")]
        star = summary.star
        double_star = next((p[2:] for p in params if p.startswith("**")), None)
        index = 0
        extra: list[Values] = []  # the positional arguments ``*args`` holds, in order
        spread: set = set()  # the tuples spread into ``*args`` whole
        for keyword, values in args:
            if keyword is None:
                if index < len(positional_params):
                    env.setdefault(positional_params[index], set()).update(values)
                elif star:
                    extra.append(values)
                index += 1
            elif keyword in ("*", "**"):
                if keyword == "*":  # ``f(*args)``: the elements of a tuple or list (not the container)
                    if star and index >= len(positional_params) and all(isinstance(v, Collection) for v in values):
                        spread.update(values)  # ``args`` is that tuple (``forward(*args)`` into ``*args``)
                    values = frozenset(e for v in values for e in (v.items if isinstance(v, Collection) else (v,)))
                for name in positional_params[index:] if keyword == "*" else keyword_params:
                    env.setdefault(name, set()).update(values)
            elif keyword in keyword_params:
                env.setdefault(keyword, set()).update(values)
            elif double_star:
                env.setdefault(double_star, set()).update(values)
        if star and extra and not spread:  # a tuple whose items are known by position (``args[0]``)
            positions = tuple(extra) if len(extra) <= MAX_POSITIONS else ()
            env[star] = {Collection(normalize(frozenset().union(*extra)), positions=positions)}
        elif star and spread and not extra:
            env[star] = spread
        elif star and spread:  # ``f(x, *rest)``: a tuple of both, positions not known
            items = frozenset().union(*extra, *(v.items for v in spread))
            env[star] = {Collection(normalize(items))}
        unbound = keyword_params + [n for n in (star, double_star) if n]
        if any(name not in env for name in unbound):
            # ``@hydra.main``/``@click.command``: what no caller binds comes from the command line.
            settings = self.switches.parameter_settings(function)
            default: Value = settings if settings is not None else PARAMETER
            literals = dict(summary.defaults) if called and settings is None else {}
            for name in unbound:
                if name not in env:
                    env[name] = {ConstVal(literals[name])} if name in literals else {default}
        return tuple(sorted((name, normalize(values)) for name, values in env.items()))
