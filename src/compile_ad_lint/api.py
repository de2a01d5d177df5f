"""The analyzer's public API: discover → summarize → link → rules → findings.

The CLI, the flake8 plugin and the language server are thin adapters over ``Analyzer``.
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from .cache import EntryMemory, SummaryCache, content_digest
from .core.findings import Finding
from .core.locations import Location
from .core.paths import real_path
from .core.settings import Config, code_matches, valid_prefixes
from .core.torch_versions import TorchTarget
from .layout import LayoutFacts
from .linking.cancellation import AnalysisCancelled
from .notebook import cell_locations, notebook_for
from .pipeline.results import CheckRecord, reads_key, sorted_groups
from .pipeline.run import Run
from .project import SourceFile, default_root, discover, display_path, read_source
from .target import with_target

# The engine, the rules and what they read are imported where a check analyzes: a check served
# from its record (a warm run) loads none of them. ``__getattr__`` serves the names this module
# re-exports from them.
if TYPE_CHECKING:
    from .linking.events import Event
    from .linking.incremental import WalkMemory
    from .pipeline.root_results import ResultReads, RootResult
    from .pipeline.workspace import load_view
    from .summary.view import ViewMemory

_REEXPORTED = {
    "ResultReads": "pipeline.root_results",
    "RootResult": "pipeline.root_results",
    "ViewMemory": "summary.view",
    "WalkMemory": "linking.incremental",
    "load_view": "pipeline.workspace",
}


def __getattr__(name: str) -> object:
    module = _REEXPORTED.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__package__}.{module}"), name)


@dataclass(frozen=True)
class Stats:
    #: Files checked: the Python files and notebooks the paths named.
    files: int
    #: Of the files the analysis read (``analyzed``: checked files with an anchor and what they
    #: import or call), those parsed in this run and those served from the cache; they add up.
    parsed: int
    cached: int
    seconds: float
    analyzed: int = 0
    #: The torch the findings speak for (``target.resolve``).
    torch: TorchTarget | None = None


@dataclass(frozen=True)
class Report:
    findings: tuple[Finding, ...]
    stats: Stats
    #: (resolved path, content digest) of every file the analysis read: fixes are built and applied
    #: only on files that still hold that content.
    digests: tuple[tuple[str, str], ...] = ()


class Analyzer:
    """Runs the rules over a project. One instance may serve many checks (editor, flake8)."""

    def __init__(
        self,
        config: Config | None = None,
        *,
        use_cache: bool = True,
        jobs: int | None = None,
        cache_root: Path | None = None,
        progress: Callable[[int, int], None] | None = None,
        memory: EntryMemory | None = None,
        walk_memory: WalkMemory | None = None,
        views: ViewMemory | None = None,
        replay_repeated_walks: bool = True,
    ) -> None:
        """``memory`` keeps decoded cache entries across checks (a long-lived front end's);
        ``walk_memory`` keeps function walks across them (``linking.incremental``): an edit's check
        replays the walks of the code it did not change; ``views`` keeps module views across them
        (``ViewMemory``): an edit's check builds only the edited files' views again. Without a
        ``walk_memory``, each process keeps one for the roots it analyzes in the check
        (``WalkMemory.for_check``) unless ``replay_repeated_walks`` is False: the findings are the
        same either way (the tests compare the two)."""
        self.config = config or Config()
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self.use_cache = use_cache
        self.cache_root = cache_root
        self.progress = progress
        self.memory = memory
        self.walk_memory = walk_memory
        self.views = views
        self.replay_repeated_walks = replay_repeated_walks

    def check(
        self,
        paths: Sequence[str],
        sources: Mapping[Path, bytes] | None = None,
        *,
        cancelled: Callable[[], bool] | None = None,
        derived: bool = False,
        evidence: bool = True,
    ) -> Report:
        """Analyze ``paths``. ``sources`` overrides file contents by resolved path (unsaved editor
        buffers, stdin); a path named in ``paths`` that ``sources`` holds need not exist on disk.
        ``derived``: the ``sources`` are a function of the files on disk (``--fix``'s fixed
        contents), not an editor's buffers, so what is found from them is kept on disk too.

        ``cancelled`` is asked before each root and, in this process, before each function walk;
        when it answers True the check stops with ``AnalysisCancelled`` (the language server's
        check of the whole project gives way to the next edit). Results already computed stay in
        the cache.

        Without ``evidence``, findings served from the check's record have no typed evidence
        (``Finding.evidence`` is None; ``facts`` still holds its rendering): a caller that shows
        findings only as lines (flake8) then loads none of the rules.
        """
        started = time.perf_counter()
        files, problems, events, contents, run = self._prepare(paths, sources)
        run.cancelled = cancelled
        run.derived = derived
        remembered = self._remembered(run, files, started, evidence)
        if remembered is not None:
            return remembered
        tasks = [(f, frozenset[str]()) for f in run.entry_points(files, contents)]
        asked: frozenset[tuple[str, str]] = frozenset()
        #: The names each file was analyzed as a caller of (a later round asks it about new ones only).
        mentioned: dict[Path, frozenset[str]] = {}
        analyzed: set[str] = set()
        absent: dict[str, set[str]] = {}  # missing candidates by folder, as each result holds them
        packages: set[tuple[str, bool]] = set()
        links: set[tuple[str, str]] = set()
        cacheable = True
        read: dict[str, str] = {str(path): run.digests[path] for path in contents}
        try:
            for _ in range(self.config.max_call_depth + 1):
                results = run.analyze(tasks)
                for (root, _), result in zip(tasks, results, strict=True):
                    mentioned[root.path] = mentioned.get(root.path, frozenset()) | result.covered
                    events.extend(result.events)
                    analyzed.update(dependency for dependency, _ in result.dependencies)
                    read.update(result.dependencies)
                    for folder, entries in result.absent:
                        absent.setdefault(folder, set()).update(entries)
                    packages.update(result.layout.packages)
                    links.update(result.layout.links)
                    cacheable = cacheable and result.cacheable
                # Functions whose anchors depend on their parameters: analyze the code that calls them.
                requested = frozenset().union(*(r.caller_requests for r in results)) - asked
                if not requested:
                    break
                asked |= requested
                tasks = []
                for caller, names in run.callers(requested, contents):
                    new = names - mentioned.get(caller.path, frozenset())
                    if new:
                        mentioned[caller.path] = mentioned.get(caller.path, frozenset()) | new
                        tasks.append((caller, new))
                if not tasks:
                    break
        finally:
            run.close()

        checked = {f.display for f in files} | {p.display for p in problems}
        findings = self._findings(events, files, contents, checked, paths)
        stats = _stats(files, analyzed, run, started)
        report = Report(self._located(findings, files), stats, tuple(sorted(read.items())))
        if cacheable:
            record = CheckRecord(
                findings,
                tuple(sorted(analyzed)),
                report.digests,
                sorted_groups(absent),
                LayoutFacts.of(packages, links),
            )
            run.remember_check(record)
        return report

    def rehearse(
        self,
        paths: Sequence[str],
        sources: Mapping[Path, bytes] | None = None,
        *,
        cancelled: Callable[[], bool] | None = None,
    ) -> int:
        """Walk the entry points of ``paths`` again, in this process, for the walk memory alone (nothing
        is reported or stored): how many walks it could not replay. The language server rehearses
        the next edit's check: after an open served from a recorded check (nothing walked yet) and
        after an analysis that still walked afresh (a walk is summarized at the heap state it met;
        the next analyses meet states the first did not record). ``AnalysisCancelled`` when
        ``cancelled`` says so before a root or a function walk."""
        memory = self.walk_memory
        if memory is None:
            return 0
        before = memory.misses
        files, _, _, contents, run = self._prepare(paths, sources)
        run.cancelled = cancelled  # asked before the first root, after reading every file
        try:
            run.walk_again(run.entry_points(files, contents, keep=False))
        finally:
            run.close()
        return memory.misses - before

    def remembered(self, paths: Sequence[str], sources: Mapping[Path, bytes] | None = None) -> Report | None:
        """What ``check(paths, sources)`` reports, when an earlier check of the same contents recorded
        it and nothing it read has changed since; None otherwise. Never analyzes: the language server
        asks this for the whole project first, so a first open after ``compile-ad-lint check .`` costs
        what a warm CLI run costs and shows what it shows."""
        started = time.perf_counter()
        files, _, _, _, run = self._prepare(paths, sources)
        return self._remembered(run, files, started)

    # -- stages -----------------------------------------------------------------------------

    def _prepare(
        self, paths: Sequence[str], sources: Mapping[Path, bytes] | None
    ) -> tuple[list[SourceFile], list, list[Event], dict[Path, bytes], Run]:
        """The checked files, discovery problems (as events too), their contents, and the run over them."""
        overrides = dict(sources or {})
        if self.config.torch is None:  # once per analyzer: the installed torch, else the project's pins
            self.config = with_target(self.config, paths)
        files, problems = discover(paths, self.config, virtual=overrides.keys())
        events: list[Event] = [_failure(p.display, p.reason) for p in problems]
        contents = self._read(files, events, overrides)
        digests = {path: content_digest(source) for path, source in contents.items()}
        sizes = {path: len(source) for path, source in contents.items()}
        run = Run(self, files, paths, self.cache_for(paths), overrides, digests, sizes)
        return files, problems, events, contents, run

    def _remembered(self, run: Run, files: list[SourceFile], started: float, evidence: bool = True) -> Report | None:
        remembered = run.remembered_check(evidence)
        if remembered is None:
            return None
        seconds = round(time.perf_counter() - started, 3)
        stats = Stats(
            len(files), 0, len(remembered.analyzed), seconds, analyzed=len(remembered.analyzed), torch=self.config.torch
        )
        return Report(self._located(remembered.findings, files), stats, remembered.read)

    def cache_for(self, paths: Sequence[str]) -> SummaryCache | None:
        """The cache a check of ``paths`` uses (its findings' fixes keep their edits there too)."""
        if not self.use_cache:
            return None
        return SummaryCache.open(self.cache_root or self.config.root or default_root(paths), memory=self.memory)

    @staticmethod
    def _read(files: list[SourceFile], events: list[Event], overrides: Mapping[Path, bytes]) -> dict[Path, bytes]:
        """Every checked file's bytes; unreadable files are reported here."""
        contents = {}
        for source_file in files:
            try:
                contents[source_file.path] = (
                    overrides[source_file.path] if source_file.path in overrides else read_source(source_file.path)
                )
            except OSError as error:
                events.append(_failure(source_file.display, f"cannot read: {error.strerror or error}"))
        return contents

    def _findings(
        self,
        events: list[Event],
        files: list[SourceFile],
        contents: Mapping[Path, bytes],
        checked: set[str],
        paths: Sequence[str] = (),
    ) -> tuple[Finding, ...]:
        """The enabled rules' findings in checked files, minus ``noqa`` and ``per-file-ignores``, in
        module lines (``_located`` maps them to cells and real files); and the suppressions that
        silence nothing (CAL901) in the files whose whole project the check of ``paths`` covers.

        A named path that is no file (it does not exist, or cannot be listed) is reported whatever
        the selection says: nothing was checked there, and a run must not pass silently for it.
        """
        from .facts import Facts
        from .linking.suppressions import unused_in_files
        from .rules.running import rule_findings
        from .rules.unparsable_file import UnparsableFile
        from .rules.unused_noqa import UnusedNoqa
        from .summary.extract import find_suppressions
        from .suppression import byte_lines, may_suppress

        by_display = {f.display: f.path for f in files}
        suppressions: dict[str, dict[int, frozenset[str]]] = {}
        per_file: dict[str, frozenset[str]] = {}
        #: display -> line -> the codes of its suppression that silenced a finding (``*``: all).
        used: dict[str, dict[int, set[str]]] = {}

        #: display -> the file's lines (as its text's lines count; None: only tokenizing tells), split once.
        lines: dict[str, list[bytes] | None] = {}

        def suppressed(finding: Finding) -> bool:
            path = finding.location.path
            if path not in suppressions:
                source = contents.get(by_display.get(path, Path()), b"")
                if path not in lines:
                    lines[path] = byte_lines(source)
                known, number = lines[path], finding.location.line
                # A line without a suppression's text holds none: the file is tokenized only for one
                # that may (the language server re-checks an edited trainer at every keystroke).
                if known is not None and not (0 < number <= len(known) and may_suppress(known[number - 1])):
                    return False
                suppressions[path] = {s.line: s.codes for s in find_suppressions(source)}
            codes = suppressions[path].get(finding.location.line)
            matching = (
                {"*"} if codes is not None and not codes else {c for c in codes or () if finding.code.startswith(c)}
            )
            if matching:
                used.setdefault(path, {}).setdefault(finding.location.line, set()).update(matching)
            return bool(matching)

        def ignored_here(finding: Finding) -> bool:
            path = finding.location.path
            if path not in per_file:
                per_file[path] = self._per_file_ignores(path, by_display[path])
            return code_matches(finding.code, per_file[path])

        best: dict[tuple[str, Location], Finding] = {}
        for rule_class, found in rule_findings(events, self.config, frozenset(checked)):
            enabled = self.config.enables(rule_class.code)
            for finding in found:
                path = finding.location.path
                if path not in checked:
                    continue
                if path in by_display and (not enabled or suppressed(finding) or ignored_here(finding)):
                    continue  # (not in by_display: a discovery problem, always reported)
                key = (finding.code, finding.location)
                current = best.get(key)
                if current is None or _preference(finding) < _preference(current):
                    best[key] = finding
        if self.config.enables(UnusedNoqa.code):
            incomplete = {f.location.path for f in best.values() if f.code == UnparsableFile.code}
            unused = unused_in_files(
                files, contents, used, incomplete, paths, self._enabled_in, valid_prefixes(), self.config
            )
            for finding in UnusedNoqa(self.config).findings(Facts(unused, self.config)):
                if not ignored_here(finding):  # (the suppressions it judges do not silence it)
                    best[(finding.code, finding.location)] = finding
        return tuple(best.values())

    def _enabled_in(self, source_file: SourceFile) -> Callable[[str], bool]:
        """Whether every rule a code or prefix covers runs on ``source_file``."""
        from .rules import ALL_RULES

        ignored = self._per_file_ignores(source_file.display, source_file.path)
        runs = {
            rule.code for rule in ALL_RULES if self.config.enables(rule.code) and not code_matches(rule.code, ignored)
        }
        return lambda prefix: all(rule.code in runs for rule in ALL_RULES if code_matches(rule.code, (prefix,)))

    @staticmethod
    def _located(findings: Sequence[Finding], files: list[SourceFile]) -> tuple[Finding, ...]:
        """``findings`` with notebook locations in their cells and every location's real file.

        Done after the whole check's record is stored or read: a notebook's cells can move (a
        markdown cell inserted) while the module its code cells make, which keys the record, stays
        the same; and cached events keep display paths only. The real file is the one discovery
        found for a named path, else the one ``real_path`` finds (a file reached by import).
        """
        by_display = {f.display: f.path for f in files}
        located = [
            cell_locations(finding, lambda shown: notebook_for(by_display.get(shown, Path(shown))))
            for finding in findings
        ]
        # Each shown file resolved once (a CAL002 finding points into 30 files).
        real_file = lru_cache(maxsize=None)(lambda shown: by_display.get(shown) or real_path(shown))
        resolved = [finding.with_resolved(real_file) for finding in located]
        return tuple(sorted(resolved, key=Finding.sort_key))

    def _per_file_ignores(self, display: str, path: Path) -> frozenset[str]:
        root = self.config.root
        if not self.config.per_file_ignores or root is None:
            return frozenset()
        root = root.resolve()
        for candidate in (Path(os.path.abspath(display)), path):
            if candidate.is_relative_to(root):
                return self.config.ignored_in(candidate.relative_to(root))
        return frozenset()


def _stats(files: list[SourceFile], analyzed: set[str], run: Run, started: float) -> Stats:
    """Counts that add up: every analyzed file was either parsed in this run or served from the cache.

    A file counts as parsed when a result computed in this run read it and its summaries were not
    all in the cache; the files behind reused results, and those whose outline and blocks all came
    from the cache, count as cached.
    """
    shown = {str(f.path): f.display for f in files}
    parsed = 0
    for path in analyzed:
        display = shown.get(path) or display_path(Path(path))
        if path in run.opened and (display in run.parsed or display not in run.cached):
            parsed += 1
    seconds = round(time.perf_counter() - started, 3)
    torch = run.analyzer.config.torch
    return Stats(len(files), parsed, len(analyzed) - parsed, seconds, analyzed=len(analyzed), torch=torch)


def _failure(display: str, reason: str) -> Event:
    """A file that could not be checked, as the event the rules report (CAL900)."""
    from .linking.events import ModuleFailure

    return ModuleFailure(Location.point(display), reason)


def _preference(finding: Finding) -> tuple:
    """Among duplicates of one finding, keep the one that needs the fewest run-time switches (one on a
    path without any holds on every run), then the one with the shortest, then first, explanation."""
    return (
        len(finding.conditions),
        len(finding.related),
        [(r.location, r.message) for r in finding.related],
        finding.message,
    )


def check(paths: Sequence[str], config: Config | None = None, **options: object) -> Report:
    """Analyze ``paths`` and return every finding (see ``Analyzer`` for the options)."""
    return Analyzer(config, **options).check(paths)  # type: ignore[arg-type]


__all__ = [
    "AnalysisCancelled",
    "Analyzer",
    "CheckRecord",
    "Report",
    "ResultReads",
    "RootResult",
    "Stats",
    "ViewMemory",
    "WalkMemory",
    "check",
    "load_view",
    "reads_key",
]
