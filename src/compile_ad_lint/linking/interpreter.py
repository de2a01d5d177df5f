"""Cross-module linking by abstract interpretation of module summaries.

Starting from each anchor module (the module body and every function in it), the interpreter
walks statements in order, tracking what each name may hold (``values``) and the context the
code runs in: the forward-AD region, the autocast state and the effective
``backward_pass_autocast``. Calls into project functions are followed, across modules, with the
caller's arguments and context, up to ``max_call_depth``; modules are summarized only when a
name resolves into them. What it learns is reported as events (``events.py``) for the rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from itertools import repeat
from pathlib import Path
from typing import Any, cast

from ..core.findings import Condition
from ..core.locations import Location, StatementSite
from ..core.settings import Config
from ..core.torch_versions import Series, TorchTarget
from ..knowledge import frameworks as fw
from ..knowledge import torch_api as api
from ..knowledge.behaviour import in_place_compiles_torch_nn
from ..knowledge.calls import MATCHED_NAMES, with_compile_wrappers
from ..knowledge.effects import Effect
from ..knowledge.torch_api import CompileHow
from ..knowledge.versions import default_target
from ..summary import model as ir
from .arguments import Args, Values, argument_data, argument_values, fullgraph_of, keyword_arg, positional
from .call_order import with_plain_first
from .cancellation import AnalysisCancelled
from .constants import decided
from .dual_params import DualParameters
from .engine_context import StoreRule
from .events import (
    BackwardThroughCompiled,
    CompiledCallInDualRegion,
    CompiledCallPlain,
    CompiledResult,
    ConfigWrite,
    Event,
    FunctionalThroughCompiled,
    GradReset,
    Hop,
    LeafRead,
    OutputsEscape,
)
from .frames import Context, Frame, PendingCall
from .index import ModuleIndex
from .islands import IslandScan
from .reach import Reach, compile_target, flag_key, joined_store
from .results import ResultAnalysis, indexed_outputs
from .switches import Switches, stamp_arm, with_condition
from .values import (
    DEFAULT_BACKEND,
    PARAMETER,
    PLAIN,
    UNKNOWN_BACKEND,
    UNKNOWN_VALUES,
    AutocastContext,
    AutocastState,
    ClassVal,
    Collection,
    Compiled,
    CompiledOutput,
    Compiler,
    ConfigPatch,
    ConfigState,
    ConstVal,
    Data,
    Disabled,
    Disabler,
    DualLevelContext,
    External,
    ExternalInstance,
    ExternalNames,
    FrameworkCall,
    FrameworkObject,
    FunctionVal,
    GradMode,
    Imported,
    Instance,
    ModuleRef,
    NullContext,
    OutputElement,
    Settings,
    Value,
    Wrapper,
    attribute_holders,
    compiled_by,
    compiled_output,
    config_value,
    derived,
    derived_from_sets,
    in_stable_order,
    normalize,
    stable_text,
)
from .walks import (
    EFFECT,
    READ,
    REQUEST_ENTRY,
    SIDE_EFFECTS,
    STORED,
    WRITTEN,
    Call,
    Closure,
    Recording,
    WalkMemory,
    WalkSummary,
    is_store,
    is_unread_store,
)

#: What each builtin name holds, one set per name for the whole run: sets holding it then find it
#: by identity rather than by comparing (``len``, ``isinstance``, ``range``... are looked up on
#: nearly every line).
_BUILTINS = {name: frozenset([External(f"builtins.{name}")]) for name in dir(__import__("builtins"))}
#: The kind of the pseudo-cell a summarized walk "reads" where it needed a harvest (``_harvest_cell``).
_HARVESTED = "harvested"
_NONE_SET = frozenset([ConstVal(None)])
#: Methods that run whenever an instance exists (``harvest_instance_attributes``).
_CONSTRUCTORS = frozenset({"__init__", "__post_init__", "__new__", "__attrs_post_init__"})
#: Data a walk may move (the outputs and origins of the arguments of the calls it makes) per walk
#: it counts for against ``max-function-walks``: the walks of the generated framework move under
#: 15, torch's none; a walk that moves 96,000 counts for 192.
UNITS_PER_WALK = 500
#: ``Interpreter.cached``'s default: a value used while it is computed is computed again.
_COMPUTED_AGAIN = object()


#: The heap cells a memoized walk depends on, with their versions then: a walk's own (its
#: callees' merged in), or, for a replayed summary, its own with those of the calls it ran, shared
#: rather than merged (merging them at every level of a replayed call tree took a quarter of an
#: edit of pytorch-image-models' ``train.py``).
_Versions = dict[object, int] | tuple[dict[object, int], tuple[Any, ...]]
#: A memoized walk: what it returned, the compiled calls left pending, the heap cells it read with
#: their versions then, its summary (with a walk memory) and whether that summary may be kept
#: across analyses (its outcome does not depend on the call stack above it).
_MemoEntry = tuple[Values, tuple[PendingCall, ...], _Versions, WalkSummary | None, bool]


#: Tensor methods a call of which is handled before attribute lookup: the backward, and those whose
#: result carries no history.
_TENSOR_METHODS = frozenset({api.TENSOR_BACKWARD.name, *api.DETACHING_METHODS})


class Interpreter:
    def __init__(
        self,
        index: ModuleIndex,
        config: Config,
        cancelled: Callable[[], bool] | None = None,
        walk_memory: WalkMemory | None = None,
    ) -> None:
        self.index = index
        self.config = config
        #: Walk summaries kept across analyses (``walks``): walks given what an earlier analysis
        #: gave them replay its effects. None: every walk is walked (a check's memory while its
        #: roots repeat few walks: ``WalkMemory.summarizing``).
        self.walk_memory = walk_memory if walk_memory is not None and walk_memory.summarizing else None
        #: The hashes of the keys of this analysis's walks, for a check's memory, which summarizes
        #: the walks its roots repeat (``WalkMemory.root_walked``); None for the language server's,
        #: which summarizes every walk.
        self.walk_keys: set[int] | None = set() if walk_memory is not None and not walk_memory.every_walk else None
        #: The walks being summarized, innermost last (only with a walk memory).
        self._recordings: list[Recording] = []
        #: Above zero while a summary's effects are applied (they are not recorded again).
        self._replaying = 0
        #: What checking summaries found so far in this analysis: each definition found equal to
        #: the recorded one, and each cell's version with the recorded contents it was found to
        #: hold at that version.
        self._verified_parts: dict[tuple, object] = {}
        self._verified: dict[tuple, tuple[int, object]] = {}
        #: What computing each ``cached`` value read and did, by (store, key), when anything.
        self._derivations: dict[tuple, Recording] = {}
        #: Asked before each function walk and each replay of a walk's summary: the language
        #: server's project pass and rehearsals give way to an edit within a walk's time, not a
        #: whole root's.
        self.cancelled = cancelled
        self.events: list[Event] = []
        self.tangent_safe = api.SafeBackends.extended_by(config.extend_safe_backends).tangent
        #: The target's series on which ``module.compile()`` in place compiles torch.nn's own modules
        #: (None: on every one).
        self.torch_nn_compiled_on = in_place_compiled_on(config.torch)
        self.compile_names = api.COMPILE | config.compile_wrappers
        #: What called names mean (``knowledge.calls``), with the configured compile wrappers.
        self.calls = with_compile_wrappers(config.compile_wrappers)
        self.external_names = ExternalNames(MATCHED_NAMES | self.compile_names)
        self._effects = self.torch_effects()
        self.globals: dict[Path, dict[str, Values]] = {}
        self.globals_run: set[tuple[Path, int]] = set()
        #: Each function's walk by (function, bound arguments, context, record flag): what it returned,
        #: the compiled calls left pending, the heap cells it read with their versions then, and
        #: (with a walk memory) its summary and whether its outcome is free of the stack above it.
        self._memo: dict[tuple, _MemoEntry] = {}
        #: The summarized walks in progress, by memo key (``_note_call``).
        self._walking: dict[tuple, Recording] = {}
        #: The walks whose summaries are being checked, by memo key, with how many checks of each
        #: are in progress: a ``Call`` back to one of them does not hold (``_run_call``).
        self._checking: dict[tuple, int] = {}
        #: The entry points of the walks whose summaries are being replayed (innermost last): what
        #: a replayed ``REQUEST_ENTRY`` asks for.
        self._replay_entries: list[tuple[Path, str]] = []
        #: Version of each heap cell that can gain values while a root is analyzed: an instance
        #: attribute ``("attr", class, name)``, all attributes of a class ``("class", class)``, the
        #: module-valued ones ``("modules", class)`` (what ``children()`` yields; its version follows
        #: every attribute's, a walk summary compares its contents), a module global a function
        #: fills ``("global", path, name)``. A memoized walk is reused while
        #: every cell it read keeps the version it read.
        self._cell_versions: dict[object, int] = {}
        #: How many times any heap cell has changed: cells found holding their versions when it
        #: was n still hold them while it is n (``Reach._kept`` checks nothing then).
        self.heap_changes = 0
        #: The cells each walk in progress has read (innermost last), with the version first read.
        self._reading: list[dict[object, int]] = []
        self._class_attrs: dict[ClassVal, dict[str, Values]] = {}
        #: How many class bodies are running (their attributes are still being bound).
        self.class_bodies_running = 0
        self._mros: dict[ClassVal, list[object]] = {}
        self.instance_attrs: dict[tuple[ClassVal, str], Values] = {}
        #: The same attributes by class, in the order they were first stored (``Reach.submodules``).
        self.attributes_by_class: dict[ClassVal, dict[str, Values]] = {}
        self._harvested: set[tuple[ClassVal, ClassVal]] = set()
        self._entry_contexts: dict[FunctionVal, list[tuple[Values, Location]]] = {}
        self._resolving: set[tuple[Path, str]] = set()
        self._qualified: dict[tuple[str, Path], Values] = {}
        self._walks = 0
        #: Data moved so far (``_carried``), and the units of each walk in progress spent by walks
        #: below it: a walk's own units weigh it (``UNITS_PER_WALK``).
        self._units = 0
        self._units_below: list[int] = []
        #: Walks added to ``_walks`` for the units they moved (``walks_spent``).
        self.heavy_walks = 0
        #: The summaries whose walks this analysis has spent (``_spend``).
        self._spent: set[WalkSummary] = set()
        #: Each distinct set of captured variables of this analysis (``captured_by``).
        self._captured: dict[tuple, tuple] = {}
        #: A call was left unwalked because the walks were spent (``walks_spent``).
        self.stopped_walking = False
        #: The replaced ``forward`` values being called (``call_one``).
        self._replaced_forwards_running: set[Value] = set()
        #: Functions (defining file, qualified name) whose anchors depend on parameters: their
        #: callers are worth analyzing.
        self.caller_requests: set[tuple[str, str]] = set()
        #: Names beyond the mentions whose callers in the root file were analyzed as entry points.
        self.covered: frozenset[str] = frozenset()
        #: CAL005: what compiled callables return, output by output, and the tuple sizes per call site.
        self.results = ResultAnalysis(self)
        self._result_sizes: dict[Location, set[int]] = {}
        #: The keys of the dict displays compiled callables return, per call site (``out["aux"]``).
        self._result_keys: dict[Location, set[tuple]] = {}
        self._recorded: set[Event] = set()
        #: Issue 11: wrappers, in-place and element changes, registries, frameworks.
        self.reach = Reach(self)
        self.islands = IslandScan(self)
        self.switches = Switches(self)
        self._effects.update(self.switches.effects())
        self.dual_params = DualParameters(self)
        self._effects[Effect.FUNCTIONAL_CALL] = self.dual_params.functional_call

    # -- roots ------------------------------------------------------------------------------

    def analyze_module(self, path: Path, mentions: frozenset[str] = frozenset()) -> None:
        """Interpret ``path``'s module-level code, then, as entry points, the functions of its
        anchored blocks (and of blocks that call one of ``mentions``).

        A function of this file whose anchor depends on its parameters makes the blocks of this
        file that call it entry points too, in this same analysis (``covered`` names them): the
        next round would otherwise analyze the whole file again for them (``main()`` calling
        ``train_one_epoch`` in a training script: two walks of the file per check and per edit).
        """
        view = self.index.view(path)
        if view.failure is not None:
            return
        self.reach.root = path
        frame = Frame(path, {}, Context(), record=True)
        for index in view.effectful_blocks():
            self.exec_block(view.block(index).body, frame)
        module_ctx = Context(config=frame.ctx.config)
        walked: set[int] = set()
        closures: set[FunctionVal] = set()
        names = mentions
        while True:
            for index in view.root_blocks(names):
                if index in walked:
                    continue
                walked.add(index)
                for function in view.block(index).functions:
                    owner = ClassVal(path, function.owner_class) if function.owner_class else None
                    bound = Instance(owner) if owner is not None and not function.is_staticmethod else None
                    root = Frame(path, {}, module_ctx, record=True)
                    returned = self.call_function(
                        FunctionVal(path, function.qualname, bound_self=bound), (), root, hop=None
                    )
                    self.walk_returned_closures(returned, path, module_ctx, closures)
            here = frozenset(
                qualname.rsplit(".", 1)[-1] for where, qualname in self.caller_requests if where == str(path)
            )
            if here <= names:
                break
            names |= here
        self.covered = names - mentions
        self.events[:] = with_plain_first(self.events)  # one program: its plain calls, its dual calls

    def walk_returned_closures(self, returned: Values, path: Path, ctx: Context, walked: set[FunctionVal]) -> None:
        """Closures an entry point returns (a factory's ``jvp_fn``, a plugin's hook) are entry points
        too: a test harness or a plugin host calls them, outside what the analysis sees. Each is
        walked once, with its captured variables, and so are the closures it returns in turn."""
        pending = list(returned)
        while pending:
            value = pending.pop()
            if isinstance(value, Collection):
                pending.extend(value.items)
                continue
            if not (isinstance(value, FunctionVal) and value.path == path and "<locals>" in value.qualname):
                continue
            if value in walked:
                continue
            walked.add(value)
            frame = Frame(path, {}, ctx, record=True)
            pending.extend(self.call_function(value, (), frame, hop=None))

    # -- locations --------------------------------------------------------------------------

    def loc(self, path: Path, span: ir.Span) -> Location:
        return Location(self.index.display(path), span.line, span.column, span.end_line, span.end_column)

    # -- statements -------------------------------------------------------------------------

    def exec_block(self, statements: Sequence[ir.Stmt], frame: Frame) -> None:
        for statement in statements:
            self.exec_statement(statement, frame)

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

    def site_of(self, frame: Frame, location: Location) -> StatementSite:
        """The statement and function ``location`` (a call in ``frame``) runs in."""
        return StatementSite(frame.statement or (location.line, location.line), frame.function_lines)

    def _exec_statement(self, statement: ir.Stmt, frame: Frame) -> None:
        if isinstance(statement, ir.Assign):
            values = self.eval(statement.value, frame)
            for target in statement.targets:
                self.assign(target, values, frame, statement.span)
            self.reach.note_element_binding(statement, frame)
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
            frame.env[statement.name] = frozenset([ClassVal(frame.path, statement.qualname)])
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
        for decorator in reversed(definition.decorators):
            values = self.apply_decorator(self.eval(decorator, frame), values, frame, definition.span)
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
            else:
                result |= set(wrapped)
        return frozenset(result)

    def exec_branch(self, statement: ir.Branch, frame: Frame) -> None:
        arms = statement.arms
        switched: tuple[Condition, Condition] | None = None
        if statement.condition is not None:
            tests = self.eval(statement.condition, frame)
            # A test the user sets at launch may go either way: each arm runs under its condition.
            switched = self.switches.arm_conditions(statement, tests, frame)
            if (
                switched is None
                and tests
                and all(isinstance(t, ConstVal) for t in tests)
                and len({bool(t.value) for t in tests}) == 1
            ):
                arms = (arms[0] if next(iter(tests)).value else arms[1],)  # a known flag picks its arm
        elif len(arms) == 2 and not arms[1] and arms[0] and self.reach.always_iterates(arms[0][0]):
            arms = (arms[0],)  # ``for p in model.parameters():`` runs its body
        before_env, before_ctx, before_conditions = dict(frame.env), frame.ctx, frame.conditions
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
            self.exec_block(arm, frame)
            if switched is not None:
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
        contexts = {ctx for _, ctx in outcomes}
        if len(contexts) == 1:
            frame.ctx = contexts.pop()
        elif len({ctx.config for ctx in contexts}) > 1:
            frame.ctx = replace(before_ctx, config=ConfigState(None, None, "depends on a branch"))
        else:
            frame.ctx = before_ctx

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

    def enter_contexts(self, values: Values, ctx: Context, site: Location) -> Context:
        """The context inside ``with <values>:`` (or a function decorated with them)."""
        if any(isinstance(v, DualLevelContext) for v in values):
            ctx = replace(ctx, region=site)
        autocasts = sorted(
            (v.state for v in values if isinstance(v, AutocastContext)),
            key=lambda s: (not s.active, s.device or "", s.dtype or ""),
        )
        if autocasts:
            ctx = replace(ctx, autocast=autocasts[0])
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
                self.reach.store_element(target.parts[0], values, frame, span)

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

    def record(self, event: Event, frame: Frame) -> None:
        """Record a CAL004/CAL005 event once (walks of the same code in several contexts repeat them)."""
        if frame.record:
            if event not in self._recorded:
                self._recorded.add(event)
                self.events.append(event)
            # Logged also when another walk recorded it first: a caller replayed after that walk's
            # ``Call`` no longer records it must still record it itself.
            self.log_effect(("record", event))

    def emit(self, event: Event) -> None:
        """Append an event (every occurrence: CAL001 calls, backwards, config writes)."""
        self.events.append(event)
        self.log_effect(("event", event))

    def escape(self, values: Iterable[object], site: Location, frame: Frame) -> None:
        """Outputs of tuple-returning compiled calls that reach code a backward may hide in."""
        self._escaping(derived(values), site, frame)

    def escape_arguments(self, args: Args, site: Location, frame: Frame) -> None:
        """What a call passes reaches code a backward may hide in (``escape``)."""
        self._escaping(argument_data(args), site, frame)

    def _escaping(self, data: Data, site: Location, frame: Frame) -> None:
        self._units += len(data.elements) + len(data.origins)
        elements = frozenset(e for e in data.elements if e.call_site in self._result_sizes)
        if elements:
            self.record(OutputsEscape(site, elements), frame)

    def write_config(self, values: Values, site: Location, frame: Frame, how: str) -> None:
        state = self.config_state(values, site, how)
        self.record_config_writes(values, site, how)
        frame.ctx = replace(frame.ctx, config=state)

    def config_state(self, values: Values, site: Location, how: str) -> ConfigState:
        if any(isinstance(v, ConstVal) for v in values):
            # ``[{"dtype": torch.bfloat16}]`` evaluates to the literal plus what its names hold: the literal decides.
            values = frozenset(v for v in values if not isinstance(v, Collection))
        normalized = {config_value(v.value) if isinstance(v, ConstVal) else None for v in values}
        value = normalized.pop() if len(normalized) == 1 else None
        return ConfigState(value, site, how)

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
        backend = self.backend_of(args, Effect.COMPILE)
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

    # -- expressions ------------------------------------------------------------------------

    def eval(self, expr: ir.Expr, frame: Frame) -> Values:
        if isinstance(expr, ir.Ref):
            return self.lookup(expr.name, frame)
        if isinstance(expr, ir.Import):
            return frozenset([Imported(expr.name, frame.path)])
        if isinstance(expr, ir.Attr):
            return self.attribute(self.eval(expr.base, frame), expr.attr)
        if isinstance(expr, ir.Call):
            return self.eval_call(expr, frame)
        if isinstance(expr, ir.Const):
            names = list(symbols_in(expr.value))
            if not names:
                return frozenset([ConstVal(expr.value)])
            # ``[self.loss]`` or ``{"dtype": torch.bfloat16}``: keep the literal and what its names hold.
            held = frozenset().union(*(self.eval(dotted_expr(name), frame) for name in names))
            return frozenset([ConstVal(expr.value), Collection(held)])
        if isinstance(expr, ir.Choice):
            return normalize(frozenset().union(*(self.eval(option, frame) for option in expr.options)))
        if isinstance(expr, ir.Elements):
            parts = tuple(self.eval(p, frame) for p in expr.parts)
            # Positions for flat, short displays only (``return model, optimizer``): nested ones
            # would hold every element twice per level.
            flat = len(parts) <= _MAX_POSITIONS and not any(
                isinstance(v, Collection) and v.positions for part in parts for v in part
            )
            return frozenset([Collection(normalize(frozenset().union(*parts)), positions=parts if flat else ())])
        if isinstance(expr, ir.Item):
            bases = self.eval(expr.base, frame)
            if expr.index is not None and self._result_sizes:  # ``out[1]``, ``out["aux"]`` of a compiled call
                indexed = indexed_outputs(bases, expr.index, self._result_sizes, self._result_keys)
                if indexed is not None:
                    return indexed
            return self.reach.container_elements(expr.base, bases, frame)
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

    @staticmethod
    def elements(values: Values) -> Values:
        """What iterating or indexing ``values`` yields."""
        result = Interpreter.unmerged_elements(values)
        return normalize(result) if result else UNKNOWN_VALUES

    @staticmethod
    def unmerged_elements(values: Iterable[object]) -> set:
        """``elements`` before the data among them is merged into one (``normalize``), for a caller
        that merges what several of them yield at once: merging is a union, so merging each part
        first gives the same value, at a cost per part (registries of ~190 models, in composer)."""
        result: set = set()
        for value in values:
            if isinstance(value, Collection):
                result |= value.elements()
            elif isinstance(value, Settings):
                result.add(value)  # ``cfg["train"]``, ``for key in args``: settings too
            else:
                result.add(derived([value]))
        return result

    def lookup(self, name: str, frame: Frame) -> Values:
        if name in frame.env:
            return self.settle(frame.env[name])
        if name in frame.closure:
            return self.settle(frame.closure[name])
        found = self.lookup_global(frame.path, name)
        if found is not None:
            return found
        return _BUILTINS.get(name) or UNKNOWN_VALUES

    def module_global(self, path: Path, name: str) -> Values | None:
        """What module ``path`` binds to ``name``: only the top-level blocks binding it are run."""
        env = self.globals.setdefault(path, {})
        view = self.index.view_of(path)  # a walk depends on the value read (a heap cell), or:
        for index in view.blocks_binding(name):
            if (path, index) not in self.globals_run:
                self.globals_run.add((path, index))
                # On the statements it runs (and on what they read), not on the rest of the file.
                self.exec_block(self.index.block_body(path, index), Frame(path, env, Context(), record=False))
        self.read_cell(("global", path, name))  # a registry a function fills (``Reach.store_global``)
        return env.get(name)

    def module_getattr(self, path: Path, name: str) -> Values | None:
        """What a module's ``__getattr__`` (PEP 562) returns for a name the module does not bind."""
        hook = self.lookup_global(path, "__getattr__")
        if not hook:
            return None
        frame = Frame(path, {}, Context(), record=False)
        return self.call_values(hook, ((None, frozenset([ConstVal(name)])),), ir.Span(1, 1, 1, 1), frame)

    def settle(self, values: Values) -> Values:
        """Resolve the imports among ``values`` (lazily: only names that are used get resolved)."""
        for value in values:  # a loop, not any(): asked on every name lookup
            if isinstance(value, Imported):
                break
        else:
            return values
        settled: set = set()
        for value in values:
            settled |= self.resolve_qualified(value.name, value.importer) if isinstance(value, Imported) else {value}
        return normalize(settled)

    def lookup_global(self, path: Path, name: str) -> Values | None:
        key = (path, name)
        if key in self._resolving:
            return None
        self._resolving.add(key)
        try:
            found = self.module_global(path, name)
            if found is not None:
                return self.settle(found)
            for star in self.index.star_imports(path):
                module = None if api.is_external_root(star) else self.index.find_module(star, path)
                if module is not None and module != path:
                    found = self.lookup_global(module, name)
                    if found is not None:
                        return found
            if self.index.is_package(path):
                sub = self.index.find_module(f"{self.index.module_name(path)}.{name}", path)
                if sub is not None:
                    return frozenset([ModuleRef(sub)])
            return None
        finally:
            self._resolving.discard(key)

    def resolve_qualified(self, qualified: str, importer: Path) -> Values:
        if api.is_external_root(qualified):
            return frozenset([External(qualified)])
        key = (qualified, importer.parent)
        if not self._recordings and key in self._qualified:  # asked on every imported name used
            return self._qualified[key]

        def resolve() -> Values:
            split = self.index.split_qualified(qualified, importer)
            if split is None:
                return frozenset([External(qualified)])
            module, attributes = split
            values: Values = frozenset([ModuleRef(module)])
            for attribute in attributes:
                values = self.attribute(values, attribute)
            return values

        # An import cycle sees "unknown".
        return self.cached(self._qualified, key, resolve, cycle=UNKNOWN_VALUES)

    def attribute(self, bases: Values, name: str) -> Values:
        result: set = set()
        for base in attribute_holders(bases, name):
            result |= self.attribute_of(base, name)
        return normalize(result) if result else UNKNOWN_VALUES

    def attribute_of(self, base: object, name: str) -> Values:
        if isinstance(base, External):
            return self.external_names.attribute_value(base.name, name)
        if isinstance(base, ExternalInstance):
            return self.external_names.attribute_value(base.cls, name)
        if isinstance(base, ModuleRef):
            found = self.lookup_global(base.path, name)
            if found is None and name != "__getattr__":
                found = self.module_getattr(base.path, name)
            return found if found is not None else UNKNOWN_VALUES
        if isinstance(base, Instance):
            found = self.instance_attribute(base.cls, name)
            if found is not None:
                return found
            member = self.find_member(base.cls, name)
            if member is None:  # ``self.manual_backward`` inherited from a framework base class
                return (
                    self.reach.framework_attribute(base, name)
                    or self.switches.namespace_attribute(base)  # ``args.torchcompile`` of a Namespace subclass
                    or UNKNOWN_VALUES
                )
            return self.bind_methods(member, base)
        if isinstance(base, ClassVal):
            member = self.find_member(base, name)
            return member if member is not None else UNKNOWN_VALUES
        if isinstance(base, Collection):
            return frozenset([base])  # ``.values()``, ``.children()``, ... iterate the same items
        if isinstance(base, Compiled):
            if name == api.ORIGINAL_MODULE.name and base.target is not None:
                return frozenset([base.target])
            # An OptimizedModule forwards attribute access to the original module, uncompiled.
            return self.attribute_of(base.target, name) if base.target is not None else UNKNOWN_VALUES
        if isinstance(base, (Data, Settings)):
            return frozenset([base])
        if isinstance(base, Wrapper):
            return self.reach.wrapper_attribute(base, name)
        if isinstance(base, FrameworkObject):
            return self.reach.framework_attribute(base, name) or UNKNOWN_VALUES
        return UNKNOWN_VALUES

    # -- classes ----------------------------------------------------------------------------

    def class_summary(self, cls: ClassVal) -> ir.ClassSummary | None:
        return self.index.class_(cls.path, cls.qualname)

    def bases(self, cls: ClassVal) -> list[object]:
        summary = self.class_summary(cls)
        if summary is None:
            return []
        frame = Frame(cls.path, {}, Context(), record=False)
        return [v for base in summary.bases for v in self.eval(base, frame)]

    def mro(self, cls: ClassVal, seen: frozenset = frozenset()) -> list[object]:
        """``cls`` and its bases, depth first (asked for on every attribute of an instance: memoized;
        the bases are module-level names, bound once)."""
        if cls in seen:
            return []
        if not seen and not self._recordings and cls in self._mros:  # asked on every instance attribute
            return self._mros[cls]

        def linearize() -> list[object]:
            order: list[object] = [cls]
            for base in self.bases(cls):
                order.extend(self.mro(base, seen | {cls}) if isinstance(base, ClassVal) else [base])
            return order

        return self.cached(self._mros, cls, linearize) if not seen else linearize()

    def is_module_class(self, cls: ClassVal) -> bool:
        return any(
            isinstance(b, External) and (api.is_torch_nn(b.name) or b.name in fw.FRAMEWORK_BASES) for b in self.mro(cls)
        )

    def find_member(self, cls: ClassVal, name: str) -> Values | None:
        """A class attribute (methods with their decorators applied) along the project MRO."""
        for klass in self.mro(cls):
            if isinstance(klass, ClassVal):
                attrs = self.class_attributes(klass)
                if name in attrs:
                    return self.settle(attrs[name])
        return None

    def bind_methods(self, members: Values, instance: Instance) -> Values:
        """Bind plain and compiled methods to ``instance`` (static methods stay unbound)."""
        bound: set = set()
        for member in members:
            if isinstance(member, FunctionVal) and not self.is_static(member):
                member = replace(member, bound_self=instance)
            elif (
                isinstance(member, Compiled)
                and isinstance(member.target, FunctionVal)
                and not self.is_static(member.target)
            ):
                member = replace(member, target=replace(member.target, bound_self=instance))
            bound.add(member)
        return frozenset(bound)

    def dotted_name(self, value: object) -> str | None:
        """``package.module.function`` for a project function (how ``compile-wrappers`` names them)."""
        if not isinstance(value, FunctionVal):
            return None
        return f"{self.index.module_name(value.path)}.{value.qualname}"

    def is_static(self, function: FunctionVal) -> bool:
        definition = self.index.definition(function.path, function.qualname)
        return definition is not None and definition.is_staticmethod

    def class_attributes(self, cls: ClassVal) -> dict[str, Values]:
        if not self._recordings and cls in self._class_attrs:  # the common case, asked on every member
            return self._class_attrs[cls]
        env: dict[str, Values] = {}  # filled while the class body runs (what a cycle sees)

        def run_body() -> dict[str, Values]:
            summary = self.class_summary(cls)
            if summary is not None:
                self.class_bodies_running += 1
                try:
                    self.exec_block(summary.body, Frame(cls.path, env, Context(), record=False))
                finally:
                    self.class_bodies_running -= 1
            return env

        return self.cached(self._class_attrs, cls, run_body, cycle=env)

    def instance_attribute(self, cls: ClassVal, name: str) -> Values | None:
        """Values stored on ``self.<name>`` by any method of the class or its project bases."""
        found: set = set()
        for klass in self.mro(cls):
            if isinstance(klass, ClassVal):
                self.harvest_instance_attributes(klass, cls)
                self.read_cell(("attr", klass, name), harvested_for=cls)
                found |= self.instance_attrs.get((klass, name), frozenset())
        return normalize(found) if found else None

    # -- heap cells: what memoized walks depend on ----------------------------------------------

    def depend_on_reads(self, reads: Iterable[tuple[object, int]]) -> None:
        """The walk in progress depends on these heap cells, at these versions, as if it had read
        them itself: what it reuses (a memoized walk, ``Reach.submodules``) was computed from them."""
        if self._reading:
            outer = self._reading[-1]
            for cell, version in reads:
                outer.setdefault(cell, version)

    def read_cell(self, cell: tuple, harvested_for: ClassVal | None = None, contents: object = None) -> None:
        """Note that the walk in progress read ``cell`` (at its current version, if first read);
        ``harvested_for``: the instance class whose harvest of the cell's class preceded the read;
        ``contents``: what the cell holds, when the caller has just computed it (else looked up)."""
        if self._reading:
            self._reading[-1].setdefault(cell, self._cell_versions.get(cell, 0))
        if self._recordings and not self._replaying:
            recording = self._recordings[-1]
            if cell not in recording.accessed:
                prerequisite = _harvest(cell[1], harvested_for) if harvested_for is not None else None
                recording.access(cell, prerequisite, self.cell_contents(cell) if contents is None else contents)
            else:
                recording.read_again(cell)

    def note_write(self, cell: tuple, rule: StoreRule | None = None, values: Values = frozenset()) -> None:
        """The walk being summarized is about to store into ``cell``: what it finds there decides
        what the cell holds afterwards, and so what the walk reads from it later. ``rule`` combines
        what the cell holds with the stored ``values`` (the store's own; None: the cell is compared
        as found), so that finding other contents that the store turns into the same ones (another
        walk stored the same values first) leaves the walk's summary valid (``_same_after_store``);
        with a rule, what the cell held matters only if the cell is read afterwards (``STORED``)."""
        if self._recordings and not self._replaying:
            recording = self._recordings[-1]
            if cell not in recording.accessed:
                recording.access(
                    cell, (STORED if rule is not None else WRITTEN, rule, values), self.cell_contents(cell)
                )

    def cell_contents(self, cell: tuple) -> object:
        """What ``cell`` holds now (what a walk reading it sees)."""
        if cell[0] == _HARVESTED:
            return None  # a harvest that ran (its prerequisite) holds nothing itself
        if cell[0] == "attr":
            return self.instance_attrs.get((cell[1], cell[2]))
        if cell[0] == "class":
            return tuple(self.attributes_by_class.get(cell[1], {}).items())
        if cell[0] == "modules":
            return self.reach.module_values_of(cell[1])
        if cell[0] == SIDE_EFFECTS:
            return cell[1] in self.reach.side_effects_done
        if cell[0] == "dual_params":
            return self.dual_params.modules.get(cell[1], frozenset())
        return self.globals.get(cell[1], {}).get(cell[2])

    def cell_version(self, cell: object) -> int:
        """How many times ``cell`` changed in this analysis (what a memoized result records)."""
        return self._cell_versions.get(cell, 0)

    @property
    def summarizing(self) -> bool:
        """Whether a walk is being summarized for the walk memory (it reads each cell itself)."""
        return bool(self._recordings)

    def changed_cell(self, cell: object) -> None:
        self._cell_versions[cell] = self._cell_versions.get(cell, 0) + 1
        self.heap_changes += 1

    def join_attribute(self, cls: ClassVal, name: str, values: Values) -> None:
        """``self.<name> = values``: ``cls``'s instances may now hold ``values`` too."""
        self.note_write(("attr", cls, name), joined_store, values)  # before the store, in a summary's log
        self.log_effect(("join_attribute", cls, name, values))
        known = self.instance_attrs.get((cls, name), frozenset())
        # Compared after the merge: data weaker than the known data adds nothing, and a store that
        # adds nothing would make every walk that read the attribute run again.
        updated = joined_store(known, values)
        if updated != known:
            self.store_attribute(cls, name, updated)

    def store_attribute(self, cls: ClassVal, name: str, values: Values) -> None:
        """``cls``'s instances now hold ``values`` in attribute ``name`` (a superset of what they held)."""
        self.instance_attrs[(cls, name)] = values
        self.attributes_by_class.setdefault(cls, {})[name] = values
        self.changed_attribute(cls, name)

    def changed_attribute(self, cls: ClassVal, name: str) -> None:
        """``cls``'s instances may hold more values in attribute ``name``."""
        self.changed_cell(("attr", cls, name))
        self.changed_cell(("class", cls))
        self.changed_cell(("modules", cls))

    def still_valid(self, reads: _Versions) -> bool:
        """Whether every heap cell in ``reads`` still has the version recorded there."""
        versions = self._cell_versions
        return all(versions.get(cell, 0) == version for cell, version in _each_version(reads))

    def set_global(self, path: Path, name: str, current: Values, updated: Values) -> None:
        """Module ``path``'s global ``name`` now holds ``updated`` (it held ``current``)."""
        self.globals.setdefault(path, {})[name] = updated
        self.changed_cell(("global", path, name))

    def harvest_instance_attributes(self, klass: ClassVal, instance_cls: ClassVal) -> None:
        """Walk every method of ``klass`` with ``self`` an ``instance_cls``, once per analysis, for
        the attributes they store on ``self``.

        With a walk memory, the walk that needed the harvest depends on it only through the cells
        it then reads (each checked after the harvest ran again: ``read_cell``'s ``harvested_for``)
        and on the harvest running at that point (the ``("harvested", ...)`` entry of its reads), not
        on what the harvest's own walks read: an edit of one method of the trainer walks that
        method again under the harvest, and the walks that read the trainer's attributes (its
        ``__init__``) replay when the attributes hold what they held."""
        if self._recordings and not self._replaying:
            self._recordings[-1].access(_harvest_cell(klass, instance_cls), _harvest(klass, instance_cls), None)
        if (klass, instance_cls) in self._harvested:
            return
        self._harvested.add((klass, instance_cls))
        summary = self.class_summary(klass)
        if summary is None:
            return
        # The instance exists, so its constructor ran (even where the analysis did not follow the
        # call that built it: ``bench_fn(**kwargs)`` in pytorch-image-models' benchmark.py): what
        # it compiles counts. Another method may never be called: its compiles do not.
        built = Frame(klass.path, {}, Context(), record=False)
        root = Frame(klass.path, {}, Context(harvest=True), record=False)
        isolated = bool(self._recordings)
        if isolated:
            self._push_recording(Recording(None, -1))  # what the method walks read and did stays theirs
        try:
            for name, qualname in summary.methods:
                function = FunctionVal(klass.path, qualname)
                if not self.is_static(function):
                    frame = built if name in _CONSTRUCTORS else root
                    self.call_function(replace(function, bound_self=Instance(instance_cls)), (), frame, hop=None)
        finally:
            if isolated:
                self._pop_recording()

    # -- calls ------------------------------------------------------------------------------

    def eval_args(self, args: Sequence[ir.Arg], frame: Frame) -> Args:
        return tuple((arg.keyword, self.eval(arg.value, frame)) for arg in args)

    def eval_call(self, call: ir.Call, frame: Frame) -> Values:
        if isinstance(call.func, ir.Attr) and call.func.attr in _TENSOR_METHODS:
            # ``None.backward()`` would raise: a path where the receiver is None (``loss = None``
            # when no targets are given) is not the one that runs it.
            evaluated = self.eval(call.func.base, frame)
            receivers = evaluated - _NONE_SET
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
                        written_text(_written_argument(call.args, api.CREATE_GRAPH.name, position)),
                        # An optional loss (None on another path) did not ask for the callers before
                        # it was followed: asking now walked pytorch-image-models' five ``main``
                        # scripts again (2.3x walks) for no finding.
                        ask_callers=len(receivers) == len(evaluated),
                    )
                    return frozenset([ConstVal(None)])
                return frozenset([PLAIN])  # detached: no history, no tangent
        if isinstance(call.func, ir.Attr) and call.func.attr in _RECEIVER_METHODS:
            return self.reach.receiver_method(call, frame)  # ``.cuda()``, ``.children()``, ``.get()``, ...
        if isinstance(call.func, ir.Attr) and call.func.attr in api.CONTAINER_STORE_METHODS:
            stored = self.reach.container_store(call, frame)  # ``residuals.append(h)``
            if stored is not None:
                return stored
        if frame.ctx.region is not None and isinstance(call.func, ir.Attr) and call.func.attr == api.COPY_IN_PLACE.name:
            self.dual_params.copy_into(call, frame)  # ``p.copy_(fwAD.make_dual(p, t))`` on a module's parameter
        if isinstance(call.func, ir.Attr):
            bases = self.eval(call.func.base, frame)
            if frame.record and not (isinstance(call.func.base, ir.Ref) and call.func.base.name == "self"):
                self.note_leaf_reads(bases, call.func.attr, frame)
            callees = self.attribute(bases, call.func.attr)
        else:
            callees = self.eval(call.func, frame)
        args = self.eval_args(call.args, frame)
        saved, frame.call_args = frame.call_args, call.args
        try:
            return self.call_values(callees, args, call.span, frame, call.func)
        finally:
            frame.call_args = saved

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
        if isinstance(callee, Compiled):
            return self.call_compiled(callee, args, site, frame, func)
        if isinstance(callee, Compiler):
            if frame.ctx.harvest:
                return positional(args, 0) or UNKNOWN_VALUES
            return frozenset(compiled_by(callee, compile_target(v), frame.conditions) for v in positional(args, 0))
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
            return self.reach.call_framework(callee, args, span, frame)
        if isinstance(callee, Collection):
            if callee.sequential:
                return self.call_values(callee.items, args, span, frame, func)
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
            self.log_effect(("size", site, len(structure)))
            keys = tuple(element.key for element in structure)
            if all(isinstance(key, str) for key in keys):
                self._result_keys.setdefault(site, set()).add(keys)
                self.log_effect(("keys", site, keys))
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
        bound = self.bind(function, summary, args)
        memo_key = (function, bound, frame.ctx, frame.record)
        cached = self._memo.get(memo_key)
        fresh = cached is None or not self.still_valid(cached[2])
        if fresh and self.walks_spent:
            self.stopped_walking = True  # the root's analysis says it is incomplete
            self._depends_on_walk(None)
            self.escape_arguments(args, self._call_site(function, hop), frame)
            return fallback
        if cached is None or fresh:
            cached = self._walk_or_replay(memo_key, function, summary, bound, frame, fallback)
        if self._recordings:
            self._note_call(memo_key, frame.stack, fallback, cached, fresh)
        if cached[2]:  # the caller's result depends on what this walk read
            self.depend_on_reads(_each_version(cached[2]))
        returns, pending = cached[0], cached[1]
        if frame.record and hop is not None:
            frame.pending.extend(p.through(hop) for p in pending)
        return returns

    @property
    def walks_spent(self) -> bool:
        """Whether this analysis has taken every function walk ``max-function-walks`` allows: a
        call that would need a walk returns what it returns unwalked (its arguments escape), as a
        call deeper than ``max-call-depth`` does. A trainer state that may hold any of the models
        a test suite builds makes every walk below it slower and every model a test adds walks the
        trainer again (composer's tests/trainer/test_checkpoint.py: 41,000 walks, 8 minutes)."""
        return self._walks >= self.config.max_function_walks

    def _weigh(self, units: int, below: int) -> int:
        """The walks a walk that moved ``units`` of data (``below`` of them in walks it made)
        counts for beyond itself: ``UNITS_PER_WALK`` of its own each. The number of walks bounds
        an analysis only while each is cheap: 30 functions calling each other with ever larger
        values took 80 ms a walk (20,000 walks: half an hour); the walks of real code move under
        20 units each."""
        if self._units_below:
            self._units_below[-1] += units
        heavy = (units - below) // UNITS_PER_WALK
        self._walks += heavy
        self.heavy_walks += heavy
        return heavy

    def _call_site(self, function: FunctionVal, hop: Hop | None) -> Location:
        return hop.location if hop is not None else Location.point(self.index.display(function.path))

    def _walk_or_replay(
        self,
        memo_key: tuple,
        function: FunctionVal,
        summary: ir.FunctionSummary,
        bound: tuple,
        frame: Frame,
        fallback: Values,
    ) -> _MemoEntry:
        """Walk the function (summarizing the walk when there is a walk memory), or replay a
        summary an earlier analysis made of the same walk when it still holds."""
        memory = self.walk_memory
        memory_key: tuple = ()
        key_hash = 0
        if memory is not None or self.walk_keys is not None:  # a check's memory counts keys while not summarizing
            memory_key = (*memo_key, len(frame.stack))  # the depth left bounds what the walk reaches
        if self.walk_keys is not None:
            key_hash = hash(memory_key)
            self.walk_keys.add(key_hash)
        if memory is not None:
            root = self.reach.root
            candidates = tuple(c for c in memory.candidates(memory_key) if c.root is None or c.root == root)
            if candidates:
                before = self._memo.get(memo_key)
                self._checking[memo_key] = self._checking.get(memo_key, 0) + 1
                self._replay_entries.append(frame.stack[0] if frame.stack else (function.path, function.qualname))
                try:
                    for candidate in candidates:
                        if self.cancelled is not None and self.cancelled():
                            raise AnalysisCancelled("a replay")  # an edit's replays can take its whole time
                        if not self._definitions_hold(candidate):
                            # Its own definitions changed (the function edited): neither its log nor
                            # its closure holds, and building the closure (everything below it
                            # merged) would be wasted.
                            continue
                        versions: _Versions | None = None
                        if candidate not in memory.by_log_only and candidate.closure.roots <= {root}:
                            versions = self._replayed_whole(candidate.closure)
                        if versions is None:
                            replayed = self._replayed(candidate, frame.stack)
                            if replayed is None:
                                continue
                            versions, callees = replayed
                            if callees:  # some calls replayed or walked summaries made since
                                refreshed = candidate.with_callees(callees)
                                memory.replace(memory_key, candidate, refreshed)
                                candidate = refreshed
                            memory.by_log_only.add(candidate)
                        memory.hits += 1
                        found = self._memo.get(memo_key)
                        if found is not None and found is not before and self.still_valid(found[2]):
                            return found  # checking it ran a harvest that walked or replayed this very walk
                        entry: _MemoEntry = (candidate.returns, candidate.pending, versions, candidate, True)
                        self._memo[memo_key] = entry
                        return entry
                finally:
                    self._replay_entries.pop()
                    self._checking[memo_key] -= 1
                    if not self._checking[memo_key]:
                        del self._checking[memo_key]
            memory.misses += 1
        self._walks += 1
        self._memo[memo_key] = (fallback, (), {}, None, False)  # recursion through another path sees the fallback
        self._reading.append({})
        recording = None
        if memory is not None and (self._recordings or memory.summarizes(key_hash)):
            recording = Recording((function.path, function.qualname), len(frame.stack))
            recording.parts[("function", function.path, function.qualname)] = summary
            self._push_recording(recording)
            self._walking[memo_key] = recording
        units = self._units
        self._units_below.append(0)
        try:
            returns, pending = self.walk_function(function, summary, bound, frame)
        finally:
            reads = self._reading.pop()
            below = self._units_below.pop()
            if recording is not None:
                self._pop_recording()
                del self._walking[memo_key]
        heavy = self._weigh(self._units - units, below)
        if recording is None:
            entry = self._memo[memo_key] = (returns, pending, reads, None, False)
            return entry
        assert memory is not None
        recording.walks += 1 + heavy
        made = WalkSummary(
            tuple((path, self.index.view_of(path).digest) for path in sorted(recording.files)),
            tuple(recording.parts.items()),
            tuple((path, self.index.identity(path)) for path in sorted({key[1] for key in recording.parts})),
            frozenset(recording.absent),
            tuple(recording.log),
            returns,
            pending,
            recording.walks,
            self.reach.root if recording.root_dependent else None,
        )
        self._spent.add(made)
        if recording.storable:
            memory.put(memory_key, made)
        entry = self._memo[memo_key] = (returns, pending, reads, made, recording.storable)
        return entry

    # -- walk summaries (``walks``): recording, checking, replaying ---------------------------------

    def log_effect(self, effect: tuple) -> None:
        """Add ``effect`` to the summary of the walk in progress (with a walk memory)."""
        if self._recordings and not self._replaying:
            self._recordings[-1].effect(effect)

    def _push_recording(self, recording: Recording) -> None:
        self._recordings.append(recording)
        self.index.recording = recording

    def _pop_recording(self) -> None:
        self._recordings.pop()
        self.index.recording = self._recordings[-1] if self._recordings else None

    def cached(self, store: dict, key: object, compute: Callable[[], Any], cycle: object = _COMPUTED_AGAIN) -> Any:
        """``store[key]``, computed the first time (``cycle`` stands for it while it is computed;
        by default a use during the computation computes it too).
        With a walk memory, what the computation read and did is recorded once, and every walk that
        uses the value depends on it (class attributes, import resolutions, CAL005 structures...:
        computed by one walk, used by the next)."""
        known = store.get(key, _MISSING)  # one lookup: keys are memo keys, compared field by field
        if known is not _MISSING:
            if self._recordings:
                found = self._derivations.get((id(store), key))
                if found is not None:
                    self._recordings[-1].absorb(found, walked_here=False)
                    if not found.storable:
                        self._depends_on_walk(None)
            return known
        if cycle is not _COMPUTED_AGAIN:
            store[key] = cycle
        if self.walk_memory is None:
            value = store[key] = compute()
            return value
        recording = Recording(None, -1)
        self._push_recording(recording)
        try:
            value = compute()
        finally:
            self._pop_recording()
        store[key] = value
        if recording.files or recording.parts or recording.log or recording.absent or not recording.storable:
            self._derivations[(id(store), key)] = recording
        else:
            return value
        if self._recordings:
            self._recordings[-1].absorb(recording)
            if not recording.storable:
                self._depends_on_walk(None)
        return value

    def _note_call(
        self, memo_key: tuple, stack: tuple[tuple[Path, str], ...], fallback: Values, entry: _MemoEntry, fresh: bool
    ) -> None:
        """The walk being summarized called a function: when that function's walk did not depend
        on the stack, the caller depends on its outcome (a ``Call``, checked where it was made);
        otherwise on what that walk read and did, and its stack dependence is the caller's too.
        ``fresh``: the entry was walked or replayed for this call (not reused from the memo).
        The fallback of a walk of ``memo_key`` still in progress (reached again from a harvest's
        fresh frame: ``Attention.__init__`` reads ``self.n_heads``, whose harvest walks
        ``Attention.__init__``) is recursion like any other: the walks below that one depend on it
        being in progress, that one's own outcome does not."""
        walking = self._walking.get(memo_key)
        if walking is not None:
            self._depends_on_walk(walking)
            return
        summary, storable = entry[3], entry[4]
        if summary is not None and storable:
            self._recordings[-1].call(Call(memo_key, stack, fallback, entry[0], entry[1], summary))
            return
        if summary is not None:
            self._recordings[-1].absorb(summary, walked_here=fresh)
        if not storable and not fresh:
            self._depends_on_walk(None)

    def _run_call(self, call: Call, stack: tuple[tuple[Path, str], ...]) -> _MemoEntry | None:
        """What ``call`` gives now: the memoized walk, else a replay of a summary that holds, else a
        walk, from a frame with the call's context and ``stack`` (the call's, below the replayed
        walk's own callers now: the functions above it are another entry's where the summary was
        made in another root or walked from another entry). None when it cannot be run the way it
        was (its function is gone, the walk budget is spent, its check is in progress further up)."""
        function, bound, ctx, record = call.key
        found = self._memo.get(call.key)
        if found is not None and self.still_valid(found[2]):
            return found
        if call.key in self._checking or self.walks_spent:
            return None
        summary = self.index.function(function.path, function.qualname)
        if summary is None:
            return None
        caller = Frame(function.path, {}, ctx, record=record, stack=stack)
        return self._walk_or_replay(call.key, function, summary, bound, caller, call.fallback)

    def _depends_on_stack(self, function: tuple[Path, str], stack: tuple[tuple[Path, str], ...]) -> None:
        """The walk in progress was cut short by recursion into ``function``, walked further up
        ``stack``: the walks from there down depend on the stack (``function``'s own walk does not)."""
        position = stack.index(function)
        walk = next(
            (r for r in reversed(self._recordings) if r.function == function and r.position == position),
            None,
        )
        self._depends_on_walk(walk)

    def _depends_on_walk(self, walk: Recording | None) -> None:
        """The walks in progress above ``walk`` depend on the call stack; all of them for None (the
        walk budget ran out, a stack-dependent walk or lazy value was reused)."""
        for recording in reversed(self._recordings):
            if recording is walk:
                return
            recording.storable = False

    def _replayed_whole(self, closure: Closure) -> dict[object, int] | None:
        """Replay a walk and everything below it at once when their closure holds: the files and
        definitions they read are unchanged and every cell they read first holds what it held
        (made ready the way the walk made it), then their effects, in order; the versions of the
        heap cells the outcome depends on, or None (nothing applied). What this analysis already
        found equal is not compared again."""
        if not self._definitions_hold(closure):
            return None
        cell_versions = self._cell_versions
        harvested = self._harvested
        # What checking reads is the closure's, not the walk being summarized around it's (that
        # walk depends on the outcome, ``_note_call``): a failed check's reads, made in its walk's
        # log, hid what the walk read later (a registry read empty, then filled by import side
        # effects a check ran).
        self._push_recording(Recording(None, -1))
        try:
            for cell, prerequisite, contents in closure.checked_reads:
                if prerequisite is not None and prerequisite[0] == "harvest" and prerequisite[1:] not in harvested:
                    # A harvest runs where the walk ran it, after what came before it (the log's way):
                    # run here, before any of the effects, its method walks see another heap.
                    return None
                if not self._cell_holds(cell, prerequisite, contents):
                    return None
        finally:
            self._pop_recording()
        read_cells, stored_cells = closure.read_cells, closure.stored_cells
        versions: dict[object, int] = dict(zip(read_cells, map(cell_versions.get, read_cells, repeat(0))))
        self._replaying += 1
        try:
            for effect in closure.effects:
                self.replay_effect(effect)
        finally:
            self._replaying -= 1
        versions.update(zip(stored_cells, map(cell_versions.get, stored_cells, repeat(0))))
        self._depend_on_definitions(closure)
        self._spend(closure.summaries)
        return versions

    def _replayed(
        self, summary: WalkSummary, stack: tuple[tuple[Path, str], ...]
    ) -> tuple[_Versions, dict[int, WalkSummary]] | None:
        """Replay ``summary`` if it is what walking now would do; the versions of the heap cells
        its outcome depends on (``_MemoEntry``), or None. The files and definitions it read are
        unchanged (the caller checked: ``_definitions_hold``); its log runs in order: each cell it
        read must hold what it held (made ready the way the walk made it: a class's attributes
        harvested, a module's binding blocks run), each effect is applied again, each call it depends on is run (``_run_call``: its own
        summary replayed, or its function walked) and must return and leave pending what it did.
        What this analysis already found equal is not compared again. A log that stops holding
        part way leaves the effects before that point applied: the walk that follows does them
        again (they join what the heap holds, and events are kept once). Also the summaries the
        calls gave that are not those they gave then, by log position (``WalkSummary.with_callees``).

        What the calls run reads and does stays theirs: the walk being summarized around this one
        depends on its outcome (``_note_call``)."""
        versions: dict[object, int] = {}
        below: dict[int, _Versions] = {}  # the calls', by identity
        stored = []
        callees: dict[int, WalkSummary] = {}
        cell_versions = self._cell_versions
        applied = held = False
        self._push_recording(Recording(None, -1))
        try:
            for at, entry in enumerate(summary.log):
                kind = entry[0]
                if kind == READ:
                    _, cell, prerequisite, contents = entry
                    if is_store(prerequisite):
                        stored.append(cell)  # its version after the walk's stores
                        if is_unread_store(prerequisite):
                            continue
                    if not self._cell_holds(cell, prerequisite, contents):
                        return None
                    if not is_store(prerequisite):
                        versions.setdefault(cell, cell_versions.get(cell, 0))
                elif kind == EFFECT:
                    applied = True
                    self._replaying += 1
                    try:
                        self.replay_effect(entry[1])
                    finally:
                        self._replaying -= 1
                else:
                    call: Call = entry[1]
                    found = self._run_call(call, stack + call.stack[len(stack) :])
                    if found is None or not found[4] or found[0] != call.returns or found[1] != call.pending:
                        return None
                    if found[2]:
                        below[id(found[2])] = found[2]
                    if found[3] is not call.summary and found[3] is not None:
                        callees[at] = found[3]
            held = True
        finally:
            self._pop_recording()
            if held or applied:
                # Effects applied before a read that fails stay applied (a package's import side
                # effects marked as run are not run again): the analysis depends on what they came from.
                self._depend_on_definitions(summary)
        for cell in stored:
            versions[cell] = cell_versions.get(cell, 0)
        self._spend((summary,))
        return (versions, tuple(below.values())) if below else versions, callees

    def _spend(self, summaries: Iterable[WalkSummary]) -> None:
        """Count the walks of replayed ``summaries`` against ``max-function-walks``, each summary
        once in an analysis: a walk replayed again here is what a fresh analysis finds memoized."""
        spent = self._spent
        for summary in summaries:
            if summary not in spent:
                spent.add(summary)
                self._walks += summary.walks

    def _definitions_hold(self, summary: WalkSummary | Closure) -> bool:
        """Whether the files and the definitions a walk read are what they were: the definitions
        are compared one by one only in files whose view changed (``WalkSummary.part_files``).
        Comparing them is not depending on them: the analysis depends on them once the summary is
        replayed (``_depend_on_definitions``). A summary made in another root can read definitions
        a walk here would not (the files of a harvest's method walk there); when a later read fails
        the check, that root's files had become this root's dependencies."""
        index = self.index
        for path, digest in summary.files:
            if index.identity(path)[0] != digest:
                return False
        for path, identity in summary.part_files:
            if index.identity(path) != identity:
                break  # that file changed: its definitions are compared one by one
        else:
            return True
        with index.detached():
            same_parts = self._verified_parts
            for key, part in summary.parts:
                if same_parts.get(key) is part:
                    continue
                current = index.part(*key)
                if current is not part and current != part:
                    return False
                same_parts[key] = part
            return True

    def _depend_on_definitions(self, summary: WalkSummary | Closure) -> None:
        """The analysis depends on the files, definitions and missing entries of a summary it replays."""
        self.index.depend_on(summary.dependency_paths, summary.absent)

    def _cell_holds(self, cell: tuple, prerequisite: tuple | None, contents: object) -> bool:
        """Whether ``cell`` holds what a summarized walk found there (``_replayed``)."""
        versions = self._cell_versions
        seen = self._verified.get(cell)
        if seen is not None and seen[1] is contents and seen[0] == versions.get(cell, 0):
            return True
        if is_store(prerequisite):
            pass
        elif prerequisite is not None:
            self.harvest_instance_attributes(prerequisite[1], prerequisite[2])
        elif cell[0] == "global":
            self.module_global(cell[1], cell[2])
        now = self.cell_contents(cell)
        if now == contents:
            self._verified[cell] = (versions.get(cell, 0), contents)
            return True
        return _same_after_store(prerequisite, now, contents)

    def replay_effect(self, effect: tuple) -> None:
        """Do again what a summarized walk did (``log_effect``): its stores are made again with
        what they stored, joined with what the heap holds now, as the walk itself would."""
        kind = effect[0]
        if kind == "join_attribute":
            self.join_attribute(*effect[1:])
        elif kind == "merge_attribute":
            self.reach.merge_attribute(*effect[1:])
        elif kind == "replace_everywhere":
            self.reach.replace_everywhere(*effect[1:])
        elif kind == "store_global":
            self.reach.store_global(*effect[1:])
        elif kind == "record":
            if effect[1] not in self._recorded:
                self._recorded.add(effect[1])
                self.events.append(effect[1])
        elif kind == "event":
            self.events.append(effect[1])
        elif kind == REQUEST_ENTRY:
            path, qualname = self._replay_entries[-1]
            self.caller_requests.add((str(path), qualname))
        elif kind == "size":
            self._result_sizes.setdefault(effect[1], set()).add(effect[2])
        elif kind == "keys":
            self._result_keys.setdefault(effect[1], set()).add(effect[2])
        elif kind == SIDE_EFFECTS:
            self.reach.side_effects_done.add(effect[1])
        elif kind == "dual_params":
            self.dual_params.mark(effect[1], effect[2])

    def walk_function(
        self, function: FunctionVal, summary: ir.FunctionSummary, bound: tuple, caller: Frame
    ) -> tuple[Values, tuple[PendingCall, ...]]:
        if self.cancelled is not None and self.cancelled():
            raise AnalysisCancelled(function.qualname)
        ctx = caller.ctx
        regions = []
        for values, site in self.entry_contexts(function, summary):
            ctx = self.enter_contexts(values, ctx, site)
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
        )
        self.exec_block(summary.body, frame)
        for region in regions:
            self.finish_region(frame, region, 0)
        returns = normalize(frame.returns) if frame.returns else frozenset([ConstVal(None)])
        if not caller.stack:  # returned to callers the analysis may not see
            self.escape(returns, self.loc(function.path, summary.span), frame)
        return returns, tuple(frame.pending)

    def entry_contexts(self, function: FunctionVal, summary: ir.FunctionSummary) -> list[tuple[Values, Location]]:
        """Context managers used as decorators (``@dual_level()``, ``@torch.autocast(...)``, ``@config.patch``)."""
        key = replace(function, bound_self=None, closure=())
        if not self._recordings and key in self._entry_contexts:
            return self._entry_contexts[key]

        def evaluate() -> list[tuple[Values, Location]]:
            frame = Frame(function.path, {}, Context(), record=False)
            contexts = []
            for decorator in summary.decorators:
                values = self.eval(decorator, frame)
                # ``@torch.no_grad`` without parentheses works too.
                values = frozenset(
                    GradMode(api.GRAD_MODES[v.name]) if isinstance(v, External) and v.name in api.GRAD_MODES else v
                    for v in values
                )
                if any(isinstance(v, (DualLevelContext, AutocastContext, ConfigPatch, GradMode)) for v in values):
                    contexts.append((values, self.loc(function.path, summary.span)))
            return contexts

        return self.cached(self._entry_contexts, key, evaluate)

    def bind(self, function: FunctionVal, summary: ir.FunctionSummary, args: Args) -> tuple:
        params = list(summary.params)
        env: dict[str, set] = {}
        if function.bound_self is not None and params and not params[0].startswith("*"):
            env[params.pop(0)] = {function.bound_self}
        positional_params = [p for p in params if not p.startswith("*")]
        star = next((p[1:] for p in params if p.startswith("*") and not p.startswith("**")), None)
        double_star = next((p[2:] for p in params if p.startswith("**")), None)
        index = 0
        for keyword, values in args:
            if keyword is None:
                if index < len(positional_params):
                    env.setdefault(positional_params[index], set()).update(values)
                elif star:
                    env.setdefault(star, set()).update(values)
                index += 1
            elif keyword in ("*", "**"):
                for name in positional_params[index:] if keyword == "*" else positional_params:
                    env.setdefault(name, set()).update(values)
            elif keyword in positional_params:
                env.setdefault(keyword, set()).update(values)
            elif double_star:
                env.setdefault(double_star, set()).update(values)
        unbound = positional_params + [n for n in (star, double_star) if n]
        if any(name not in env for name in unbound):
            # ``@hydra.main``/``@click.command``: what no caller binds comes from the command line.
            settings = self.switches.parameter_settings(function)
            default: Value = settings if settings is not None else PARAMETER
            for name in unbound:
                env.setdefault(name, {default})
        return tuple(sorted((name, normalize(values)) for name, values in env.items()))

    # -- torch API --------------------------------------------------------------------------

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

    # The torch effects of ``knowledge.torch_api`` rows, one method each: (row, name, args, site, frame).

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
        written = written_text(_written_argument(frame.call_args, api.CREATE_GRAPH.name, row.create_graph_position))
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
        written = _written_argument(frame.call_args if frame else (), keyword, enabled_position)
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
        entry's callers): a summary replays the request for its replay's entry (``REQUEST_ENTRY``)."""
        if frame.record and frame.stack:
            path, qualname = frame.stack[0]
            self.caller_requests.add((str(path), qualname))
            self.log_effect((REQUEST_ENTRY,))

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
            written_text(_written_argument(frame.call_args, api.CREATE_GRAPH.name, spec.create_graph_position))
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


def _each_version(reads: _Versions) -> Iterable[tuple[object, int]]:
    """Every (cell, version) ``reads`` holds, each shared part once (a walk's own: its items)."""
    return reads.items() if isinstance(reads, dict) else _each_shared_version(reads)


def _each_shared_version(reads: _Versions) -> Iterator[tuple[object, int]]:
    seen: set[int] = set()
    pending: list[_Versions] = [reads]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            yield from node.items()
        elif id(node) not in seen:
            seen.add(id(node))
            pending.append(node[0])
            pending.extend(node[1])


def _harvest(klass: ClassVal, instance_cls: ClassVal) -> tuple:
    """The prerequisite of a read that followed a harvest: ``harvest_instance_attributes`` runs first."""
    return ("harvest", klass, instance_cls)


def _harvest_cell(klass: ClassVal, instance_cls: ClassVal) -> tuple:
    """The pseudo-cell a walk reads where it needed a harvest (``harvest_instance_attributes``)."""
    return (_HARVESTED, klass, instance_cls)


def _same_after_store(prerequisite: tuple | None, now: object, found: object) -> bool:
    """Whether the walk's first access to a cell was a store (``(WRITTEN, rule, values)``) that
    makes what the cell holds ``now`` into what it made of what the walk ``found`` there:
    everything the walk read from the cell afterwards is then the same (later stores only add)."""
    if prerequisite is None or prerequisite[0] != WRITTEN:
        return False
    _, rule, values = prerequisite
    if rule is None or not values:
        return False
    return rule(cast(frozenset, now or frozenset()), values) == rule(cast(frozenset, found or frozenset()), values)


def _in_order(origins: Iterable[CompiledOutput]) -> tuple[CompiledOutput, ...]:
    """Compiled outputs by call site and compile site, ties (one generic compile site reached with
    several block classes) by their text: sets iterate in a per-process order, and a finding's
    message and related locations must not depend on which process produced them."""
    return tuple(sorted(origins, key=lambda o: (o.call_site.compared(), o.compiled.site.compared(), stable_text(o))))


_MISSING = object()
#: Longest tuple/list display whose elements are kept position by position.
_MAX_POSITIONS = 8
#: Methods whose receiver decides what they do (``Reach.receiver_method``).
_RECEIVER_METHODS = frozenset(
    {
        *api.MODULE_RETURNING_METHODS,
        *api.MODULE_CHILDREN_METHODS,
        *api.MODULE_PARAMETER_METHODS,
        *api.CONTAINER_ELEMENT_METHODS,
        *api.MODULE_REGISTRATION_METHODS,
    }
)


def _written_argument(arguments: Sequence[ir.Arg], keyword: str, position: int | None) -> ir.Expr | None:
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


def _calls_super(statements: Iterable[ir.Stmt], method: str) -> bool:
    """Whether a method body calls ``super().<method>(...)`` (directly, not in a nested def)."""
    pending: list[object] = list(statements)
    while pending:
        node = pending.pop()
        if isinstance(node, ir.Call):
            func = node.func
            if (
                isinstance(func, ir.Attr)
                and func.attr == method
                and isinstance(func.base, ir.Call)
                and func.base.func == ir.Ref("super")
            ):
                return True
            pending.extend([func, *(a.value for a in node.args)])
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


def describe_callee(func: ir.Expr | None) -> str:
    if isinstance(func, ir.Ref):
        return func.name
    if isinstance(func, ir.Attr):
        return f"{describe_callee(func.base)}.{func.attr}"
    if isinstance(func, ir.Call):
        return f"{describe_callee(func.func)}(...)"
    return "<expression>"


def iter_values(args: Args) -> Iterable[object]:
    for _, values in args:
        yield from values


def in_place_compiled_on(target: TorchTarget | None) -> tuple[Series, ...] | None:
    """The series of ``target`` on which ``module.compile()`` compiles torch.nn's own modules; None: all."""
    series = (target or default_target()).series
    compiling = tuple(s for s in series if in_place_compiles_torch_nn(s))
    return None if compiling == series else compiling


def runs_once(frame: Frame) -> bool:
    """Whether the statement ``frame`` executes is module-level code outside any loop."""
    return not frame.stack and frame.function_lines is None and frame.loops == 0
