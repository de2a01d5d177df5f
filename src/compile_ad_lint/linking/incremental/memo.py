"""The incremental memo: each function walk memoized by its arguments and context, reused while the
heap cells it read keep their versions; with a walk memory, walks are summarized (``walks.py``) and
replayed in a later analysis. ``cached`` memoizes any derived value the same way."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import repeat
from pathlib import Path
from typing import Any

from ...core.locations import Location
from ...summary import model as ir
from ..arguments import Values
from ..cancellation import AnalysisCancelled
from ..events import (
    Hop,
)
from ..frames import Frame
from ..names import Names
from ..state import COMPUTED_AGAIN
from ..values import (
    FunctionVal,
)
from .cells import Cell, GlobalCell, Harvest, Prerequisite, Store, is_store, is_unread_store
from .entries import MemoEntry, SharedVersions, Versions
from .records import (
    Access,
    DualParams,
    EmitEvent,
    JoinAttribute,
    MergeAttribute,
    Part,
    RecordEvent,
    ReplaceEverywhere,
    RequestEntry,
    ResultKeys,
    ResultSize,
    SideEffectsRun,
    StampAttribute,
    StoreGlobal,
    StoreInHolders,
    WalkEffect,
)
from .walks import (
    Call,
    Closure,
    Recording,
    WalkSummary,
)

#: Data a walk may move (the outputs and origins of the arguments of the calls it makes) per walk
#: it counts for against ``max-function-walks``: the walks of the generated framework move under
#: 15, torch's none; a walk that moves 96,000 counts for 192.
UNITS_PER_WALK = 500


_MISSING = object()
#: ``_verified``'s default: no version, contents no summary holds.
_UNSEEN = (-1, _MISSING)


class Memo(Names):
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
    ) -> MemoEntry:
        """Walk the function (summarizing the walk when there is a walk memory), or replay a
        summary an earlier analysis made of the same walk when it still holds."""
        memory = self.walk_memory
        memory_key: tuple = ()
        key_hash = 0
        requests_before = self._entry_requests
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
                        versions: Versions | None = None
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
                        if found is not None and found is not before and self.still_valid(found.reads):
                            return found  # checking it ran a harvest that walked or replayed this very walk
                        entry = MemoEntry(
                            candidate.returns,
                            candidate.pending,
                            versions,
                            candidate,
                            True,
                            self._entry_requests > requests_before,
                        )
                        self._memo[memo_key] = entry
                        return entry
                finally:
                    self._replay_entries.pop()
                    self._checking[memo_key] -= 1
                    if not self._checking[memo_key]:
                        del self._checking[memo_key]
            memory.misses += 1
        self._walks += 1
        # Recursion through another path sees the fallback.
        self._memo[memo_key] = MemoEntry(fallback, (), {}, None, False)
        self._reading.append({})
        recording = None
        if memory is not None and (self._recordings or memory.summarizes(key_hash)):
            recording = Recording((function.path, function.qualname), len(frame.stack))
            recording.parts[Part("function", function.path, function.qualname)] = summary
            self._push_recording(recording)
            self._walking[memo_key] = recording
        units = self._units
        self._units_below.append(0)
        try:
            returns, pending = self.engine.walk_function(function, summary, bound, frame)
        finally:
            reads = self._reading.pop()
            below = self._units_below.pop()
            if recording is not None:
                self._pop_recording()
                del self._walking[memo_key]
        heavy = self._weigh(self._units - units, below)
        if recording is None:
            entry = self._memo[memo_key] = MemoEntry(
                returns, pending, reads, None, False, self._entry_requests > requests_before
            )
            return entry
        assert memory is not None
        recording.walks += 1 + heavy
        made = WalkSummary(
            tuple((path, self.index.view_of(path).digest) for path in sorted(recording.files)),
            tuple(recording.parts.items()),
            tuple((path, self.index.identity(path)) for path in sorted({key.path for key in recording.parts})),
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
        entry = self._memo[memo_key] = MemoEntry(
            returns, pending, reads, made, recording.storable, self._entry_requests > requests_before
        )
        return entry

    def cached(self, store: dict, key: object, compute: Callable[[], Any], cycle: object = COMPUTED_AGAIN) -> Any:
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
                    recording = self._recordings[-1]
                    # Taken in once per walk: again, it adds nothing but its calls, repeated (the
                    # value is not computed again there, so the walk does not depend on them).
                    if id(found) not in recording.derived:
                        recording.derived.add(id(found))
                        recording.absorb(found, walked_here=False)
                    if not found.storable:
                        self._depends_on_walk(None)
            return known
        if cycle is not COMPUTED_AGAIN:
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
        self, memo_key: tuple, stack: tuple[tuple[Path, str], ...], fallback: Values, entry: MemoEntry, fresh: bool
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
        summary, storable = entry.summary, entry.storable
        if summary is not None and storable:
            self._recordings[-1].call(Call(memo_key, stack, fallback, entry.returns, entry.pending, summary))
            return
        if summary is not None:
            self._recordings[-1].absorb(summary, walked_here=fresh)
        if not storable and not fresh:
            self._depends_on_walk(None)

    def _run_call(self, call: Call, stack: tuple[tuple[Path, str], ...]) -> MemoEntry | None:
        """What ``call`` gives now: the memoized walk, else a replay of a summary that holds, else a
        walk, from a frame with the call's context and ``stack`` (the call's, below the replayed
        walk's own callers now: the functions above it are another entry's where the summary was
        made in another root or walked from another entry). None when it cannot be run the way it
        was (its function is gone, the walk budget is spent, its check is in progress further up)."""
        function, bound, ctx, record = call.key
        found = self._memo.get(call.key)
        if found is not None and self.still_valid(found.reads):
            if found.requests:  # walked from another entry: the replayed one's callers too
                self._request_replay_entry()
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

    def _replayed_whole(self, closure: Closure) -> dict[Cell, int] | None:
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
            for read in closure.checked_reads:
                prerequisite = read.prerequisite
                if isinstance(prerequisite, Harvest) and (prerequisite.cls, prerequisite.instance_cls) not in harvested:
                    # A harvest runs where the walk ran it, after what came before it (the log's way):
                    # run here, before any of the effects, its method walks see another heap.
                    return None
                if not self._cell_holds(read.cell, prerequisite, read.contents):
                    return None
        finally:
            self._pop_recording()
        read_cells, stored_cells = closure.read_cells, closure.stored_cells
        versions: dict[Cell, int] = dict(zip(read_cells, map(cell_versions.get, read_cells, repeat(0))))
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
    ) -> tuple[Versions, dict[int, WalkSummary]] | None:
        """Replay ``summary`` if it is what walking now would do; the versions of the heap cells
        its outcome depends on (``MemoEntry``), or None. The files and definitions it read are
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
        versions: dict[Cell, int] = {}
        below: dict[int, Versions] = {}  # the calls', by identity
        stored = []
        callees: dict[int, WalkSummary] = {}
        cell_versions = self._cell_versions
        applied = held = False
        self._push_recording(Recording(None, -1))
        try:
            for at, entry in enumerate(summary.log):
                if isinstance(entry, Access):
                    cell, prerequisite = entry.cell, entry.prerequisite
                    if is_store(prerequisite):
                        stored.append(cell)  # its version after the walk's stores
                        if is_unread_store(prerequisite):
                            continue
                    if not self._cell_holds(cell, prerequisite, entry.contents):
                        return None
                    if not is_store(prerequisite):
                        versions.setdefault(cell, cell_versions.get(cell, 0))
                elif isinstance(entry, Call):
                    call = entry
                    found = self._run_call(call, stack + call.stack[len(stack) :])
                    if (
                        found is None
                        or not found.storable
                        or found.returns != call.returns
                        or found.pending != call.pending
                    ):
                        return None
                    if found.reads:
                        below[id(found.reads)] = found.reads
                    if found.summary is not call.summary and found.summary is not None:
                        callees[at] = found.summary
                else:
                    applied = True
                    self._replaying += 1
                    try:
                        self.replay_effect(entry)
                    finally:
                        self._replaying -= 1
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
        return (SharedVersions(versions, tuple(below.values())) if below else versions), callees

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
                current = index.part(key)
                if current is not part and current != part:
                    return False
                same_parts[key] = part
            return True

    def _depend_on_definitions(self, summary: WalkSummary | Closure) -> None:
        """The analysis depends on the files, definitions and missing entries of a summary it replays."""
        self.index.depend_on(summary.dependency_paths, summary.absent)

    def _cell_holds(self, cell: Cell, prerequisite: Prerequisite, contents: object) -> bool:
        """Whether ``cell`` holds what a summarized walk found there (``_replayed``)."""
        versions = self._cell_versions
        seen_version, seen_contents = self._verified.get(cell, _UNSEEN)
        if seen_contents is contents and seen_version == versions.get(cell, 0):
            return True
        if isinstance(prerequisite, Harvest):
            self.harvest_instance_attributes(prerequisite.cls, prerequisite.instance_cls)
        elif prerequisite is None and isinstance(cell, GlobalCell):
            self.module_global(cell.path, cell.name)
        now = self.cell_contents(cell)
        if now == contents:
            self._verified[cell] = (versions.get(cell, 0), contents)
            return True
        return isinstance(prerequisite, Store) and prerequisite.same_after(now, contents)

    def _request_replay_entry(self) -> None:
        """Ask for the callers of the entry a replay runs under (``RequestEntry``)."""
        path, qualname = self._replay_entries[-1]
        self.caller_requests.add((str(path), qualname))
        self._entry_requests += 1

    def replay_effect(self, effect: WalkEffect) -> None:
        """Do again what a summarized walk did (``log_effect``): its stores are made again with
        what they stored, joined with what the heap holds now, as the walk itself would."""
        match effect:
            case JoinAttribute(cls, name, values):
                self.join_attribute(cls, name, values)
            case MergeAttribute(cls, name, values):
                self.reach.merge_attribute(cls, name, values)
            case ReplaceEverywhere(base, values):
                self.reach.replace_everywhere(base, values)
            case StoreInHolders(collections, added):
                self.reach.store_in_holders(collections, added)
            case StampAttribute(cls, name, fresh, conditions, marked):
                self.stamp_attribute(cls, name, fresh, conditions, marked)
            case StoreGlobal(path, name, added):
                self.reach.store_global(path, name, added)
            case RecordEvent(event):
                if event not in self._recorded:
                    self._recorded.add(event)
                    self.events.append(event)
            case EmitEvent(event):
                self.events.append(event)
            case RequestEntry():
                self._request_replay_entry()
            case ResultSize(site, size):
                self._result_sizes.setdefault(site, set()).add(size)
            case ResultKeys(site, keys):
                self._result_keys.setdefault(site, set()).add(keys)
            case SideEffectsRun(package):
                self.reach.side_effects_done.add(package)
            case DualParams(added, region):
                self.dual_params.mark(added, region)
