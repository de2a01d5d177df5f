"""The heap's cells and what a summarized walk did before its first access to one: named records.

A cell is a part of the heap that can gain values while a root is analyzed; each has a version
(``Heap.changed_cell``), and a memoized walk is reused while every cell it read keeps the version it
read (``MemoEntry.reads``). A walk summary's log names the cells it accessed first (``Access``),
with its prerequisite: the harvest it ran before reading (``Harvest``), or the store it made
(``Store``). Cells are dictionary keys on every attribute read and memo hit, so each keeps its hash
(computed when it is made: a cell is made to be looked up) and compares by kind, then fields.
Cells never leave the process that made them (string hashes differ between processes)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from ...core.locations import Location
from ..values import ClassVal

#: How a store joins what a heap cell held with what is stored (``stores.joined_store``).
StoreRule = Callable[[frozenset, frozenset], frozenset]


@dataclass(frozen=True, slots=True)
class AttrCell:
    """The values ``cls``'s instances hold in attribute ``name`` (``Heap.instance_attrs``)."""

    cls: ClassVal
    name: str
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((AttrCell, self.cls, self.name)))

    def __hash__(self) -> int:
        return self._hash


@dataclass(frozen=True, slots=True)
class ClassCell:
    """All of ``cls``'s instance attributes, in the order first stored (``Heap.attributes_by_class``)."""

    cls: ClassVal
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((ClassCell, self.cls)))

    def __hash__(self) -> int:
        return self._hash


@dataclass(frozen=True, slots=True)
class ModulesCell:
    """The module-valued attributes of ``cls``'s instances (what ``children()`` yields); its version
    follows every attribute's, a walk summary compares its contents."""

    cls: ClassVal
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((ModulesCell, self.cls)))

    def __hash__(self) -> int:
        return self._hash


@dataclass(frozen=True, slots=True)
class GlobalCell:
    """Module ``path``'s global ``name`` (a registry a function fills: ``Reach.store_global``)."""

    path: Path
    name: str
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((GlobalCell, self.path, self.name)))

    def __hash__(self) -> int:
        return self._hash


@dataclass(frozen=True, slots=True)
class SideEffectsCell:
    """Whether ``package``'s import side effects have run (``Reach.run_import_side_effects``; the
    effect is ``SideEffectsRun``)."""

    package: str
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((SideEffectsCell, self.package)))

    def __hash__(self) -> int:
        return self._hash


@dataclass(frozen=True, slots=True)
class DualParamsCell:
    """The modules holding dual parameters in the ``dual_level`` region at ``region`` (``DualParameters``)."""

    region: Location
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((DualParamsCell, self.region)))

    def __hash__(self) -> int:
        return self._hash


@dataclass(frozen=True, slots=True)
class HarvestedCell:
    """Not a cell of the heap: where a summarized walk needed ``cls``'s methods harvested with
    ``self`` an ``instance_cls`` (``Heap.harvest_instance_attributes``), which a check runs there.
    It holds nothing and never changes."""

    cls: ClassVal
    instance_cls: ClassVal
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((HarvestedCell, self.cls, self.instance_cls)))

    def __hash__(self) -> int:
        return self._hash


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
