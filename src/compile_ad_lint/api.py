"""The analyzer's public API: discover → summarize → link → rules → findings.

The CLI, the flake8 plugin and the language server are thin adapters over ``Analyzer``.
"""

from __future__ import annotations

import os
import re
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from .cache import SummaryCache, cache_key
from .config import Config
from .findings import Finding, Location
from .linking.events import Event, ModuleFailure
from .linking.interpreter import Interpreter
from .project import ModuleIndex, SourceFile, discover, has_anchor, module_identity, read_source
from .rules import ALL_RULES
from .summary.extract import summarize_source
from .summary.model import ModuleSummary, ParseFailure

#: Below this many files to parse, worker processes cost more than they save.
_PARALLEL_THRESHOLD = 16


@dataclass(frozen=True)
class Stats:
    files: int
    parsed: int
    cached: int
    seconds: float


@dataclass(frozen=True)
class Report:
    findings: tuple[Finding, ...]
    stats: Stats


@dataclass
class _Counters:
    parsed: int = 0
    cached: int = 0


def summarize_file(path: Path, cache: SummaryCache | None, source: bytes | None = None) -> tuple[ModuleSummary, bool]:
    """The summary of ``path`` and whether it came from the cache. Read errors become failures."""
    module, is_package, _ = module_identity(path)
    if source is None:
        try:
            source = read_source(path)
        except OSError as error:
            return summarize_unreadable(module, is_package, error), False
    key = cache_key(source, module, is_package) if cache is not None else ""
    if cache is not None:
        cached = cache.load(key)
        if cached is not None:
            return cached, True
    summary = summarize_source(source, module, is_package)
    if cache is not None:
        cache.store(key, summary)
    return summary, False


def summarize_unreadable(module: str, is_package: bool, error: OSError) -> ModuleSummary:
    return ModuleSummary(module, is_package, (), (), (), (), (), failure=ParseFailure(f"cannot read: {error.strerror or error}"))


def _summarize_in_worker(task: tuple[str, str | None]) -> tuple[str, ModuleSummary, bool]:
    path, cache_root = task
    summary, from_cache = summarize_file(Path(path), SummaryCache(Path(cache_root)) if cache_root else None)
    return path, summary, from_cache


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
    ) -> None:
        self.config = config or Config()
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self.use_cache = use_cache
        self.cache_root = cache_root
        self.progress = progress

    def check(self, paths: Sequence[str], sources: Mapping[Path, bytes] | None = None) -> Report:
        """Analyze ``paths``. ``sources`` overrides file contents by resolved path (unsaved editor buffers)."""
        started = time.perf_counter()
        overrides = dict(sources or {})
        files, problems = discover(paths, self.config)
        cache = self._cache_for(paths)
        counters = _Counters()
        events: list[Event] = [ModuleFailure(Location.point(p.display), p.reason) for p in problems]

        def provide(path: Path, _display: str, _module: str, _package: bool) -> ModuleSummary:
            return self._summarize(path, cache, counters, overrides.get(path))

        index = ModuleIndex(provide, self._extra_roots(files))
        for source_file in files:
            index.name_display(source_file.path, source_file.display)
        roots = self._anchor_files(files, events, overrides)
        self._summarize_roots(roots, index, cache, counters, overrides)

        interpreter = Interpreter(index, self.config)
        pending, analyzed, asked = list(roots), set(), set()
        for _ in range(self.config.max_call_depth + 1):
            for root in pending:
                analyzed.add(root.path)
                self._analyze_root(root, index, interpreter, events)
                if self.progress is not None:
                    self.progress(len(analyzed), len(analyzed) + len(pending))
            # Functions whose anchors depend on their parameters: analyze the files that call them.
            wanted = interpreter.caller_requests - asked
            asked |= wanted
            pending = [f for f in _files_mentioning(files, wanted, overrides) if f.path not in analyzed]
            if not pending:
                break
        events.extend(interpreter.events)

        checked = {f.display for f in files} | {p.display for p in problems}
        findings = self._findings(events, index, checked)
        stats = Stats(len(files), counters.parsed, counters.cached, round(time.perf_counter() - started, 3))
        return Report(findings, stats)

    # -- stages -----------------------------------------------------------------------------

    def _cache_for(self, paths: Sequence[str]) -> SummaryCache | None:
        if not self.use_cache:
            return None
        root = self.cache_root or self.config.root
        if root is None:
            first = Path(paths[0]) if paths else Path(".")
            root = first if first.is_dir() else first.parent
        return SummaryCache(root)

    @staticmethod
    def _extra_roots(files: Iterable[SourceFile]) -> list[Path]:
        """Import roots of the checked files (package roots, ``src/`` layouts)."""
        return sorted({module_identity(f.path)[2] for f in files})

    @staticmethod
    def _anchor_files(files: list[SourceFile], events: list[Event], overrides: Mapping[Path, bytes]) -> list[SourceFile]:
        """Files that may hold an anchor; unreadable files are reported here."""
        roots = []
        for source_file in files:
            try:
                source = overrides.get(source_file.path) or read_source(source_file.path)
            except OSError as error:
                events.append(ModuleFailure(Location.point(source_file.display), f"cannot read: {error.strerror or error}"))
                continue
            if has_anchor(source):
                roots.append(source_file)
        return roots

    @staticmethod
    def _summarize(path: Path, cache: SummaryCache | None, counters: _Counters, source: bytes | None) -> ModuleSummary:
        summary, from_cache = summarize_file(path, cache, source)
        if from_cache:
            counters.cached += 1
        else:
            counters.parsed += 1
        return summary

    def _summarize_roots(
        self, roots: list[SourceFile], index: ModuleIndex, cache: SummaryCache | None, counters: _Counters, overrides: Mapping[Path, bytes]
    ) -> None:
        if self.jobs <= 1 or len(roots) < _PARALLEL_THRESHOLD:
            return  # summarized lazily, in this process
        tasks = [(str(r.path), str(cache.directory.parent) if cache else None) for r in roots if r.path not in overrides]
        with ProcessPoolExecutor(max_workers=self.jobs) as pool:
            for path, summary, from_cache in pool.map(_summarize_in_worker, tasks, chunksize=max(1, len(tasks) // (self.jobs * 8))):
                index.add(Path(path), summary)
                if from_cache:
                    counters.cached += 1
                else:
                    counters.parsed += 1

    @staticmethod
    def _analyze_root(root: SourceFile, index: ModuleIndex, interpreter: Interpreter, events: list[Event]) -> None:
        failure = index.summary(root.path).failure
        if failure is not None:
            events.append(ModuleFailure(Location.point(root.display, failure.line, failure.column), failure.message))
        else:
            interpreter.analyze_module(root.path)

    def _findings(self, events: list[Event], index: ModuleIndex, checked: set[str]) -> tuple[Finding, ...]:
        suppressions = {
            index.display(path): {s.line: s.codes for s in summary.suppressions} for path, summary in index.loaded.items()
        }
        best: dict[tuple[str, Location], Finding] = {}
        for rule_class in ALL_RULES:
            if not self.config.enables(rule_class.code):
                continue
            for finding in rule_class(self.config).findings(events):
                if finding.location.path not in checked or _suppressed(finding, suppressions):
                    continue
                key = (finding.code, finding.location)
                current = best.get(key)
                if current is None or _preference(finding) < _preference(current):
                    best[key] = finding
        return tuple(sorted(best.values(), key=Finding.sort_key))


def _files_mentioning(files: Iterable[SourceFile], names: set[str], overrides: Mapping[Path, bytes]) -> list[SourceFile]:
    """Files whose text calls one of ``names`` (a cheap scan; only matches get parsed)."""
    if not names:
        return []
    pattern = re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in sorted(names)) + rb")\s*\(")
    found = []
    for source_file in files:
        try:
            source = overrides.get(source_file.path) or read_source(source_file.path)
        except OSError:
            continue
        if pattern.search(source):
            found.append(source_file)
    return found


def _suppressed(finding: Finding, suppressions: dict[str, dict[int, frozenset[str]]]) -> bool:
    codes = suppressions.get(finding.location.path, {}).get(finding.location.line)
    if codes is None:
        return False
    return not codes or any(finding.code.startswith(code) for code in codes)


def _preference(finding: Finding) -> tuple:
    """Among duplicates of one finding, keep the one with the shortest, then first, explanation."""
    return (len(finding.related), [(r.location, r.message) for r in finding.related], finding.message)


def check(paths: Sequence[str], config: Config | None = None, **options: object) -> Report:
    """Analyze ``paths`` and return every finding (see ``Analyzer`` for the options)."""
    return Analyzer(config, **options).check(paths)  # type: ignore[arg-type]


__all__ = ["Analyzer", "Report", "Stats", "check", "summarize_file"]
