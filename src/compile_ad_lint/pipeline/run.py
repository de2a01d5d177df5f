"""One check's analysis of roots: from the result cache, in this process, or in worker processes;
and the rounds' caller discovery over the checked files."""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..cache import SummaryCache, content_digest
from ..core.settings import Config
from ..layout import LayoutFacts, LayoutProbe, PackageLayout
from ..linking.cancellation import AnalysisCancelled
from ..project import SourceFile, import_roots, read_source
from .results import (
    WITHOUT_EVIDENCE,
    CheckRecord,
    anchored_key,
    called_names_key,
    check_key,
    derived_key,
    reads_key,
    result_key,
    scope_digest,
)

# What analyzing needs (the engine, the workers, caller discovery, root results) is imported where
# it is used: a check served from its record (a warm run) loads none of it.
if TYPE_CHECKING:
    from ..linking.incremental import WalkMemory
    from ..summary.view import ViewMemory
    from .root_results import RootResult
    from .workers import WorkerPool
    from .workspace import Workspace


class Settings(Protocol):
    """What a run reads of the analyzer it serves (``api.Analyzer``)."""

    config: Config
    jobs: int
    progress: Callable[[int, int], None] | None
    walk_memory: WalkMemory | None
    views: ViewMemory | None
    replay_repeated_walks: bool


#: Below this many roots to analyze, starting worker processes costs more than it saves. 4, not
#: 16: pytorch-image-models (13 roots) 5.8 -> 3.9-4.7 s cold, torchtitan 4.8 -> 3.1-3.5 s, a
#: 3-root nanoGPT stays in process (measured on 2 cores).
_PARALLEL_ROOTS = 4
#: Below this many files to scan for called names, the workers are not asked to help.
_PARALLEL_SCAN_FILES = 16


class Run:
    """One check's analysis of roots: from the result cache, in this process, or in workers."""

    def __init__(
        self,
        analyzer: Settings,
        files: list[SourceFile],
        paths: Sequence[str],
        cache: SummaryCache | None,
        overrides: Mapping[Path, bytes],
        digests: dict[Path, str],
        sizes: Mapping[Path, int],
    ) -> None:
        self.analyzer = analyzer
        self.cache = cache
        self.overrides = overrides
        self.digests = dict(digests)
        #: The checked files' contents, which key the whole check's record (``digests`` grows with
        #: the other files the analysis reads).
        self.checked_contents = "\0".join(f"{path}\0{digest}" for path, digest in sorted(digests.items()))
        self.parsed: set = set()
        self.cached: set = set()
        #: Files read by the results computed in this run (not reused from the result cache).
        self.opened: set[str] = set()
        #: The entries of the folders cached results recorded missing entries in (listed once per run).
        self.listings: dict[str, frozenset[str]] = {}
        #: Which folders are packages, for this check (``Workspace`` in this process shares it).
        self.layout = PackageLayout()
        self._probe = LayoutProbe()
        roots = import_roots(files, self.layout)
        self.workspace_arguments = (
            analyzer.config,
            str(cache.directory.parent) if cache else None,
            roots,
            {f.path: f.display for f in files},
            overrides,
            analyzer.replay_repeated_walks,
        )
        self.scope = scope_digest(analyzer.config, paths, files, roots)
        self._local: Workspace | None = None
        self._pool: WorkerPool | None = None
        #: The checked files' sizes, and the CPU seconds roots took in the workers, by root: what
        #: a root is expected to cost (``_expected_costs``).
        self._sizes = sizes
        self._seconds: dict[Path, float] = {}
        #: The results of this check so far, by root and mentions.
        self._analyzed: dict[Path, dict[frozenset[str], RootResult]] = {}
        self._called: dict[Path, frozenset[bytes]] | None = None
        #: Class names to the classes defined on them in the checked files (``subclass_index``).
        self._subclasses: dict[str, frozenset[str]] | None = None
        #: Each file's import aliases, read when a callers round first looks at it (``import_aliases``).
        self._aliases: dict[Path, dict[str, frozenset[str]]] = {}
        self.files = files
        self.cancelled: Callable[[], bool] | None = None
        self._unsaved: frozenset[str] | None = None
        #: The overrides are derived from the disk (``Analyzer.check``): results reading them are stored.
        self.derived = False

    def analyze(self, tasks: list[tuple[SourceFile, frozenset[str]]]) -> list[RootResult]:
        results: dict[int, RootResult] = {}
        missing = []
        for position, (root, mentions) in enumerate(tasks):
            found = self._same_entry_points(root.path, mentions) or self._lookup(root.path, mentions)
            if found is not None:
                results[position] = found
            else:
                missing.append(position)
        for position, result in zip(missing, self._compute([(tasks[i][0].path, tasks[i][1]) for i in missing])):
            results[position] = result
        for (root, mentions), result in zip(tasks, (results[i] for i in range(len(tasks)))):
            self._analyzed.setdefault(root.path, {})[mentions] = result
        return [results[i] for i in range(len(tasks))]

    def _same_entry_points(self, path: Path, mentions: frozenset[str]) -> RootResult | None:
        """The result this check already has for ``path`` analyzed from the same entry points.

        ``mentions`` decide a root's analysis only through the blocks they make entry points
        (``ModuleView.root_blocks``): when the callers of requested functions are blocks already
        analyzed (the Trainer's own methods calling its helpers), analyzing the file again would
        walk the same code from a fresh interpreter and find exactly what it found.
        """
        earlier = self._analyzed.get(path)
        if not earlier:
            return None
        if mentions in earlier:
            return earlier[mentions]
        if self._local is None and self.cache is None:
            return None  # the outline would be parsed here and again in a worker: just analyze
        view = self._workspace().index.view(path)  # outlines come from the cache
        blocks = view.root_blocks(mentions)
        for known, result in earlier.items():
            if view.root_blocks(known) == blocks:
                return result
        return None

    def _compute(self, tasks: list[tuple[Path, frozenset[str]]]) -> list[RootResult]:
        jobs = self.analyzer.jobs
        if jobs <= 1 or (len(tasks) < _PARALLEL_ROOTS and self._pool is None):
            return self._compute_here(tasks)
        # The workers store their results, but for a check of unsaved contents (stdin, flake8's
        # ``-``): this process does (``_store``), which keeps those that read an unsaved buffer off disk.
        stored_by_workers = self.cache is not None and not self.overrides
        keys = [result_key(self.scope, path, mentions) if stored_by_workers else None for path, mentions in tasks]
        results = self._compute_in_workers([(str(path), mentions, key) for (path, mentions), key in zip(tasks, keys)])
        for (path, mentions), result in zip(tasks, results):
            if stored_by_workers:
                self.opened.update(dependency for dependency, _ in result.dependencies)
            else:
                self._computed(path, mentions, result)
        return results

    def _computed(self, path: Path, mentions: frozenset[str], result: RootResult) -> None:
        self.opened.update(dependency for dependency, _ in result.dependencies)
        self._store(path, mentions, result)

    def _compute_here(self, tasks: list[tuple[Path, frozenset[str]]]) -> list[RootResult]:
        """Analyze ``tasks`` in this process, sharing the work with other processes checking the
        same project at the same time (flake8's workers each check the whole project): a root
        another process is analyzing is left for last, and by then usually read from the cache.
        Largest first, as the workers take them: a large root claimed last kept the other process
        waiting for it, idle (docs/performance.md, "flake8")."""
        local = self._workspace()
        progress = self.analyzer.progress
        results: dict[int, RootResult] = {}
        deferred = []
        costs = self._expected_costs([path for path, _ in tasks])
        for position in sorted(range(len(tasks)), key=lambda position: -costs[position]):
            path, mentions = tasks[position]
            result = self._claim_and_compute(path, mentions, wait=False)
            if result is None:
                deferred.append(position)
            else:
                results[position] = result
                if progress is not None:
                    progress(len(results), len(tasks))
        for position in deferred:
            found = self._claim_and_compute(*tasks[position], wait=True)
            assert found is not None  # a waited-for claim is always granted
            results[position] = found
            if progress is not None:
                progress(len(results), len(tasks))
        self.parsed |= local.counter.parsed
        self.cached |= local.counter.cached
        return [results[i] for i in range(len(tasks))]

    def _workspace(self) -> Workspace:
        """The workspace that analyzes roots in this process (made once per check). Walk summaries
        kept from earlier checks are dropped when what their imports found changed."""
        from .workspace import Workspace

        if self._local is None:
            memory = self.analyzer.walk_memory
            roots = self.workspace_arguments[2]
            if memory is not None and not memory.layout_holds(
                roots, lambda absent, layout: self._unchanged((), absent, layout)
            ):
                memory.clear()
            self._local = Workspace(
                *self.workspace_arguments,
                cache=self.cache,
                walk_memory=self.analyzer.walk_memory,
                views=self.analyzer.views,
                layout=self.layout,
            )
        return self._local

    def walk_again(self, roots: list[SourceFile]) -> None:
        """Analyze ``roots`` here again, whatever is cached, and keep nothing
        (``Analyzer.rehearse``: only the walk memory is wanted)."""
        workspace = self._workspace()
        for root in roots:
            if self.cancelled is not None and self.cancelled():
                raise AnalysisCancelled(str(root.path))
            workspace.analyze(root.path, frozenset(), self.cancelled)

    def _claim_and_compute(self, path: Path, mentions: frozenset[str], *, wait: bool) -> RootResult | None:
        """The root's result: from the cache if another process stored it meanwhile, else computed
        here under the claim; None when another process holds the claim and ``wait`` is False."""
        assert self._local is not None
        if self.cancelled is not None and self.cancelled():
            raise AnalysisCancelled(str(path))
        if self.cache is None:
            result = self._local.analyze(path, mentions, self.cancelled)
            self._computed(path, mentions, result)
            return result
        key = result_key(self.scope, path, mentions)
        with self.cache.claim(key, wait=wait) as granted:
            if not granted:
                return None
            found = self._lookup(path, mentions)
            if found is not None:
                return found
            result = self._local.analyze(path, mentions, self.cancelled)
            self._computed(path, mentions, result)
            return result

    def _compute_in_workers(self, tasks: list[tuple[str, frozenset[str], str | None]]) -> list[RootResult]:
        """Analyze ``tasks`` in worker processes, largest first, each root where it was analyzed
        before (``WorkerPool``). One pool serves every round of the check (the callers of
        requested functions come in later rounds): a worker keeps the module views it has read,
        where a pool per round started the processes again and re-read every view."""
        from .workspace import analyze_in_worker

        progress = self.analyzer.progress
        pool = self._workers()
        costs = self._expected_costs([Path(path) for path, _, _ in tasks])
        results: dict[int, RootResult] = {}
        finished = pool.run(analyze_in_worker, tasks, costs, homes=[path for path, _, _ in tasks])
        for done, (position, (result, parsed, cached, seconds)) in enumerate(finished, start=1):
            if self.cancelled is not None and self.cancelled():
                finished.close()
                pool.close(wait_for_running=False)  # the running roots still store theirs
                self._pool = None
                raise AnalysisCancelled(tasks[position][0])
            results[position] = result
            self._seconds[Path(tasks[position][0])] = seconds
            self.parsed |= parsed
            self.cached |= cached
            if progress is not None:
                progress(done, len(tasks))
        return [results[position] for position in range(len(tasks))]

    def _workers(self) -> WorkerPool:
        if self._pool is None:
            from .workers import WorkerPool
            from .workspace import start_worker

            self._pool = WorkerPool(self.analyzer.jobs, start_worker, self.workspace_arguments)
        return self._pool

    def _expected_costs(self, roots: list[Path]) -> list[float]:
        """What each root is expected to take, for the order they go to the workers in (only the
        order matters): its seconds in an earlier round of this check, else its size at the rate
        the roots analyzed so far took (the first round: its size)."""
        measured = sum(self._sizes.get(root, 0) for root in self._seconds)
        rate = sum(self._seconds.values()) / measured if measured else 1.0
        return [self._seconds.get(root, self._sizes.get(root, 0) * rate) for root in roots]

    def close(self) -> None:
        """Stop the worker processes, if any were started."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def callers(
        self, requested: frozenset[tuple[str, str]], contents: Mapping[Path, bytes]
    ) -> list[tuple[SourceFile, frozenset[str]]]:
        """The files that may call ``requested`` functions, each with the names it may call them by:
        it calls the name (from a per-file index of called names, cached by digest) and can see
        the function (``may_see``)."""
        from ..knowledge import torch_api as api
        from .callers import import_aliases, may_see, subclass_index, subclasses_of

        if self._called is None:
            self._called = self._called_names(contents)
        by_name: dict[str, list[tuple[Path, str, frozenset[str]]]] = {}
        #: Classes whose instances' calls run a requested method (``model(x)`` runs ``forward``):
        #: a file constructing one (or a subclass) may call it without spelling the method's name.
        through_instance: list[tuple[Path, str, frozenset[str], frozenset[str]]] = []
        for path, qualname in requested:
            parts = qualname.split(".")
            subclasses: frozenset[str] = frozenset()
            if len(parts) > 1 and not any(part.startswith("<") for part in parts):  # a method
                if self._subclasses is None:
                    self._subclasses = subclass_index(contents.values())
                subclasses = subclasses_of(parts[-2], self._subclasses)
                if parts[-1] in api.CALLED_THROUGH_INSTANCE:
                    through_instance.append((Path(path), qualname, subclasses, frozenset([parts[-2], *subclasses])))
            by_name.setdefault(parts[-1], []).append((Path(path), qualname, subclasses))
        found = []
        for source_file in self.files:
            called = self._called.get(source_file.path)
            if called is None:
                continue
            source = contents[source_file.path]
            aliases = self._aliases.get(source_file.path)
            if aliases is None:
                aliases = self._aliases[source_file.path] = import_aliases(source)
            names = {
                name
                for name, functions in by_name.items()
                if name.encode() in called
                and any(may_see(source, source_file.path, *function, aliases=aliases) for function in functions)
            }
            # Imported under another name (``from util.misc import main as run_main``): called by it.
            names |= {
                alias
                for name, functions in by_name.items()
                for alias in aliases.get(name, ())
                if alias.encode() in called
                and any(may_see(source, source_file.path, *function, aliases=aliases) for function in functions)
            }
            # A file this check analyzed already ran its module code and anchored functions, where
            # scripts build and call their instances (pytorch-image-models' train.py and its
            # NativeScaler: analyzing it again found nothing new and cost a third of the check).
            for defining, qualname, subclasses, classes in (
                () if source_file.path in self._analyzed else through_instance
            ):
                # The blocks constructing an instance are the entry points that can call it.
                constructed = {name for name in classes if name.encode() in called} | {
                    alias for name in classes for alias in aliases.get(name, ()) if alias.encode() in called
                }
                if constructed and may_see(source, source_file.path, defining, qualname, subclasses, aliases=aliases):
                    names |= constructed
            if names:
                found.append((source_file, frozenset(names)))
        return found

    def entry_points(
        self, files: list[SourceFile], contents: Mapping[Path, bytes], *, keep: bool = True
    ) -> list[SourceFile]:
        """The checked files that can hold an anchor (``callers.has_anchor``): the roots a check
        analyzes first. Each file's answer is kept in the cache by digest: after one file changed,
        the others are not searched again (the torch tree's 2,285 files took 0.2 s). The answers
        are stored when ``keep`` and no unsaved buffer is checked (an editor's change would write
        the table again at each keystroke); the language server's rehearsal stores nothing."""
        from .callers import has_anchor

        stored = self.cache.load(anchored_key(self.scope), dict[str, bool]) if self.cache is not None else None
        known = stored or {}
        anchored: dict[str, bool] = {}
        for source_file in files:
            if source_file.path not in contents:
                continue
            digest = self.digests[source_file.path]
            if digest not in anchored:
                found = known.get(digest)
                anchored[digest] = has_anchor(contents[source_file.path]) if found is None else found
        if keep and self.cache is not None and (not self.overrides or self.derived) and anchored != known:
            self.cache.store(anchored_key(self.scope), anchored)
        return [f for f in files if f.path in contents and anchored[self.digests[f.path]]]

    def _called_names(self, contents: Mapping[Path, bytes]) -> dict[Path, frozenset[bytes]]:
        from .callers import called_names_in, called_names_of, names_of

        # Kept as one NUL-joined string of names per file: encoded name by name, the torch tree's
        # 2,285 sets took 0.19 s to store and 0.21 s to load, in the main process between rounds.
        key = called_names_key(self.scope)
        stored = self.cache.load(key, dict[str, bytes]) if self.cache is not None else None
        known: dict[str, bytes] = stored or {}
        found = {path: names_of(known[self.digests[path]]) for path in contents if self.digests[path] in known}
        missing = [path for path in contents if path not in found]
        if self._pool is not None and not self.overrides and len(missing) >= _PARALLEL_SCAN_FILES:
            # The workers are idle between rounds: they read and scan the files (from disk, where
            # the contents are without overrides) while this process waits.
            shares = [
                [(path, self.digests[path]) for path in missing[start :: self.analyzer.jobs]]
                for start in range(self.analyzer.jobs)
            ]
            costs = [float(len(share)) for share in shares]
            for position, names in self._pool.run(called_names_in, shares, costs):
                found.update((path, called) for (path, _), called in zip(shares[position], names) if called is not None)
        found.update((path, called_names_of(contents[path])) for path in missing if path not in found)
        current = {self.digests[path]: b"\0".join(names) for path, names in found.items()}
        if self.cache is not None and current.keys() != known.keys():
            self.cache.store(key, current)
        return found

    def remembered_check(self, evidence: bool = True) -> CheckRecord | None:
        """The findings of a check of exactly these contents, when nothing it read has changed
        since; without ``evidence``, findings without their typed evidence (``WITHOUT_EVIDENCE``)."""
        if self.cache is None:
            return None
        omit = frozenset() if evidence else WITHOUT_EVIDENCE
        found = self.cache.load(check_key(self.scope, self.checked_contents), CheckRecord, omit=omit)
        if found is None or not self._unchanged(found.read, found.absent, found.layout):
            return None
        return found

    def remember_check(self, record: CheckRecord) -> None:
        """Store a check's findings; not for editor buffers, whose contents pass with the next keystroke."""
        if self.cache is not None and (not self.overrides or self.derived):
            self.cache.store(check_key(self.scope, self.checked_contents), record)

    def _unchanged(
        self, read: Sequence[tuple[str, str]], absent: Iterable[tuple[str, Collection[str]]], layout: LayoutFacts
    ) -> bool:
        """Every file in ``read`` still has its digest, none of the entries ``absent`` names has
        been created in its folder, and the package markers and links are as ``layout`` found them. The files given as contents (editor buffers: what an edit
        changed) are compared first: the language server's check of the edited trainer found its
        last result and digested the 135 files it read before reaching the trainer's own."""
        given = self._given_names
        ordered = sorted(read, key=lambda entry: entry[0] not in given) if given else read
        return (
            all(self._digest(Path(path)) == digest for path, digest in ordered)
            and not any(self._listing(folder).intersection(entries) for folder, entries in absent)
            and self._probe.holds(layout)
        )

    @cached_property
    def _given_names(self) -> frozenset[str]:
        """The files given as contents, named as results name their dependencies."""
        return frozenset(str(path) for path in self.overrides)

    def _lookup(self, path: Path, mentions: frozenset[str]) -> RootResult | None:
        """The root's stored result, or the one found from derived contents (``--fix``'s), if valid."""
        if self.cache is None:
            return None
        key = result_key(self.scope, path, mentions)
        found = self._valid_result(key)
        return found if found is not None else self._valid_result(derived_key(key))

    def _valid_result(self, key: str) -> RootResult | None:
        from .root_results import ResultReads, RootResult

        assert self.cache is not None
        reads = self.cache.load(reads_key(key), ResultReads)
        if reads is not None and not self._unchanged(reads.dependencies, reads.absent, reads.layout):
            return None  # stale: the result itself is not decoded
        found = self.cache.load(key, RootResult)
        if found is None:
            return None
        checked = reads is not None and (reads.dependencies, reads.absent, reads.layout) == (
            found.dependencies,
            found.absent,
            found.layout,
        )
        if not checked and not self._unchanged(found.dependencies, found.absent, found.layout):
            return None  # its reads were missing, or another result's (a run killed between the writes)
        return found

    def _store(self, path: Path, mentions: frozenset[str], result: RootResult) -> None:
        """Keep ``result`` under the root's key. One that read an unsaved editor buffer is kept in
        memory only: on disk it would replace the result for the saved contents, which the next
        ``compile-ad-lint check`` needs (after a language-server session that typed without saving,
        the generated framework's check took 10-16 s instead of a warm run's 0.4 s)."""
        from .root_results import store_result

        if self.cache is not None and result.cacheable:
            unsaved = self._unsaved_buffers()
            reads_unsaved = any(dependency in unsaved for dependency, _ in result.dependencies)
            key = result_key(self.scope, path, mentions)
            if reads_unsaved and self.derived:  # a slot of its own: the disk's result stays too
                store_result(self.cache, derived_key(key), result)
            else:
                store_result(self.cache, key, result, to_disk=not reads_unsaved)

    def _unsaved_buffers(self) -> frozenset[str]:
        """The overridden files (editor buffers, stdin) whose contents differ from the file on disk."""
        if self._unsaved is None:
            unsaved = set()
            for path, source in self.overrides.items():
                try:
                    saved = read_source(path)
                except OSError:
                    saved = None
                if saved != source:
                    unsaved.add(str(path))
            self._unsaved = frozenset(unsaved)
        return self._unsaved

    def _listing(self, folder: str) -> frozenset[str]:
        """The names in ``folder`` (none when it is gone), listed once per run."""
        known = self.listings.get(folder)
        if known is None:
            try:
                known = frozenset(os.listdir(folder))
            except OSError:
                known = frozenset()
            self.listings[folder] = known
        return known

    def _digest(self, path: Path) -> str | None:
        if path not in self.digests:
            try:
                self.digests[path] = content_digest(
                    self.overrides[path] if path in self.overrides else read_source(path)
                )
            except OSError:
                self.digests[path] = None  # type: ignore[assignment]
        return self.digests[path]
