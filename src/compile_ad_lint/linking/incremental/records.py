"""The entries of a summarized walk's log (``walks.py``): named records, one type per kind.

A walk's effects are replayed by type (``Memo.replay_effect``) and compared and hashed field by
field: a walk logs each effect once (``Recording.effect``), and a closure keeps each once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple

from ...core.findings import Condition
from ...core.locations import Location
from ..arguments import Values
from ..events import Event
from ..values import ClassVal, Instance
from .cells import Cell, Prerequisite

#: Which of the module index's answers a definition read is (``ModuleIndex.part``).
PartKind = Literal["function", "signature", "definition", "class", "block", "imports", "rebindable", "star_imports"]


class Part(NamedTuple):
    """A definition a summarized walk read: what ``ModuleIndex.<kind>`` answered for ``name`` in
    ``path`` (a block's index for ``block``; empty for what a whole module answers). A named tuple:
    a key of every summary's definitions, hashed at every index answer while a walk is recorded."""

    kind: PartKind
    path: Path
    name: str


@dataclass(frozen=True)
class JoinAttribute:
    """An instance attribute stored, joined with what the class's instances hold (``Heap.join_attribute``)."""

    cls: ClassVal
    name: str
    values: Values


@dataclass(frozen=True)
class MergeAttribute:
    """A class attribute stored, merged with what it holds (``Reach.merge_attribute``)."""

    cls: ClassVal
    name: str
    values: Values


@dataclass(frozen=True)
class ReplaceEverywhere:
    """An instance's values replaced wherever it is held (``Reach.replace_everywhere``)."""

    base: Instance
    values: Values


@dataclass(frozen=True)
class StampAttribute:
    """What a switch's arm stored in an instance attribute, through a callee, marked as made on that
    arm (``Heap.stamp_attribute``): ``fresh`` are the values the arm added, ``conditions`` its."""

    cls: ClassVal
    name: str
    fresh: Values
    conditions: tuple[Condition, ...]
    #: ``fresh`` marked with ``conditions``, as the walk made it (a replay reuses it).
    marked: Values = frozenset()


@dataclass(frozen=True)
class StoreInHolders:
    """Modules stored into a collection held by a local name, added where instance attributes hold
    that collection (``Reach.store_in_holders``): looked up again when replayed."""

    collections: Values
    added: Values


@dataclass(frozen=True)
class StoreGlobal:
    """A module global stored (``Reach.store_global``)."""

    path: Path
    name: str
    added: Values


@dataclass(frozen=True)
class RecordEvent:
    """A CAL004/CAL005 event recorded once (``State.record``)."""

    event: Event


@dataclass(frozen=True)
class EmitEvent:
    """An event appended at every occurrence (``State.emit``)."""

    event: Event


@dataclass(frozen=True)
class RequestEntry:
    """The callers of the walk's entry point asked for: replayed, the replay's entry point's."""


@dataclass(frozen=True)
class ResultSize:
    """A compiled call's result structure's length at ``site``."""

    site: Location
    size: int


@dataclass(frozen=True)
class ResultKeys:
    """A compiled call's result structure's keys at ``site`` (all strings: ``Calls`` logs no other)."""

    site: Location
    keys: tuple[str | None, ...]


@dataclass(frozen=True)
class SideEffectsRun:
    """A package's import side effects run (``Reach.run_import_side_effects``): the walk's
    summary is replayed in its root only."""

    package: str


@dataclass(frozen=True)
class DualParams:
    """Modules marked as holding dual parameters in a ``dual_level`` region (``DualParameters.mark``)."""

    added: Values
    region: Location


WalkEffect = (
    JoinAttribute
    | MergeAttribute
    | ReplaceEverywhere
    | StampAttribute
    | StoreInHolders
    | StoreGlobal
    | RecordEvent
    | EmitEvent
    | RequestEntry
    | ResultSize
    | ResultKeys
    | SideEffectsRun
    | DualParams
)


@dataclass(frozen=True)
class Access:
    """A walk's first access to a heap cell (``Recording.access``): the cell, the lazy computation
    run before reading it or how a store stored what (``cells.Prerequisite``), and what the cell
    held then."""

    cell: Cell
    prerequisite: Prerequisite
    contents: object
