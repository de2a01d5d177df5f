"""Function walks kept across analyses by a long-lived front end: the language server's edits.

An edit of a training script re-analyzes the script, and with it every function it reaches: the
model, data and framework code whose files did not change (nine tenths of the walk time of an
edit of the generated framework's trainer or of pytorch-image-models' ``train.py``). A walk's
outcome is a function of what it was given (the function, its bound arguments, the context, whether
it records, the call depth left), of the files it read, and of what it read from the heap (the
values of instance attributes, class attributes and module globals, ``Interpreter.read_cell``).
``WalkSummary`` keeps all of that with what the walk did to the interpreter (its effects, in order:
attribute and global stores, events, caller requests, tuple sizes, import side effects run), so a
later analysis given the same inputs replays the effects instead of walking again.

A summary is used only when every file it read has the same digest and every heap cell it read
holds what it held then, asked through the same lazy accessors (a class's attributes are harvested
first, a module's binding blocks run first: what the walk would have done). Walks whose outcome
depends on the call stack above them are not kept: one cut short by recursion into a function
walked further up, or one that used such a walk's result. The language server uses this for the
analyses it publishes at once after an edit; its project pass, whose findings are the CLI's, walks
afresh.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

#: A heap cell (``("attr", class, name)``, ``("class", class)``, ``("modules", class)``,
#: ``("global", path, name)``: ``Interpreter._cell_versions``; or ``("harvested", class, instance
#: class)``, holding nothing: where the walk needed that harvest, which a check runs there), the
#: lazy computation the walk ran before reading it (``("harvest", class, instance class)`` or
#: None) or, when its first access was a store, how it stored what (``(WRITTEN or STORED, how,
#: values)``), and what the cell held when the walk first read or stored into it.
CellRead = tuple[tuple, tuple | None, object]

#: The walk's first access to a cell was a store, and it (or a callee) read the cell afterwards:
#: what it found there decides what it read (``Interpreter.note_write``).
WRITTEN = "written"
#: The walk's first access to a cell was a store that joins what the cell holds with the stored
#: values (``joined_store``, ``merged_store``), and nothing read the cell afterwards: what it found
#: there changes nothing the walk did (the store is replayed as a join with what the heap holds
#: then), so a check does not compare it. A read after the store makes it ``WRITTEN``.
STORED = "stored"


def is_unread_store(prerequisite: tuple | None) -> bool:
    return prerequisite is not None and prerequisite[0] == STORED


def read_after(read: tuple[tuple | None, object]) -> tuple[tuple | None, object]:
    """A walk's first access to a cell (prerequisite, contents), once something read the cell."""
    prerequisite, contents = read
    if is_unread_store(prerequisite):
        assert prerequisite is not None
        return (WRITTEN, *prerequisite[1:]), contents
    return read


@dataclass(frozen=True)
class WalkSummary:
    #: Files whose whole contents it depends on, with their digests.
    files: tuple[tuple[Path, str], ...]
    #: Definitions it read (``ModuleIndex.part``), with what they were: a change elsewhere in
    #: their files (the edited script's other functions) leaves it valid.
    parts: tuple[tuple[tuple[str, Path, str], object], ...]
    #: ``ModuleIndex.absent`` entries its imports recorded (dependencies of the root's result).
    absent: frozenset[tuple[str, str]]
    reads: tuple[CellRead, ...]
    #: ``Interpreter`` effects, in order (``Interpreter.replay_effect`` applies one).
    effects: tuple[tuple, ...]
    returns: frozenset
    pending: tuple
    #: Function walks it took, its own included (they count against ``MAX_FUNCTION_WALKS``).
    walks: int


@dataclass
class Recording:
    """What a walk in progress has read and done, its callees' included."""

    #: None for what is not one function's walk: a lazy value, a harvest's method walks together.
    function: tuple[Path, str] | None
    #: The function's position in the frame stack (``len`` of its caller's stack; -1 without one).
    position: int
    files: set[Path] = field(default_factory=set)
    #: Definitions read (``ModuleIndex.part``): (kind, file, name) to what they were.
    parts: dict[tuple[str, Path, str], object] = field(default_factory=dict)
    absent: set[tuple[str, str]] = field(default_factory=set)
    reads: dict[tuple, tuple[tuple | None, object]] = field(default_factory=dict)
    effects: dict[tuple, None] = field(default_factory=dict)  # an ordered set
    walks: int = 0
    #: False once its outcome is known to depend on the call stack above it.
    storable: bool = True

    def absorb(self, other: WalkSummary | Recording, *, walked_here: bool = True) -> None:
        """Take in what a callee's walk (or a replayed summary of one) read and did; its walks
        count against this walk's unless they were ``walked_here`` earlier (a lazy value computed
        once, used again)."""
        if isinstance(other, Recording):
            files: Iterable[Path] = other.files
            parts: Iterable[tuple[tuple[str, Path, str], object]] = other.parts.items()
            reads: Iterable[tuple[tuple, tuple[tuple | None, object]]] = other.reads.items()
        else:
            files = (path for path, _ in other.files)
            parts = other.parts
            reads = ((cell, (prerequisite, contents)) for cell, prerequisite, contents in other.reads)
        self.files.update(files)
        for key, part in parts:
            self.parts.setdefault(key, part)
        self.absent |= other.absent
        mine = self.reads
        for cell, read in reads:
            first = mine.get(cell)
            if first is None:
                mine[cell] = read
            elif is_unread_store(first[0]) and not is_unread_store(read[0]):
                mine[cell] = read_after(first)  # the callee read what this walk stored
        self.effects.update(dict.fromkeys(other.effects))
        if walked_here:
            self.walks += other.walks


class WalkMemory:
    """Summaries by walk key, the most recently used kept (``capacity``); a few per key, since a
    walk is summarized again when the heap cells it read grew."""

    PER_KEY = 4

    def __init__(self, capacity: int = 200_000) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[tuple, tuple[WalkSummary, ...]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def candidates(self, key: tuple) -> tuple[WalkSummary, ...]:
        found = self._entries.get(key, ())
        if found:
            self._entries.move_to_end(key)
        return found

    def put(self, key: tuple, summary: WalkSummary) -> None:
        self._entries[key] = (summary, *self._entries.get(key, ()))[: self.PER_KEY]
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)
