"""What the engine's helpers (reach, islands, results, switches, dual parameters) and the effects
(``effects/``, one handler per ``Effect``) ask of the engine, and what the engine's lower classes
call further up its stack.

They hold an ``EngineContext`` rather than the ``Interpreter`` itself, so none of them imports the
engine: the interpreter builds them and satisfies this Protocol (mypy checks it where they are built,
and where the interpreter hands itself to the effects as ``engine``). The classes of the engine's
stack (``state.py``) below a method's class reach it through that same ``engine`` reference, typed
``EngineCalls``: abstract interpretation recurses (a class's attributes run its body's statements, a
harvest walks its methods), so the heap calls the statements' layer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from ..core.findings import Condition
from ..core.locations import Location, StatementSite
from ..summary import model as ir
from .arguments import Args, Values
from .contexts import ConfigState
from .events import Event, Hop
from .frames import Context, Frame, PendingCall
from .incremental import Cell, StoreRule, Versions, WalkEffect
from .index import ModuleIndex
from .values import ClassVal, Compiled, FunctionVal, Instance


class ModuleReach(Protocol):
    """What the engine's module model answers for its other helpers (``Reach``)."""

    def instance_forward(self, instance: Instance) -> Values: ...

    def is_module_value(self, value: object) -> bool: ...

    def submodules(self, value: object) -> frozenset: ...

    def set_attribute(self, bases: Values, names: Values | None, values: Values) -> None: ...


class CompiledFunctionNotes(Protocol):
    """Where a compiled callable is noted as it is made and where it is called (``SecondOrders``: a
    function that differentiates twice, in its body or in what it calls)."""

    def note(self, compiled: Compiled, called: bool = False) -> None: ...


class DualParameterLog(Protocol):
    """Where a parameter given a dual in place is noted (``DualParameters``)."""

    def assigned(self, bases: Values, values: Values, region: Location) -> None: ...

    def mark(self, values: Values, region: Location) -> None: ...


class EngineContext(Protocol):
    index: ModuleIndex
    #: How many times any heap cell has changed.
    heap_changes: int
    #: How many class bodies are running (their attributes are still being bound).
    class_bodies_running: int
    #: The heap: module globals, the module-level statements run, instance attributes by
    #: (class, name) and by class in the order first stored.
    globals: dict[Path, dict[str, Values]]
    globals_run: set[tuple[Path, int]]
    instance_attrs: dict[tuple[ClassVal, str], Values]
    attributes_by_class: dict[ClassVal, dict[str, Values]]
    #: ``torch.compile``'s spellings with the project's configured compile wrappers.
    compile_names: frozenset[str]

    @property
    def reach(self) -> ModuleReach: ...

    @property
    def dual_params(self) -> DualParameterLog: ...

    @property
    def second_orders(self) -> CompiledFunctionNotes: ...

    @property
    def summarizing(self) -> bool: ...

    def loc(self, path: Path, span: ir.Span) -> Location: ...

    def off_the_arms(self) -> AbstractContextManager[None]: ...

    def site_of(self, frame: Frame, location: Location) -> StatementSite: ...

    def record(self, event: Event, frame: Frame) -> None: ...

    def record_config_writes(self, values: Values, site: Location, how: str) -> None: ...

    def config_state(self, values: Values, site: Location, how: str) -> ConfigState: ...

    def exec_block(self, statements: Sequence[ir.Stmt], frame: Frame) -> None: ...

    def decided_arms(
        self, statement: ir.Branch, frame: Frame
    ) -> tuple[tuple[tuple[ir.Stmt, ...], ...], tuple[Condition, Condition] | None]: ...

    def finish_region(self, frame: Frame, region: Location, start: int) -> None: ...

    def assign(self, target: ir.Target, values: Values, frame: Frame, span: ir.Span) -> None: ...

    def eval(self, expr: ir.Expr, frame: Frame) -> Values: ...

    def elements(self, values: Values) -> Values: ...

    def unmerged_elements(self, values: Iterable[object]) -> set: ...

    def lookup(self, name: str, frame: Frame) -> Values: ...

    def lookup_global(self, path: Path, name: str) -> Values | None: ...

    def attribute(self, bases: Values, name: str) -> Values: ...

    def class_summary(self, cls: ClassVal) -> ir.ClassSummary | None: ...

    def bases(self, cls: ClassVal) -> list[object]: ...

    def mro(self, cls: ClassVal, seen: frozenset = ...) -> list[object]: ...

    def is_module_class(self, cls: ClassVal) -> bool: ...

    def find_member(self, cls: ClassVal, name: str) -> Values | None: ...

    def bind_methods(self, members: Values, instance: Instance) -> Values: ...

    def instance_attribute(self, cls: ClassVal, name: str) -> Values | None: ...

    def depend_on_reads(self, reads: Iterable[tuple[Cell, int]]) -> None: ...

    def read_cell(self, cell: Cell, harvested_for: ClassVal | None = None, contents: object = None) -> None: ...

    def note_write(self, cell: Cell, rule: StoreRule | None = None, values: Values = ...) -> None: ...

    def cell_version(self, cell: Cell) -> int: ...

    def changed_cell(self, cell: Cell) -> None: ...

    def store_attribute(self, cls: ClassVal, name: str, values: Values) -> None: ...

    def still_valid(self, reads: Versions) -> bool: ...

    def set_global(self, path: Path, name: str, current: Values, updated: Values) -> None: ...

    def harvest_instance_attributes(self, klass: ClassVal, instance_cls: ClassVal) -> None: ...

    def eval_args(self, args: Sequence[ir.Arg], frame: Frame) -> Args: ...

    def call_values(
        self, callees: Values, args: Args, span: ir.Span, frame: Frame, func: ir.Expr | None = None
    ) -> Values: ...

    def log_effect(self, effect: WalkEffect) -> None: ...

    def cached(self, store: dict, key: object, compute: Callable[[], Any], cycle: object = ...) -> Any: ...

    def bind(self, function: FunctionVal, summary: ir.FunctionSummary, args: Args, called: bool = True) -> tuple: ...

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
    ) -> None: ...


class EngineCalls(EngineContext, Protocol):
    """The engine as the classes of its stack see it: what the effects see (``EngineContext``) and
    what the lower classes (state, heap, names, memo, external calls, calls) call further up the
    stack. ``Interpreter`` sets ``engine`` to itself (mypy checks it there)."""

    def call_function(self, function: FunctionVal, args: Args, frame: Frame, hop: Hop | None) -> Values: ...

    def enter_contexts(self, values: Values, ctx: Context, site: Location) -> Context: ...

    def note_leaf_reads(self, bases: Values, name: str, frame: Frame) -> None: ...

    def settle(self, values: Values) -> Values: ...

    def walk_function(
        self, function: FunctionVal, summary: ir.FunctionSummary, bound: tuple, caller: Frame
    ) -> tuple[Values, tuple[PendingCall, ...]]: ...
