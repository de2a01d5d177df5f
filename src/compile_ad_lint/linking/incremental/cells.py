"""The heap's cells and what a summarized walk did before its first access to one: named records.

A cell is a part of the heap that can gain values while a root is analyzed; each has a version
(``Heap.changed_cell``), and a memoized walk is reused while every cell it read keeps the version it
read (``MemoEntry.reads``). A walk summary's log names the cells it accessed first (``Access``),
with its prerequisite: the harvest it ran before reading (``Harvest``), or the store it made
(``Store``).

Cells are interned: making a cell gives the one object of that cell, so the dictionaries keyed by
cells (versions, reads, a summary's accesses) hash and compare them by identity, in C. They are
looked up on every attribute read, store and memo hit, where a fresh object per lookup compared its
fields in Python (an edit's replay slowed by a tenth: docs/performance.md). The tables keep each cell
made in the process (a few per class attribute and module global of the code analyzed);
``dict.setdefault`` keeps one object per cell across threads. Cells never leave the process."""

from __future__ import annotations

import enum
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

from ...core.locations import Location
from ..stores import joined_store, merged_store
from ..values import ClassVal


class StoreRule(enum.Enum):
    """How a store joins what a heap cell held with what is stored: a named kind, so that what a
    summary logs is data (a function in a record is not)."""

    #: ``stores.joined_store``: the union, normalized.
    JOIN = "join"
    #: ``stores.merged_store``: the union, a container's stored elements kept in one collection.
    MERGE = "merge"

    def __call__(self, current: frozenset, added: frozenset) -> frozenset:
        return _STORES[self](current, added)


_STORES: dict[StoreRule, Callable[[frozenset, frozenset], frozenset]] = {
    StoreRule.JOIN: joined_store,
    StoreRule.MERGE: merged_store,
}

CellT = TypeVar("CellT")


def _interned(cls: type[CellT], table: dict[Any, CellT], key: Hashable, *fields: object) -> CellT:
    """The one ``cls`` cell of ``fields`` (``key``: the table's key for them)."""
    found = table.get(key)
    if found is not None:
        return found
    cell = object.__new__(cls)
    for name, value in zip(cls.__match_args__, fields, strict=True):  # type: ignore[attr-defined]
        object.__setattr__(cell, name, value)
    return table.setdefault(key, cell)


_ATTR_CELLS: dict[tuple[ClassVal, str], AttrCell] = {}
_CLASS_CELLS: dict[ClassVal, ClassCell] = {}
_MODULES_CELLS: dict[ClassVal, ModulesCell] = {}
_GLOBAL_CELLS: dict[tuple[Path, str], GlobalCell] = {}
_SIDE_EFFECTS_CELLS: dict[str, SideEffectsCell] = {}
_DUAL_PARAMS_CELLS: dict[Location, DualParamsCell] = {}
_HARVESTED_CELLS: dict[tuple[ClassVal, ClassVal], HarvestedCell] = {}


# ``eq=False``: compared and hashed by identity, one object per cell (``_interned``); ``init=False``:
# made by ``__new__``, which returns the cell's object.


@dataclass(frozen=True, slots=True, eq=False, init=False)
class AttrCell:
    """The values ``cls``'s instances hold in attribute ``name`` (``Heap.instance_attrs``)."""

    cls: ClassVal
    name: str

    def __new__(cls, klass: ClassVal, name: str) -> AttrCell:
        return _interned(cls, _ATTR_CELLS, (klass, name), klass, name)


@dataclass(frozen=True, slots=True, eq=False, init=False)
class ClassCell:
    """All of ``cls``'s instance attributes, in the order first stored (``Heap.attributes_by_class``)."""

    cls: ClassVal

    def __new__(cls, klass: ClassVal) -> ClassCell:
        return _interned(cls, _CLASS_CELLS, klass, klass)


@dataclass(frozen=True, slots=True, eq=False, init=False)
class ModulesCell:
    """The module-valued attributes of ``cls``'s instances (what ``children()`` yields); its version
    follows every attribute's, a walk summary compares its contents."""

    cls: ClassVal

    def __new__(cls, klass: ClassVal) -> ModulesCell:
        return _interned(cls, _MODULES_CELLS, klass, klass)


@dataclass(frozen=True, slots=True, eq=False, init=False)
class GlobalCell:
    """Module ``path``'s global ``name`` (a registry a function fills: ``Reach.store_global``)."""

    path: Path
    name: str

    def __new__(cls, path: Path, name: str) -> GlobalCell:
        return _interned(cls, _GLOBAL_CELLS, (path, name), path, name)


@dataclass(frozen=True, slots=True, eq=False, init=False)
class SideEffectsCell:
    """Whether ``package``'s import side effects have run (``Reach.run_import_side_effects``; the
    effect is ``SideEffectsRun``)."""

    package: str

    def __new__(cls, package: str) -> SideEffectsCell:
        return _interned(cls, _SIDE_EFFECTS_CELLS, package, package)


@dataclass(frozen=True, slots=True, eq=False, init=False)
class DualParamsCell:
    """The modules holding dual parameters in the ``dual_level`` region at ``region`` (``DualParameters``)."""

    region: Location

    def __new__(cls, region: Location) -> DualParamsCell:
        return _interned(cls, _DUAL_PARAMS_CELLS, region, region)


@dataclass(frozen=True, slots=True, eq=False, init=False)
class HarvestedCell:
    """Not a cell of the heap: where a summarized walk needed ``cls``'s methods harvested with
    ``self`` an ``instance_cls`` (``Heap.harvest_instance_attributes``), which a check runs there.
    It holds nothing and never changes."""

    cls: ClassVal
    instance_cls: ClassVal

    def __new__(cls, klass: ClassVal, instance_cls: ClassVal) -> HarvestedCell:
        return _interned(cls, _HARVESTED_CELLS, (klass, instance_cls), klass, instance_cls)


Cell = AttrCell | ClassCell | ModulesCell | GlobalCell | SideEffectsCell | DualParamsCell | HarvestedCell


@dataclass(frozen=True, slots=True)
class Harvest:
    """The prerequisite of a read that followed a harvest: ``Heap.harvest_instance_attributes(cls,
    instance_cls)`` runs before the cell is compared."""

    cls: ClassVal
    instance_cls: ClassVal


@dataclass(frozen=True, slots=True)
class Store:
    """The walk's first access to the cell was a store (``Heap.note_write``): ``rule`` joins what the
    cell held with the stored ``values`` (None: the cell is compared as found).

    ``read_after``: what the walk found in the cell decides what it read, so a check compares it:
    the walk (or a callee) read the cell after the store, or the store has no rule. Otherwise the
    store joins what the cell holds with the stored values and nothing read the cell afterwards:
    what the walk found there changes nothing it did (the store is replayed as a join with what the
    heap holds then), and a check does not compare it."""

    rule: StoreRule | None
    values: frozenset
    read_after: bool

    def same_after(self, now: object, found: object) -> bool:
        """Whether the store makes what the cell holds ``now`` into what it made of what the walk
        ``found`` there: everything the walk read from the cell afterwards is then the same (later
        stores only add)."""
        rule = self.rule
        if not self.read_after or rule is None or not self.values:
            return False
        return rule(cast(frozenset, now or frozenset()), self.values) == rule(
            cast(frozenset, found or frozenset()), self.values
        )


#: What a walk did before its first access to a cell, when anything.
Prerequisite = Harvest | Store | None


def is_store(prerequisite: Prerequisite) -> bool:
    """Whether a summarized access was the walk's first store into the cell."""
    return isinstance(prerequisite, Store)


def is_unread_store(prerequisite: Prerequisite) -> bool:
    """Whether a summarized access was a store nothing read the cell after: not compared by a check."""
    return isinstance(prerequisite, Store) and not prerequisite.read_after


def read_after(prerequisite: Prerequisite) -> Prerequisite:
    """The prerequisite of a walk's first access to a cell, once something read the cell."""
    if isinstance(prerequisite, Store) and not prerequisite.read_after:
        return Store(prerequisite.rule, prerequisite.values, read_after=True)
    return prerequisite
