"""The heap and the object model: versioned cells (instance attributes, class attributes, module
globals a function fills), MRO, members, bound methods and the instance attributes a class's methods
store (harvests). Each cell read or written is noted for the incremental memo."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from ..core.findings import Condition
from ..knowledge import frameworks as fw
from ..knowledge import torch_api as api
from ..summary import model as ir
from .analyses.switches import stamped
from .arguments import Values
from .frames import Context, Frame
from .incremental import (
    AttrCell,
    Cell,
    ClassCell,
    DualParamsCell,
    GlobalCell,
    Harvest,
    HarvestedCell,
    JoinAttribute,
    ModulesCell,
    Recording,
    SideEffectsCell,
    StampAttribute,
    Store,
    StoreRule,
    Versions,
    each_version,
)
from .state import EngineState
from .stores import joined_store
from .values import (
    ClassVal,
    Compiled,
    Disabled,
    External,
    FunctionVal,
    Instance,
    normalize,
)

#: Methods that run whenever an instance exists (``harvest_instance_attributes``).
_CONSTRUCTORS = frozenset({"__init__", "__post_init__", "__new__", "__attrs_post_init__"})


class Heap(EngineState):
    def class_summary(self, cls: ClassVal) -> ir.ClassSummary | None:
        return self.index.class_(cls.path, cls.qualname)

    def bases(self, cls: ClassVal) -> list[object]:
        summary = self.class_summary(cls)
        if summary is None:
            return []
        frame = Frame(cls.path, {}, Context(), record=False)
        return [v for base in summary.bases for v in self.engine.eval(base, frame)]

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

        return self.engine.cached(self._mros, cls, linearize) if not seen else linearize()

    def is_module_class(self, cls: ClassVal) -> bool:
        return any(
            isinstance(b, External)
            and (api.is_torch_nn(b.name) or b.name in fw.FRAMEWORK_BASES or b.name in fw.MODULE_BASES)
            for b in self.mro(cls)
        )

    def find_member(self, cls: ClassVal, name: str) -> Values | None:
        """A class attribute (methods with their decorators applied) along the project MRO."""
        for klass in self.mro(cls):
            if isinstance(klass, ClassVal):
                attrs = self.class_attributes(klass)
                if name in attrs:
                    return self.engine.settle(attrs[name])
        return None

    def bind_methods(self, members: Values, instance: Instance) -> Values:
        """Bind plain, compiled and disabled methods to ``instance`` (static methods stay unbound)."""
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
            elif (
                isinstance(member, Disabled)
                and isinstance(member.target, FunctionVal)
                and not self.is_static(member.target)
            ):
                # ``@torch.compiler.disable`` on a method: it still runs with ``self`` (and what it
                # calls compiled still runs compiled: facts/double_backward_and_unused_outputs.py).
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

    def takes_instance(self, function: FunctionVal) -> bool:
        """Whether a method's first parameter is an instance (not a static or class method)."""
        definition = self.index.definition(function.path, function.qualname)
        return definition is None or not (definition.is_staticmethod or definition.is_classmethod)

    def class_attributes(self, cls: ClassVal) -> dict[str, Values]:
        if not self._recordings and cls in self._class_attrs:  # the common case, asked on every member
            return self._class_attrs[cls]
        env: dict[str, Values] = {}  # filled while the class body runs (what a cycle sees)

        def run_body() -> dict[str, Values]:
            summary = self.class_summary(cls)
            if summary is not None:
                self.class_bodies_running += 1
                try:
                    self.engine.exec_block(summary.body, Frame(cls.path, env, Context(), record=False))
                finally:
                    self.class_bodies_running -= 1
            return env

        return self.engine.cached(self._class_attrs, cls, run_body, cycle=env)

    def instance_attribute(self, cls: ClassVal, name: str) -> Values | None:
        """Values stored on ``self.<name>`` by any method of the class or its project bases."""
        found: set = set()
        for klass in self.mro(cls):
            if isinstance(klass, ClassVal):
                self.harvest_instance_attributes(klass, cls)
                self.read_cell(AttrCell(klass, name), harvested_for=cls)
                found |= self.instance_attrs.get((klass, name), frozenset())
        return normalize(found) if found else None

    def depend_on_reads(self, reads: Iterable[tuple[Cell, int]]) -> None:
        """The walk in progress depends on these heap cells, at these versions, as if it had read
        them itself: what it reuses (a memoized walk, ``Reach.submodules``) was computed from them."""
        if self._reading:
            outer = self._reading[-1]
            for cell, version in reads:
                outer.setdefault(cell, version)

    def read_cell(self, cell: Cell, harvested_for: ClassVal | None = None, contents: object = None) -> None:
        """Note that the walk in progress read ``cell`` (at its current version, if first read);
        ``harvested_for``: the instance class whose harvest of the cell's class preceded the read;
        ``contents``: what the cell holds, when the caller has just computed it (else looked up)."""
        if self._reading:
            self._reading[-1].setdefault(cell, self._cell_versions.get(cell, 0))
        if self._recordings and not self._replaying:
            recording = self._recordings[-1]
            if cell not in recording.accessed:
                prerequisite = None
                if harvested_for is not None:
                    assert isinstance(cell, (AttrCell, ModulesCell))  # an instance's attribute cells
                    prerequisite = Harvest(cell.cls, harvested_for)
                recording.access(cell, prerequisite, self.cell_contents(cell) if contents is None else contents)
            else:
                recording.read_again(cell)

    def note_write(self, cell: Cell, rule: StoreRule | None = None, values: Values = frozenset()) -> None:
        """The walk being summarized is about to store into ``cell``: what it finds there decides
        what the cell holds afterwards, and so what the walk reads from it later. ``rule`` combines
        what the cell holds with the stored ``values`` (the store's own; None: the cell is compared
        as found), so that finding other contents that the store turns into the same ones (another
        walk stored the same values first) leaves the walk's summary valid (``Store.same_after``);
        with a rule, what the cell held matters only if the cell is read afterwards (``Store.read_after``)."""
        if self._recordings and not self._replaying:
            recording = self._recordings[-1]
            if cell not in recording.accessed:
                recording.access(cell, Store(rule, values, read_after=rule is None), self.cell_contents(cell))

    def cell_contents(self, cell: Cell) -> object:
        """What ``cell`` holds now (what a walk reading it sees)."""
        match cell:
            case AttrCell(cls, name):
                return self.instance_attrs.get((cls, name))
            case GlobalCell(path, name):
                return self.globals.get(path, {}).get(name)
            case ClassCell(cls):
                return tuple(self.attributes_by_class.get(cls, {}).items())
            case ModulesCell(cls):
                return self.reach.module_values_of(cls)
            case SideEffectsCell(package):
                return package in self.reach.side_effects_done
            case DualParamsCell(region):
                return self.dual_params.modules.get(region, frozenset())
            case HarvestedCell():
                return None  # a harvest that ran (its prerequisite) holds nothing itself

    def cell_version(self, cell: Cell) -> int:
        """How many times ``cell`` changed in this analysis (what a memoized result records)."""
        return self._cell_versions.get(cell, 0)

    @property
    def summarizing(self) -> bool:
        """Whether a walk is being summarized for the walk memory (it reads each cell itself)."""
        return bool(self._recordings)

    def changed_cell(self, cell: Cell) -> None:
        self._cell_versions[cell] = self._cell_versions.get(cell, 0) + 1
        self.heap_changes += 1

    def join_attribute(self, cls: ClassVal, name: str, values: Values) -> None:
        """``self.<name> = values``: ``cls``'s instances may now hold ``values`` too."""
        self.note_write(AttrCell(cls, name), StoreRule.JOIN, values)  # before the store, in a summary's log
        self.log_effect(JoinAttribute(cls, name, values))
        known = self.instance_attrs.get((cls, name), frozenset())
        # Compared after the merge: data weaker than the known data adds nothing, and a store that
        # adds nothing would make every walk that read the attribute run again.
        updated = joined_store(known, values)
        if updated != known:
            self.store_attribute(cls, name, updated)

    def store_attribute(self, cls: ClassVal, name: str, values: Values) -> None:
        """``cls``'s instances now hold ``values`` in attribute ``name`` (a superset of what they held)."""
        if self._arm_writes:
            held = self.instance_attrs.get((cls, name), frozenset())
            for writes in self._arm_writes:
                writes.setdefault((cls, name), held)
        self.instance_attrs[(cls, name)] = values
        self.attributes_by_class.setdefault(cls, {})[name] = values
        self.changed_attribute(cls, name)

    @contextmanager
    def off_the_arms(self) -> Iterator[None]:
        """Work run lazily where something is first read (a class's harvest, a module's binding
        blocks, a package's import side effects), maybe on a switch's arm: what it stores is not
        the arm's doing (``stamp_arm_writes``)."""
        arms, self._arm_writes = self._arm_writes, []
        try:
            yield
        finally:
            self._arm_writes = arms

    def start_arm_writes(self) -> None:
        """A switch's arm begins: note the instance attributes it stores (``stamp_arm_writes``)."""
        self._arm_writes.append({})

    def stamp_arm_writes(self, conditions: tuple[Condition, ...]) -> None:
        """A switch's arm ended: the compiled values and autocast contexts it stored on objects,
        through a callee too (``if args.compile: apply_compile(model)``, ``self.compile_model()``),
        exist on that arm only, so they carry its ``conditions`` (what the arm's own code makes
        carries them from the start; a callee's walk does not know the switches above it)."""
        writes = self._arm_writes.pop()
        for (cls, name), held in writes.items():
            now = self.instance_attrs.get((cls, name), frozenset())
            if now is held:
                continue
            fresh = now - held
            marked = self._stamped(fresh, conditions) if fresh else fresh
            if marked != fresh:
                self.stamp_attribute(cls, name, fresh, conditions, marked)

    def stamp_attribute(
        self, cls: ClassVal, name: str, fresh: Values, conditions: tuple[Condition, ...], marked: Values
    ) -> None:
        """``fresh``, where ``cls``'s instances hold them in ``name``, made under ``conditions``
        (``marked``: all of ``fresh`` so made, kept in the walk's log for its replays)."""
        known = self.instance_attrs.get((cls, name), frozenset())
        present = known & fresh
        if not present:
            return
        self.note_write(AttrCell(cls, name))  # compared as found: the stamp depends on what is there
        self.log_effect(StampAttribute(cls, name, fresh, conditions, marked))
        made = marked if len(present) == len(fresh) else self._stamped(present, conditions)
        updated = normalize(known.difference(present) | made)
        if updated != known:
            self.store_attribute(cls, name, updated)

    def _stamped(self, values: Values, conditions: tuple[Condition, ...]) -> Values:
        """``stamped(values, *conditions)``, once per analysis: an arm run again (a loop, another
        entry point's walk, a replay) stamps the same blocks (the generated framework's per-block
        compiles: each model's ``layers`` 150 times in one check)."""
        key = (values, conditions)
        found = self._stamps.get(key)
        if found is None:
            found = self._stamps[key] = stamped(values, *conditions)
        return found

    def changed_attribute(self, cls: ClassVal, name: str) -> None:
        """``cls``'s instances may hold more values in attribute ``name``."""
        self.changed_cell(AttrCell(cls, name))
        self.changed_cell(ClassCell(cls))
        self.changed_cell(ModulesCell(cls))

    def still_valid(self, reads: Versions) -> bool:
        """Whether every heap cell in ``reads`` still has the version recorded there."""
        versions = self._cell_versions
        return all(versions.get(cell, 0) == version for cell, version in each_version(reads))

    def set_global(self, path: Path, name: str, current: Values, updated: Values) -> None:
        """Module ``path``'s global ``name`` now holds ``updated`` (it held ``current``)."""
        self.globals.setdefault(path, {})[name] = updated
        self.changed_cell(GlobalCell(path, name))

    def harvest_instance_attributes(self, klass: ClassVal, instance_cls: ClassVal) -> None:
        """Walk every method of ``klass`` with ``self`` an ``instance_cls``, once per analysis, for
        the attributes they store on ``self``.

        With a walk memory, the walk that needed the harvest depends on it only through the cells
        it then reads (each checked after the harvest ran again: ``read_cell``'s ``harvested_for``)
        and on the harvest running at that point (the ``HarvestedCell`` entry of its reads), not
        on what the harvest's own walks read: an edit of one method of the trainer walks that
        method again under the harvest, and the walks that read the trainer's attributes (its
        ``__init__``) replay when the attributes hold what they held."""
        if self._recordings and not self._replaying:
            recording, cell = self._recordings[-1], HarvestedCell(klass, instance_cls)
            if cell not in recording.accessed:  # the prerequisite made for the first access only
                recording.access(cell, Harvest(klass, instance_cls), None)
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
            with self.off_the_arms():  # run where the attributes are first read: not an arm's doing
                for name, qualname in summary.methods:
                    function = FunctionVal(klass.path, qualname)
                    if self.takes_instance(function):  # static and class methods store nothing on ``self``
                        frame = built if name in _CONSTRUCTORS else root
                        bound = replace(function, bound_self=Instance(instance_cls))
                        self.engine.call_function(bound, (), frame, hop=None)
        finally:
            if isolated:
                self._pop_recording()
