"""The engine's state: what one analysis knows (the heap, memo tables, events, budgets), set up once.

The engine is a stack of classes, each a job over the one below: ``Heap`` (cells, object model),
``Names``, ``Memo`` (incremental), ``ExternalCalls``, ``Calls``, ``Statements``, ``Interpreter``. A
call from a lower class up the stack goes through ``engine``, the whole engine as the lower classes
see it (``engine_context.EngineCalls``), which ``Interpreter`` sets to itself."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from ..core.findings import Condition
from ..core.locations import Location, StatementSite
from ..core.settings import Config
from ..core.torch_versions import Series, TorchTarget
from ..knowledge import torch_api as api
from ..knowledge.behaviour import in_place_compiles_torch_nn
from ..knowledge.calls import MATCHED_NAMES, with_compile_wrappers
from ..knowledge.versions import default_target
from ..summary import model as ir
from .analyses.dual_params import DualParameters
from .analyses.islands import IslandScan
from .analyses.results import ResultAnalysis
from .analyses.second_order import SecondOrders
from .analyses.switches import Switches
from .arguments import Args, Values, argument_data
from .contexts import ConfigState, config_value
from .engine_context import EngineCalls
from .events import (
    Event,
    OutputsEscape,
)
from .frames import Decorated, Frame
from .incremental import Cell, EmitEvent, MemoEntry, Part, RecordEvent, Recording, WalkEffect, WalkMemory, WalkSummary
from .index import ModuleIndex
from .reach import Reach
from .values import (
    UNKNOWN_VALUES,
    ClassVal,
    Collection,
    ConstVal,
    Data,
    ExternalNames,
    FunctionVal,
    Settings,
    Value,
    derived,
    normalize,
)


def in_place_compiled_on(target: TorchTarget | None) -> tuple[Series, ...] | None:
    """The series of ``target`` on which ``module.compile()`` compiles torch.nn's own modules; None: all."""
    series = (target or default_target()).series
    compiling = tuple(s for s in series if in_place_compiles_torch_nn(s))
    return None if compiling == series else compiling


#: ``Interpreter.cached``'s default: a value used while it is computed is computed again.
COMPUTED_AGAIN = object()


class EngineState:
    #: The helpers that hold the engine (``EngineContext``), built by ``Interpreter``.
    results: ResultAnalysis
    reach: Reach
    islands: IslandScan
    second_orders: SecondOrders
    switches: Switches
    dual_params: DualParameters
    #: The engine whose lower classes these are: what they call further up its stack.
    engine: EngineCalls

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
        self._verified_parts: dict[Part, object] = {}
        self._verified: dict[Cell, tuple[int, object]] = {}
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
        self.globals: dict[Path, dict[str, Values]] = {}
        self.globals_run: set[tuple[Path, int]] = set()
        #: Each function's walk by (function, bound arguments, context, record flag).
        self._memo: dict[tuple, MemoEntry] = {}
        #: The summarized walks in progress, by memo key (``_note_call``).
        self._walking: dict[tuple, Recording] = {}
        #: The walks whose summaries are being checked, by memo key, with how many checks of each
        #: are in progress: a ``Call`` back to one of them does not hold (``_run_call``).
        self._checking: dict[tuple, int] = {}
        #: The entry points of the walks whose summaries are being replayed (innermost last): what
        #: a replayed ``RequestEntry`` asks for.
        self._replay_entries: list[tuple[Path, str]] = []
        #: Version of each heap cell that can gain values while a root is analyzed (``incremental.cells``):
        #: a memoized walk is reused while every cell it read keeps the version it read.
        self._cell_versions: dict[Cell, int] = {}
        #: How many times any heap cell has changed: cells found holding their versions when it
        #: was n still hold them while it is n (``Reach._kept`` checks nothing then).
        self.heap_changes = 0
        #: The cells each walk in progress has read (innermost last), with the version first read.
        self._reading: list[dict[Cell, int]] = []
        self._class_attrs: dict[ClassVal, dict[str, Values]] = {}
        #: How many class bodies are running (their attributes are still being bound).
        self.class_bodies_running = 0
        self._mros: dict[ClassVal, list[object]] = {}
        self.instance_attrs: dict[tuple[ClassVal, str], Values] = {}
        #: Per switch's arm running (innermost last), the instance attributes stored while it ran,
        #: with what each held before its first store there (``Heap.stamp_arm_writes``).
        self._arm_writes: list[dict[tuple[ClassVal, str], Values]] = []
        #: What ``stamped`` made of each set of values under each arm's conditions (``Heap._stamped``).
        self._stamps: dict[tuple[Values, tuple[Condition, ...]], Values] = {}
        #: The same attributes by class, in the order they were first stored (``Reach.submodules``).
        self.attributes_by_class: dict[ClassVal, dict[str, Values]] = {}
        self._harvested: set[tuple[ClassVal, ClassVal]] = set()
        self._decorated: dict[FunctionVal, Decorated] = {}
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
        #: How many times a walk asked for its entry's callers (``MemoEntry.requests``).
        self._entry_requests = 0
        #: Names beyond the mentions whose callers in the root file were analyzed as entry points.
        self.covered: frozenset[str] = frozenset()
        #: CAL005: the tuple sizes of what compiled callables return, per call site.
        self._result_sizes: dict[Location, set[int]] = {}
        #: The keys of the dict displays compiled callables return, per call site (``out["aux"]``).
        self._result_keys: dict[Location, set[tuple]] = {}
        self._recorded: set[Event] = set()
        #: Locations made so far: a frozen dataclass's construction costs more than looking it up,
        #: and the same calls are located at every walk of their function.
        self._locations: dict[tuple[Path, ir.Span], Location] = {}
        #: Each literal's names (``symbols_in``) and, when it names none, its value set: a literal
        #: is evaluated again at every walk of its function (keyed by the node's id, the node kept
        #: beside it so that the id is never another node's).
        self.literals: dict[int, tuple[ir.Const, tuple[str, ...], frozenset | None]] = {}
        #: Whether each function walked calls itself (``Statements.calls_itself``).
        self._self_calling: dict[tuple[Path, str], bool] = {}

    def loc(self, path: Path, span: ir.Span) -> Location:
        key = (path, span)
        found = self._locations.get(key)
        if found is None:
            found = self._locations[key] = Location(
                self.index.display(path), span.line, span.column, span.end_line, span.end_column
            )
        return found

    def site_of(self, frame: Frame, location: Location) -> StatementSite:
        """The statement and function ``location`` (a call in ``frame``) runs in."""
        return StatementSite(frame.statement or (location.line, location.line), frame.function_lines)

    def record(self, event: Event, frame: Frame) -> None:
        """Record a CAL004/CAL005 event once (walks of the same code in several contexts repeat them)."""
        if frame.record:
            if event not in self._recorded:
                self._recorded.add(event)
                self.events.append(event)
            # Logged also when another walk recorded it first: a caller replayed after that walk's
            # ``Call`` no longer records it must still record it itself.
            self.log_effect(RecordEvent(event))

    def emit(self, event: Event) -> None:
        """Append an event (every occurrence: CAL001 calls, backwards, config writes)."""
        self.events.append(event)
        self.log_effect(EmitEvent(event))

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
        self.engine.record_config_writes(values, site, how)
        frame.ctx = replace(frame.ctx, config=state)

    def config_state(self, values: Values, site: Location, how: str) -> ConfigState:
        if any(isinstance(v, ConstVal) for v in values):
            # ``[{"dtype": torch.bfloat16}]`` evaluates to the literal plus what its names hold: the literal decides.
            values = frozenset(v for v in values if not isinstance(v, Collection))
        normalized = {config_value(v.value) if isinstance(v, ConstVal) else None for v in values}
        value = normalized.pop() if len(normalized) == 1 else None
        return ConfigState(value, site, how)

    @staticmethod
    def elements(values: Values) -> Values:
        """What iterating or indexing ``values`` yields."""
        result = EngineState.unmerged_elements(values)
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

    def log_effect(self, effect: WalkEffect) -> None:
        """Add ``effect`` to the summary of the walk in progress (with a walk memory)."""
        if self._recordings and not self._replaying:
            self._recordings[-1].effect(effect)

    def _push_recording(self, recording: Recording) -> None:
        """``recording`` is the innermost walk being summarized (the index notes its reads there)."""
        self._recordings.append(recording)
        self.index.recording = recording

    def _pop_recording(self) -> None:
        self._recordings.pop()
        self.index.recording = self._recordings[-1] if self._recordings else None
