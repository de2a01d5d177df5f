"""Function walks kept across analyses by a long-lived front end: the language server's edits.

An edit of a training script re-analyzes the script, and with it every function it reaches: the
model, data and framework code whose files did not change (nine tenths of the walk time of an
edit of the generated framework's trainer or of pytorch-image-models' ``train.py``). A walk's
outcome is a function of what it was given (the function, its bound arguments, the context, whether
it records, the call depth left), of the files it read, and of what it read from the heap (the
values of instance attributes, class attributes and module globals, ``Heap.read_cell``).
``WalkSummary`` keeps all of that with what the walk did to the interpreter (its effects, in order:
attribute and global stores, events, caller requests, tuple sizes, import side effects run), so a
later analysis given the same inputs replays the effects instead of walking again.

A summary is used only when every file and definition it read is unchanged, and it is checked
and replayed in the order the walk ran (``Memo._replayed``): each heap cell it read must
hold what it held then, asked through the same lazy accessors (a class's attributes are harvested
first, a module's binding blocks run first: what the walk would have done), after the effects that
preceded the read in the walk are applied again. A callee whose outcome did not depend on the call
stack is not part of its caller's summary: the caller depends on what that call returned and left
pending (``Call``), and the check runs the callee there (replayed, or walked again when its own
summary no longer holds) and compares. An edit of one function then walks that function; its
callers are replayed when it returns what it returned (they were walked again, with everything
they call checked one by one: pytorch-image-models' 600-line ``main`` for an edit of
``train_one_epoch``). Replaying a subtree call by call costs more than replaying it whole, so a
summary is first tried whole (``Closure``: everything below it merged, checked before any effect,
as every summary was before calls were cut), and by its log when that fails (something below it
changed, or its reads depend on the order its effects and harvests ran in: it is then replayed by
its log from then on, ``WalkMemory.by_log_only``). Walks whose outcome depends on the call stack
above them are not kept: one cut short by recursion into a function walked further up, or one that
used such a walk's result. A walk's request for the callers of the entry point it was walked from is
replayed for the replaying analysis's entry point (``RequestEntry``), and a walk that ran a
package's import side effects, which depend on the root analyzed, is replayed in that root's
analyses only (``WalkSummary.root``): the others are replayed in any root. The language server
uses this for the analyses it publishes at once after an edit (every walk summarized:
``WalkMemory.every_walk``); a check, and the language server's project pass like it, for the walks
its roots repeat (``WalkMemory.for_check``).
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from ...layout import LayoutFacts
from .cells import Cell, Prerequisite, is_store, is_unread_store, read_after
from .records import Access, Part, SideEffectsRun, WalkEffect

#: The entries of a summary's log, in the order the walk did them:
#: ``Access(cell, prerequisite, contents)``: its first access to a heap cell (``cells.py``), with
#: what it did first (a ``Harvest`` it ran before reading, or the ``Store`` it made) and what the
#: cell held then;
#: a ``WalkEffect`` (``records.py``): something it did to the interpreter
#: (``Memo.replay_effect``);
#: a ``Call``: a call whose outcome it depends on.


@dataclass(frozen=True)
class Call:
    """A call made by a summarized walk to a function whose walk did not depend on the stack above
    it: the caller depends on what it returned and left pending, not on what it read. A check runs
    the callee again with the same memo key and stack below the replayed walk
    (``Memo._run_call``)."""

    #: the memo key (``EngineState._memo``): the function, its bound arguments, the context, the record flag.
    key: tuple
    stack: tuple[tuple[Path, str], ...]
    #: What the call gives while its walk is in progress (recursion through another path).
    fallback: frozenset
    returns: frozenset
    pending: tuple
    #: The callee's summary when the call was made (its ``closure`` goes into the caller's).
    summary: WalkSummary = field(compare=False)


#: One entry of a summary's log.
LogEntry = Access | WalkEffect | Call


@dataclass(frozen=True)
class Closure:
    """What a walk and every call below it read and did, merged: the first access to each cell,
    each effect once, in order. Checked whole before any of its effects is replayed (what every
    summary was before calls were cut), it replays a subtree the edit did not touch in one go, where
    the log replays its calls one by one (``Memo._replayed_whole``); the log is the way when
    something below changed."""

    files: tuple[tuple[Path, str], ...]
    parts: tuple[tuple[Part, object], ...]
    #: The views the parts were read from (``WalkSummary.part_files``); None for a file the
    #: summaries merged read in different views (its parts are compared one by one).
    part_files: tuple[tuple[Path, tuple | None], ...]
    absent: frozenset[tuple[str, str]]
    reads: tuple[Access, ...]
    effects: tuple[WalkEffect, ...]
    #: The summaries merged, each once however many calls made it: a fresh analysis walks a
    #: callee once for all the calls with its key, so replaying them spends each one's walks once
    #: (``Memo._spend``; counted per call, a function calling another twice, each level
    #: down, spent 2 ** depth walks).
    summaries: frozenset[WalkSummary]
    #: The roots the summaries merged are bound to (``WalkSummary.root``): replayed whole only
    #: in the analysis of those.
    roots: frozenset[Path]

    # What a check of the closure goes through, taken apart once per closure (a closure is
    # checked again in every edit of the language server: 600 times in one edit of the
    # generated framework's trainer).

    @cached_property
    def checked_reads(self) -> tuple[Access, ...]:
        """The reads a check compares: all but stores nothing read after (``Store.read_after`` false), which are
        replayed as joins with whatever the cell holds then."""
        return tuple(read for read in self.reads if not is_unread_store(read.prerequisite))

    @cached_property
    def read_cells(self) -> tuple[Cell, ...]:
        """The cells the walks read before storing into them: the outcome depends on their
        versions before the effects are replayed."""
        return tuple(read.cell for read in self.reads if not is_store(read.prerequisite))

    @cached_property
    def stored_cells(self) -> tuple[Cell, ...]:
        """The cells the walks stored into first: the outcome depends on their versions after."""
        return tuple(read.cell for read in self.reads if is_store(read.prerequisite))

    @cached_property
    def dependency_paths(self) -> frozenset[Path]:
        """``_dependency_paths``: kept, as a set whose members' hashes are stored."""
        return _dependency_paths(self)


def _dependency_paths(summary: WalkSummary | Closure) -> frozenset[Path]:
    """The files an analysis replaying ``summary`` depends on: those it read whole and those
    holding the definitions it read. Kept on the summary: a replay adds them to the analysis's
    dependencies from a set (a closure of the generated trainer's edit has 32 definitions, and a
    path's hash is a Python call each time it is taken from a tuple)."""
    return frozenset(path for path, _ in summary.files) | frozenset(key.path for key, _ in summary.parts)


def closure_of(summary: WalkSummary) -> Closure:
    """The closure of ``summary``'s walk: what it read and did itself (its ``log``), its calls'
    closures merged where it made them."""
    all_files = dict(summary.files)
    all_parts = dict(summary.parts)
    part_files: dict[Path, tuple | None] = dict(summary.part_files)
    all_absent = set(summary.absent)
    all_summaries = {summary}
    reads: dict[Cell, Access] = {}
    effects: dict[WalkEffect, None] = {}

    def access(read: Access) -> None:
        first = reads.get(read.cell)
        if first is None:
            reads[read.cell] = read
        elif not is_unread_store(read.prerequisite):
            reads[read.cell] = replace(first, prerequisite=read_after(first.prerequisite))

    for entry in summary.log:
        if isinstance(entry, Access):
            access(entry)
        elif isinstance(entry, Call):
            below = entry.summary.closure
            for path, digest in below.files:
                all_files.setdefault(path, digest)
            for key, part in below.parts:
                all_parts.setdefault(key, part)
            for path, identity in below.part_files:
                if part_files.setdefault(path, identity) != identity:
                    part_files[path] = None
            all_absent |= below.absent
            for read in below.reads:
                access(read)
            effects.update(dict.fromkeys(below.effects))
            all_summaries |= below.summaries
        else:
            effects[entry] = None
    return Closure(
        tuple(all_files.items()),
        tuple(all_parts.items()),
        tuple(part_files.items()),
        frozenset(all_absent),
        tuple(reads.values()),
        tuple(effects),
        frozenset(all_summaries),
        frozenset(merged.root for merged in all_summaries if merged.root is not None),
    )


@dataclass(frozen=True, eq=False)  # compared by identity: a summary is one walk's
class WalkSummary:
    #: Files whose whole contents it depends on, with their digests.
    files: tuple[tuple[Path, str], ...]
    #: Definitions it read (``ModuleIndex.part``), with what they were: a change elsewhere in
    #: their files (the edited script's other functions) leaves it valid.
    parts: tuple[tuple[Part, object], ...]
    #: The views of the files those definitions are in when it was made (``ModuleView.identity``):
    #: a definition is what its file's view makes of it, so where every one of these views is the
    #: same the parts need no comparing (``Memo._definitions_hold``; an edit of the
    #: generated framework's trainer checks 17 parts in 4 files per summary on average).
    part_files: tuple[tuple[Path, tuple], ...]
    #: ``ModuleIndex.absent`` entries its imports recorded (dependencies of the root's result).
    absent: frozenset[tuple[str, str]]
    #: What it read, did and called, in order (``Access``, ``WalkEffect`` and ``Call`` entries).
    log: tuple[LogEntry, ...]
    returns: frozenset
    pending: tuple
    #: Function walks it took, its own and those of the callees it absorbed (not ``Call``'s:
    #: they count when the check runs them), against ``max-function-walks``.
    walks: int
    #: The root whose analysis made it when it depends on which root is analyzed
    #: (``Recording.root_dependent``), else None: replayed in that root's analyses only.
    root: Path | None = None

    @cached_property
    def closure(self) -> Closure:
        """Built when first checked (and kept): summaries replayed by their log never need one."""
        return closure_of(self)

    @cached_property
    def dependency_paths(self) -> frozenset[Path]:
        """``_dependency_paths``: kept, as a set whose members' hashes are stored."""
        return _dependency_paths(self)

    def with_callees(self, summaries: dict[int, WalkSummary]) -> WalkSummary:
        """This summary with the calls at these log positions made to these callee summaries (a
        check replayed it calling summaries made since): its closure is theirs."""
        log = list(self.log)
        for at, summary in summaries.items():
            call = log[at]
            assert isinstance(call, Call)
            log[at] = replace(call, summary=summary)
        return replace(self, log=tuple(log))


@dataclass
class Recording:
    """What a walk in progress has read, done and called."""

    #: None for what is not one function's walk: a lazy value, a harvest's method walks together.
    function: tuple[Path, str] | None
    #: The function's position in the frame stack (``len`` of its caller's stack; -1 without one).
    position: int
    files: set[Path] = field(default_factory=set)
    #: Definitions read (``ModuleIndex.part``), to what they were.
    parts: dict[Part, object] = field(default_factory=dict)
    absent: set[tuple[str, str]] = field(default_factory=set)
    #: The groups of missing entries (``ModuleIndex._groups``, by id) in ``absent`` already.
    lookups: set[int] = field(default_factory=set)
    log: list[LogEntry] = field(default_factory=list)
    #: Where in ``log`` each cell's first access is.
    accessed: dict[Cell, int] = field(default_factory=dict)
    #: The effects in ``log`` (each is logged once).
    effects: set[WalkEffect] = field(default_factory=set)
    #: The lazy values' recordings taken in (``Memo.cached``), by id: each once.
    derived: set[int] = field(default_factory=set)
    walks: int = 0
    #: False once its outcome is known to depend on the call stack above it.
    storable: bool = True
    #: True once it ran the import side effects of a package (a ``SideEffectsRun`` effect): which
    #: modules those are depends on the root analyzed (its package chain and imports,
    #: ``Reach.run_import_side_effects``), so the walk's summary is replayed in that root only.
    #: Replayed in another root, it carried the files of the root that made it, and not the files
    #: of the root's own package: other dependencies than walking gives. A walk that found them
    #: run (read its ``SideEffectsCell``) depends on what they registered through the registry's
    #: cell, compared like any other: it is replayed in any root where they have run too. A walk
    #: that absorbs one (``absorb``) takes in its effects, this one among them.
    root_dependent: bool = False

    def access(self, cell: Cell, prerequisite: Prerequisite, contents: object) -> None:
        """The walk's first access to ``cell`` (nothing when it accessed the cell before)."""
        if cell not in self.accessed:
            self.accessed[cell] = len(self.log)
            self.log.append(Access(cell, prerequisite, contents))

    def read_again(self, cell: Cell) -> None:
        """A read of ``cell``, which the walk accessed before: a store then was not the last word."""
        at = self.accessed[cell]
        first = self.log[at]
        assert isinstance(first, Access)
        if is_unread_store(first.prerequisite):
            self.log[at] = replace(first, prerequisite=read_after(first.prerequisite))

    def effect(self, effect: WalkEffect) -> None:
        if effect not in self.effects:
            self.effects.add(effect)
            self.log.append(effect)
            if isinstance(effect, SideEffectsRun):
                self.root_dependent = True

    def call(self, call: Call) -> None:
        self.log.append(call)

    def absorb(self, other: WalkSummary | Recording, *, walked_here: bool = True) -> None:
        """Take in what a callee's walk (one that depended on the stack: the caller's outcome then
        does too), a replayed summary of one or a lazy value read and did; its walks count against
        this walk's unless they were ``walked_here`` earlier (a lazy value computed once, used
        again)."""
        if isinstance(other, Recording):
            files: Iterable[Path] = other.files
            parts: Iterable[tuple[Part, object]] = other.parts.items()
        else:
            files = (path for path, _ in other.files)
            parts = other.parts
        self.files.update(files)
        for key, part in parts:
            self.parts.setdefault(key, part)
        self.absent |= other.absent
        accessed = self.accessed
        for entry in other.log:
            if isinstance(entry, Access):
                at = accessed.get(entry.cell)
                if at is None:
                    accessed[entry.cell] = len(self.log)
                    self.log.append(entry)
                elif not is_unread_store(entry.prerequisite):
                    self.read_again(entry.cell)  # the callee read what this walk stored
            elif isinstance(entry, Call):
                self.log.append(entry)
            else:
                self.effect(entry)
        if walked_here:
            self.walks += other.walks


class WalkMemory:
    """Summaries by walk key, the most recently used kept (``capacity``); a few per key, since a
    walk is summarized again when the heap cells it read grew.

    A long-lived front end's memory (``every_walk``: the language server's) summarizes every walk,
    so that an edit's check replays all the code the edit did not change. A check's (``for_check``:
    one per process, kept across the roots that process analyzes) summarizes only what is likely
    to be walked again, since summarizing a walk costs about what walking it costs: a walk whose
    key an earlier root walked (with everything it calls), and only while the roots so far (the
    process's first aside: it has nothing to repeat) repeat at least ``REPEATED_SHARE`` of their
    walk keys. The entry points of a training framework reach the same trainer, models and data
    code (81 % of the generated framework's walk keys repeat across its roots, 75 % of peft's:
    their checks take 15 % and 24 % less, diffusers' examples/dreambooth 28 %), where torch's own
    files repeat 9 % (none of whose summaries ever held) and pytorch-image-models' 30 %:
    summarizing there only cost time. Replaying a summary gives what walking again gives
    (``Memo._replayed``), so the findings do not depend on which roots a process analyzed before."""

    PER_KEY = 16
    #: The share of the walk keys of the roots analyzed so far that an earlier root walked too,
    #: from which a check's memory summarizes repeated walks.
    REPEATED_SHARE = 0.5

    def __init__(self, capacity: int = 200_000, *, every_walk: bool = True) -> None:
        self.capacity = capacity
        self.every_walk = every_walk
        self._retired = False
        #: The hashes of the walk keys of the roots analyzed so far (a check's memory only).
        self._walked: set[int] = set()
        self._keys = 0
        self._keys_repeated = 0
        self._entries: OrderedDict[tuple, tuple[WalkSummary, ...]] = OrderedDict()
        #: Summaries whose closure did not hold where their log did: replayed by their log from
        #: then on (the closure checks every read before any effect, and what a walk read after
        #: its own effects or a harvest it ran part way is found otherwise there; such a check
        #: failed after 90% of its reads 102 times in an edit of pytorch-image-models).
        self.by_log_only: weakref.WeakSet[WalkSummary] = weakref.WeakSet()
        self.hits = 0
        self.misses = 0
        #: What the analyses that walked the kept summaries found of the file system besides file
        #: contents (``layout_holds``): a summary replays what its walk's imports found, so the
        #: memory holds only while their import roots, missing candidates, package markers and
        #: links are what they were.
        self._roots: tuple[Path, ...] | None = None
        #: Missing candidates by folder (a root's result records them so: thousands per root).
        self._absent: dict[str, set[str]] = {}
        self._layout = LayoutFacts()

    def note_layout(
        self, roots: Iterable[Path], absent: Iterable[tuple[str, Iterable[str]]], layout: LayoutFacts
    ) -> None:
        """An analysis with these import ``roots`` that walked with this memory found this
        (``absent``: each folder with the candidate entries found missing in it)."""
        self._roots = tuple(roots)
        for folder, entries in absent:
            self._absent.setdefault(folder, set()).update(entries)
        if not (set(layout.packages) <= set(self._layout.packages) and set(layout.links) <= set(self._layout.links)):
            self._layout = self._layout.union(layout)

    def layout_holds(
        self, roots: Iterable[Path], holds: Callable[[Iterable[tuple[str, Collection[str]]], LayoutFacts], bool]
    ) -> bool:
        """Whether an analysis with import ``roots`` may replay the kept summaries: ``holds`` says
        whether the missing candidates and layout facts noted are still so."""
        return self._roots is None or (self._roots == tuple(roots) and holds(self._absent.items(), self._layout))

    def clear(self) -> None:
        """Forget every summary (the file system changed under them: ``layout_holds``)."""
        self._entries.clear()
        self.by_log_only = weakref.WeakSet()
        self._walked.clear()
        self._keys = self._keys_repeated = 0
        self._roots = None
        self._absent.clear()
        self._layout = LayoutFacts()

    @classmethod
    def for_check(cls) -> WalkMemory:
        return cls(every_walk=False)

    def retire(self) -> None:
        """Forget every summary and make no more (a check's memory past its process's memory budget:
        ``pipeline.tuning``); replaying gives what walking gives, so the findings stay the same."""
        self.clear()
        self._retired = True

    @property
    def summarizing(self) -> bool:
        """Whether the next root's walks are summarized (and summaries replayed) at all."""
        if self._retired:
            return False
        return self.every_walk or (self._keys > 0 and self._keys_repeated >= self.REPEATED_SHARE * self._keys)

    def summarizes(self, key_hash: int) -> bool:
        """Whether a walk with a key of this hash is summarized when no walk being summarized
        called it (one that is calls it: its summary needs the callee's)."""
        return self.every_walk or key_hash in self._walked

    def root_walked(self, key_hashes: set[int]) -> None:
        """A root's analysis is over: these are the hashes of its walks' keys (walked or replayed)."""
        if self.every_walk:
            return
        if self._walked:  # a process's first root has no earlier root to repeat: it does not count
            self._keys += len(key_hashes)
            self._keys_repeated += len(key_hashes & self._walked)
        self._walked |= key_hashes

    def candidates(self, key: tuple) -> tuple[WalkSummary, ...]:
        found = self._entries.get(key, ())
        if found:
            self._entries.move_to_end(key)
        return found

    def replace(self, key: tuple, old: WalkSummary, new: WalkSummary) -> None:
        self._entries[key] = tuple(new if kept is old else kept for kept in self._entries.get(key, ()))

    def put(self, key: tuple, summary: WalkSummary) -> None:
        self._entries[key] = (summary, *self._entries.get(key, ()))[: self.PER_KEY]
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)
