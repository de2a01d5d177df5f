"""The analyzer's public API: discover → summarize → link → rules → findings.

The CLI, the flake8 plugin and the language server are thin adapters over ``Analyzer``.
"""

from __future__ import annotations

import gc
import hashlib
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from .cache import EntryMemory, SummaryCache, build_digest, content_digest
from .core.findings import Finding
from .core.locations import Location
from .core.paths import interned, is_notebook, real_path
from .core.settings import Config, code_matches, valid_prefixes
from .core.torch_versions import TorchTarget
from .deepstack import RECURSION_LIMIT, call_with_deep_stack
from .facts import Facts
from .layout import LayoutFacts, LayoutProbe, PackageLayout
from .linking.cancellation import AnalysisCancelled
from .linking.events import Event, ModuleFailure
from .linking.suppressions import unused_in_files
from .linking.walks import WalkMemory
from .notebook import cell_failures, cell_locations, notebook_for
from .project import (
    SourceFile,
    at_word_boundary,
    default_root,
    discover,
    display_path,
    has_anchor,
    import_roots,
    matches_starting,
    module_identity,
    read_source,
)
from .rules import ALL_RULES
from .rules.unparsable_file import UnparsableFile
from .rules.unused_noqa import UnusedNoqa
from .summary.extract import find_suppressions
from .summary.model import ParseFailure
from .summary.view import ModuleView, ParseCounter, ViewMemory
from .target import with_target

if TYPE_CHECKING:
    from .workers import WorkerPool

#: ``name(`` in source text: the names a file calls, for finding the callers of a function. A name
#: followed by a backslash or a comment is taken too: the ``(`` may follow on the next line
#: (``name \\`` then ``(x)``), a superset that costs what the plain pattern costs. The name is
#: matched whole and never given back (a lookahead's group, matched again): a name not followed by
#: ``(`` was tried again one character shorter down to its first (the torch tree's 46 MB: 1.11 ->
#: 0.80 s, the same names in every file).
_CALLED_NAME = re.compile(rb"\b(?=([A-Za-z_][A-Za-z0-9_]*))\1\s*[(\\#]")
#: Below this many roots to analyze, starting worker processes costs more than it saves. 4, not
#: 16: pytorch-image-models (13 roots) 5.8 -> 3.9-4.7 s cold, torchtitan 4.8 -> 3.1-3.5 s, a
#: 3-root nanoGPT stays in process (measured on 2 cores).
_PARALLEL_ROOTS = 4
#: Below this many files to scan for called names, the workers are not asked to help.
_PARALLEL_SCAN_FILES = 16


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


def load_view(
    path: Path,
    display: str,
    cache: SummaryCache | None,
    counter: ParseCounter,
    source: bytes | None = None,
    views: ViewMemory | None = None,
    identity: tuple[str, bool] | None = None,
) -> ModuleView:
    """The view of one module (its outline; blocks are parsed on demand), the one ``views`` keeps
    for the same bytes if any; ``identity``: its (module, is package), else asked of the file
    system. Read errors become failures."""
    module, is_package = identity or module_identity(path)[:2]
    key = (path, display, module, is_package)
    try:
        if source is None and views is not None:
            return views.from_disk(key, read_source, cache, counter)
        if source is None:
            source = read_source(path)
    except OSError as error:
        view = ModuleView(display, b"", module, is_package, None, counter)
        view.failure = ParseFailure(f"cannot read: {error.strerror or error}")
        return view
    if views is not None:
        return views.view(key, source, cache, counter)
    return ModuleView(display, source, module, is_package, cache, counter)


@dataclass(frozen=True)
class RootResult:
    """What analyzing one anchor file found, and the files (with content digests) it depended on."""

    events: tuple[Event, ...]
    #: (defining file, qualified name) of the functions whose callers should be analyzed.
    caller_requests: frozenset[tuple[str, str]]
    dependencies: tuple[tuple[str, str], ...]
    #: Where imports looked for files and found none: (folder, entries that do not exist in it)
    #: (``ModuleIndex.absent``); the result is stale once one of the entries exists.
    absent: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: False when a recursion limit shaped the result: it holds for this run only.
    cacheable: bool = True
    #: Names (beyond the mentions) whose callers in this file were analyzed as entry points here:
    #: the file is not asked about them again.
    covered: frozenset[str] = frozenset()
    #: Which folders were packages and where links pointed (``layout``): stale once one changes.
    layout: LayoutFacts = LayoutFacts()


@dataclass(frozen=True)
class ResultReads:
    """What a stored ``RootResult`` read (its ``dependencies`` and ``absent``), stored beside it
    under its own key (``store_result``): a check finds a stale result from this small entry and
    never decodes the result itself. Decoding is most of a lookup, and the stale results are the
    large ones (the roots that reach an edited trainer): after an edit of the generated
    framework's trainer, a ``check .`` spent 1.9 s in the main process decoding the 28 results
    it then analyzed again (68 ms each), and the language server's first edit after an open
    decoded the trainer's for 0.1 s."""

    dependencies: tuple[tuple[str, str], ...]
    absent: tuple[tuple[str, tuple[str, ...]], ...] = ()
    layout: LayoutFacts = LayoutFacts()


def derived_key(key: str) -> str:
    """Where the result of a root under ``key`` is kept when it read derived contents (``--fix``'s)."""
    return hashlib.sha256(f"derived\0{key}".encode()).hexdigest()


def store_result(cache: SummaryCache, key: str, result: RootResult, *, to_disk: bool = True) -> None:
    """Keep ``result`` under ``key``, and what it read under ``reads_key(key)``. Either entry can
    be missing or older than the other (a run killed between the two writes, concurrent runs):
    the reads only ever rule a result out, and a result whose own reads are not the ones checked
    is checked again whole."""
    cache.store(key, result, to_disk=to_disk)
    cache.store(reads_key(key), ResultReads(result.dependencies, result.absent, result.layout), to_disk=to_disk)


def reads_key(key: str) -> str:
    """The key of what the result stored under ``key`` read (``ResultReads``)."""
    return hashlib.sha256(f"reads\0{key}".encode()).hexdigest()


@dataclass(frozen=True)
class CheckRecord:
    """A whole check's findings, stored under the contents of every checked file: a run that finds
    them all unchanged (and the files outside the check it read, and no newly created import
    candidate) reports these without reading one result or summary."""

    findings: tuple[Finding, ...]
    analyzed: tuple[str, ...]
    read: tuple[tuple[str, str], ...]
    absent: tuple[tuple[str, tuple[str, ...]], ...]
    layout: LayoutFacts = LayoutFacts()


class _Workspace:
    """One process's analysis state: module views, parsed lazily and shared by the roots it analyzes.

    Each root gets a fresh interpreter, so its result depends only on the files it reads: results
    are the same whichever process, order or partition analyzes the roots, and can be cached.
    """

    def __init__(
        self,
        config: Config,
        cache_root: str | None,
        extra_roots: list[Path],
        displays: dict[Path, str],
        overrides: Mapping[Path, bytes],
        replay_repeated_walks: bool = True,
        cache: SummaryCache | None = None,
        walk_memory: WalkMemory | None = None,
        views: ViewMemory | None = None,
        layout: PackageLayout | None = None,
    ) -> None:
        self.config = config
        self.extra_roots = extra_roots
        #: The checked files: a file the analysis could not read is reported in itself when checked.
        self.checked = frozenset(displays)
        #: Walk summaries an earlier analysis left (``linking.walks``; a long-lived front end's),
        #: else this process's for the roots it analyzes, when they repeat walks (``for_check``).
        if walk_memory is None and replay_repeated_walks:
            walk_memory = WalkMemory.for_check()
        self.walk_memory = walk_memory
        #: Module views earlier checks built (a long-lived front end's).
        self.views = views
        # In process the run's cache object (with its in-memory entries) serves; a worker opens its own.
        self.cache = cache or (SummaryCache.open(Path(cache_root), create=False, warn=None) if cache_root else None)
        self.counter = ParseCounter()
        self.overrides = overrides
        # The analysis modules load with the first workspace: a check served from the cache needs none.
        from .linking.index import ModuleIndex

        self.index = ModuleIndex(self._provide, extra_roots, layout)
        for path, display in displays.items():
            self.index.name_display(path, display)

    def _provide(self, path: Path, display: str, module: str, package: bool) -> ModuleView:
        return load_view(
            path, display, self.cache, self.counter, self.overrides.get(path), self.views, (module, package)
        )

    def analyze(self, path: Path, mentions: frozenset[str], cancelled: Callable[[], bool] | None = None) -> RootResult:
        """Analyze one anchor file, on a deep stack (``deepstack``): deep code is not a failure.
        ``AnalysisCancelled`` when ``cancelled`` says so before a function walk."""
        with _fewer_collections():
            result = call_with_deep_stack(self._analyze, path, mentions, cancelled)
        if self.walk_memory is not None:
            absent = ((folder, entry) for folder, entries in result.absent for entry in entries)
            self.walk_memory.note_layout(self.extra_roots, absent, result.layout)
        return result

    def _analyze(self, path: Path, mentions: frozenset[str], cancelled: Callable[[], bool] | None = None) -> RootResult:
        path = interned(path)
        self.index.start_recording()
        view = self.index.view(path)
        events: list[Event] = []
        requests: frozenset[tuple[str, str]] = frozenset()
        covered: frozenset[str] = frozenset()
        failures = [view.failure] if view.failure is not None else []
        if view.failure is not None:
            events.append(
                ModuleFailure(Location.point(view.name, view.failure.line, view.failure.column), view.failure.message)
            )
        else:
            from .linking.interpreter import Interpreter

            interpreter = Interpreter(self.index, self.config, cancelled, self.walk_memory)
            try:
                interpreter.analyze_module(path, mentions)
            except RecursionError:
                failure = ParseFailure(
                    f"cannot analyze: call or import chain deeper than {RECURSION_LIMIT} frames",
                    from_recursion_limit=True,
                )
                failures.append(failure)
                events.append(ModuleFailure(Location.point(view.name), failure.message))
            finally:
                if self.walk_memory is not None and interpreter.walk_keys is not None:
                    self.walk_memory.root_walked(interpreter.walk_keys)
            events.extend(interpreter.events)
            if interpreter.stopped_walking:
                heavy = interpreter.heavy_walks
                counted = f", {heavy:,} of them counted for the data the walks carried" if heavy else ""
                events.append(
                    ModuleFailure(
                        Location.point(view.name),
                        f"analysis incomplete: stopped after {self.config.max_function_walks:,} function walks"
                        f"{counted} (`max-function-walks` in the configuration); the calls left were not followed",
                    )
                )
            requests = frozenset(interpreter.caller_requests)
            covered = interpreter.covered
        accessed = sorted(self.index.accessed)
        for module in accessed:
            module_view = self.index.view(module)
            module_failures = module_view.block_failures()
            if module != path and module_view.failure is not None:
                module_failures = [module_view.failure, *module_failures]  # an imported file it could not read
            if is_notebook(module) and module_view.failure is None:
                module_failures += [
                    ParseFailure(m, line, column) for line, column, m in cell_failures(module_view.text)
                ]
            for failure in module_failures:
                failures.append(failure)
                events.append(
                    ModuleFailure(Location.point(module_view.name, failure.line, failure.column), failure.message)
                )
                if module != path and (failure.from_recursion_limit or module not in self.checked):
                    # The file is not a checked one (its own finding is not reported), or the limit
                    # was hit on the way: say on the root that its analysis is incomplete.
                    events.append(
                        ModuleFailure(
                            Location.point(view.name),
                            f"analysis incomplete: {module_view.name}:{failure.line}: {failure.message}",
                        )
                    )
        dependencies = []
        for module in accessed:
            module_view = self.index.view(module)
            module_view.release_tree()  # a later root needing other blocks parses just those
            dependencies.append((str(module), module_view.digest))
        cacheable = not any(f.from_recursion_limit for f in failures)
        # One event per fact: a function walked again from another call or branch repeats its events.
        unique = tuple(dict.fromkeys(events))
        return RootResult(
            unique,
            requests,
            tuple(dependencies),
            _by_folder(self.index.absent),
            cacheable,
            covered,
            self.index.layout_facts(),
        )


def _by_folder(entries: Iterable[tuple[str, str]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Missing (folder, entry) pairs as each folder with its entries, sorted (a stable record)."""
    grouped: dict[str, set[str]] = {}
    for folder, entry in entries:
        grouped.setdefault(folder, set()).add(entry)
    return tuple((folder, tuple(sorted(names))) for folder, names in sorted(grouped.items()))


def _called_names_of(source: bytes) -> frozenset[bytes]:
    """The names a file calls (``name(``), the candidates for the callers of a requested function."""
    return frozenset(_CALLED_NAME.findall(source))


def _may_see(source: bytes, path: Path, defining: Path, qualname: str, subclasses: Iterable[str] = ()) -> bool:
    """Whether a file that calls the name of ``qualname`` (defined in ``defining``) can be calling
    that function, by what its text spells.

    A module-level function is called from its own file, where its module's name is spelled
    (``from pkg.train import main``, ``import pkg.train``, ``from pkg import train``), or where it
    is imported by name from a package above it or relatively (a re-export: ``from pkg import
    main``); a method where its class or one of its ``subclasses`` is named (constructed,
    imported, subclassed: a script building the project's ``MyTrainer`` calls ``BaseTrainer.step``)
    or in its own file; a function defined inside another (``<locals>``) or a lambda only in its own file (any
    other file can only reach it as a value, under another name). Without this, every script
    calling its own ``main()`` and every ``dict.update(...)`` or ``model.eval()`` made its file a
    caller: 262 of the 287 analyses of an 807-file robotics repository, 84 of its 95 seconds, for
    no finding.
    """
    if path == defining:
        return True
    parts = qualname.split(".")
    if any(part.startswith("<") for part in parts):
        return False
    if len(parts) == 1:
        module = defining.parent.name if defining.stem == "__init__" else defining.stem
        return _spelled(source, module) or _imported_from(source, parts[0], frozenset(defining.parent.parts))
    return any(_spelled(source, name) for name in (parts[-2], *subclasses))


#: ``class Name(bases)`` (bases up to the first closing parenthesis); a definition when only
#: spaces or tabs precede it on its line (``_class_definitions``).
_CLASS_DEFINITION = re.compile(rb"class[ \t]+(\w+)[ \t]*\(([^)]*)\)")


def _starts_line(source: bytes, position: int) -> bool:
    """Only spaces or tabs before ``position`` on its line."""
    return not source[source.rfind(b"\n", 0, position) + 1 : position].strip(b" \t")


def _class_definitions(source: bytes) -> Iterator[re.Match[bytes]]:
    """The matches of ``_CLASS_DEFINITION`` that start a line but for indentation."""
    return matches_starting(_CLASS_DEFINITION, source, _starts_line)


def _subclass_index(contents: Iterable[bytes]) -> dict[str, frozenset[str]]:
    """Each name the bases of a class definition spell, with the classes defined on it (by name:
    ``class Mine(pkg.Base)`` and ``class Mine(Generic[T], Base)`` are both subclasses of ``Base``)."""
    index: dict[str, set[str]] = {}
    for source in contents:
        for match in _class_definitions(source):
            name = match.group(1).decode("ascii", "replace")
            for base in set(re.findall(rb"\w+", match.group(2))):
                index.setdefault(base.decode("ascii", "replace"), set()).add(name)
    return {base: frozenset(names) for base, names in index.items()}


def _subclasses_of(name: str, index: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """The classes defined on ``name``, directly or through others (``index``: ``_subclass_index``)."""
    found: set[str] = set()
    pending = [name]
    while pending:
        for subclass in index.get(pending.pop(), ()):
            if subclass not in found and subclass != name:
                found.add(subclass)
                pending.append(subclass)
    return frozenset(found)


def _spelled(source: bytes, word: str) -> bool:
    """``word`` in ``source`` as a whole word (``\\bword\\b``)."""
    return next(matches_starting(_word_pattern(word), source, at_word_boundary), None) is not None


@lru_cache(maxsize=4096)
def _word_pattern(word: str) -> re.Pattern[bytes]:
    """``word`` ending at a word boundary (``_spelled`` checks where it starts)."""
    return re.compile(re.escape(word.encode()) + rb"\b")


@lru_cache(maxsize=4096)
def _import_pattern(name: str) -> re.Pattern[bytes]:
    """``from <module> import name`` (``_imported_from`` checks that ``from`` starts a word)."""
    word = re.escape(name.encode())
    return re.compile(rb"from[ \t]+([.\w]+)[ \t]+import(?:[ \t]+[\w \t,\\]*?|[ \t]*\([\w\s,]*?)\b" + word + rb"\b")


def _imported_from(source: bytes, name: str, packages: frozenset[str]) -> bool:
    """``from <module> import name`` (as an alias, in a list, in parentheses over several lines)
    with a relative ``<module>`` or one whose last part is one of ``packages``."""
    for match in matches_starting(_import_pattern(name), source, at_word_boundary):
        module = match.group(1).decode("ascii", "replace")
        if module.startswith(".") or module.rsplit(".", 1)[-1] in packages:
            return True
    return False


def _entry_points(files: list[SourceFile], contents: Mapping[Path, bytes]) -> list[SourceFile]:
    """The checked files that can hold an anchor: the roots a check analyzes first."""
    return [f for f in files if f.path in contents and has_anchor(contents[f.path])]


def _names_of(joined: bytes) -> frozenset[bytes]:
    """The names a cached NUL-joined string holds (``_Run._called_names``)."""
    return frozenset(joined.split(b"\0")) if joined else frozenset()


def _called_names_in(files: list[tuple[Path, str]]) -> list[frozenset[bytes] | None]:
    """``_called_names_of`` for files read from disk (a worker's share), None for a file whose
    contents are no longer the checked ones (the main process scans what it read)."""
    found: list[frozenset[bytes] | None] = []
    for path, digest in files:
        try:
            source = read_source(path)
        except OSError:
            source = None
        found.append(_called_names_of(source) if source is not None and content_digest(source) == digest else None)
    return found


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Run the garbage collector's youngest generation every 50,000 allocations instead of 700
    while a root is analyzed: the interpreter allocates millions of small immutable values, few of
    them in cycles (generated framework, --jobs 1: 8 % less time, 30 MB more memory). The
    thresholds are put back after, for the process hosting the analysis (flake8, the editor), by
    the last of the analyses running at the same time in its threads."""
    global _analyses_running, _thresholds_before
    with _THRESHOLD_LOCK:
        if _analyses_running == 0:
            _thresholds_before = gc.get_threshold()
            gc.set_threshold(50_000, *_thresholds_before[1:])
        _analyses_running += 1
    try:
        yield
    finally:
        with _THRESHOLD_LOCK:
            _analyses_running -= 1
            if _analyses_running == 0:
                gc.set_threshold(*_thresholds_before)


_THRESHOLD_LOCK = threading.Lock()
_analyses_running = 0
_thresholds_before = gc.get_threshold()


_WORKER: _Workspace | None = None


def _start_worker(*arguments: object) -> None:
    global _WORKER
    _WORKER = _Workspace(*arguments)  # type: ignore[arg-type]


def _analyze_in_worker(task: tuple[str, frozenset[str], str | None]) -> tuple[RootResult, set, set, float]:
    """Analyze one root in a worker and store its result under ``key`` (the workers encode and
    write their results at the same time, where the main process wrote them one after another);
    with the seconds of CPU it took, which order the next round's roots."""
    assert _WORKER is not None
    started = time.process_time()
    path, mentions, key = task
    result = _WORKER.analyze(Path(path), mentions)
    if key is not None and _WORKER.cache is not None and result.cacheable:
        store_result(_WORKER.cache, key, result)
    return result, set(_WORKER.counter.parsed), set(_WORKER.counter.cached), time.process_time() - started


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
        ``walk_memory`` keeps function walks across them (``linking.walks``): an edit's check
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
    ) -> Report:
        """Analyze ``paths``. ``sources`` overrides file contents by resolved path (unsaved editor
        buffers, stdin); a path named in ``paths`` that ``sources`` holds need not exist on disk.
        ``derived``: the ``sources`` are a function of the files on disk (``--fix``'s fixed
        contents), not an editor's buffers, so what is found from them is kept on disk too.

        ``cancelled`` is asked before each root and, in this process, before each function walk;
        when it answers True the check stops with ``AnalysisCancelled`` (the language server's
        check of the whole project gives way to the next edit). Results already computed stay in
        the cache.
        """
        started = time.perf_counter()
        files, problems, events, contents, run = self._prepare(paths, sources)
        run.cancelled = cancelled
        run.derived = derived
        remembered = self._remembered(run, files, started)
        if remembered is not None:
            return remembered

        tasks = [(f, frozenset[str]()) for f in _entry_points(files, contents)]
        asked: frozenset[tuple[str, str]] = frozenset()
        #: The names each file was analyzed as a caller of (a later round asks it about new ones only).
        mentioned: dict[Path, frozenset[str]] = {}
        analyzed: set[str] = set()
        absent: set[tuple[str, str]] = set()
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
                    absent.update((folder, entry) for folder, entries in result.absent for entry in entries)
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
                findings, tuple(sorted(analyzed)), report.digests, _by_folder(absent), LayoutFacts.of(packages, links)
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
            run.walk_again(_entry_points(files, contents))
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
    ) -> tuple[list[SourceFile], list, list[Event], dict[Path, bytes], _Run]:
        """The checked files, discovery problems (as events too), their contents, and the run over them."""
        overrides = dict(sources or {})
        if self.config.torch is None:  # once per analyzer: the installed torch, else the project's pins
            self.config = with_target(self.config, paths)
        files, problems = discover(paths, self.config, virtual=overrides.keys())
        events: list[Event] = [ModuleFailure(Location.point(p.display), p.reason) for p in problems]
        contents = self._read(files, events, overrides)
        digests = {path: content_digest(source) for path, source in contents.items()}
        sizes = {path: len(source) for path, source in contents.items()}
        run = _Run(self, files, paths, self.cache_for(paths), overrides, digests, sizes)
        return files, problems, events, contents, run

    def _remembered(self, run: _Run, files: list[SourceFile], started: float) -> Report | None:
        remembered = run.remembered_check()
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
                events.append(
                    ModuleFailure(Location.point(source_file.display), f"cannot read: {error.strerror or error}")
                )
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
        by_display = {f.display: f.path for f in files}
        suppressions: dict[str, dict[int, frozenset[str]]] = {}
        per_file: dict[str, frozenset[str]] = {}
        #: display -> line -> the codes of its suppression that silenced a finding (``*``: all).
        used: dict[str, dict[int, set[str]]] = {}

        def suppressed(finding: Finding) -> bool:
            path = finding.location.path
            if path not in suppressions:
                source = contents.get(by_display.get(path, Path()), b"")
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
        facts = Facts(events, self.config)
        for rule_class in ALL_RULES:
            enabled = self.config.enables(rule_class.code)
            if not enabled and rule_class.code != UnparsableFile.code:
                continue
            for finding in rule_class(self.config).findings(facts, reported_in=checked):
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


class _Run:
    """One check's analysis of roots: from the result cache, in this process, or in workers."""

    def __init__(
        self,
        analyzer: Analyzer,
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
        #: Which folders are packages, for this check (``_Workspace`` in this process shares it).
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
        # Results depend on how paths are shown, which files exist and where imports are looked
        # for (a ``src/`` folder created makes one more root), not only on contents.
        scope = [
            build_digest(),
            repr(analyzer.config),
            os.getcwd(),
            *paths,
            *sorted(f"{f.display}\0{f.path}" for f in files),
            "\0roots",
            *map(str, roots),
        ]
        self.scope = hashlib.sha256("\0".join(scope).encode("utf-8", "surrogateescape")).hexdigest()
        self._local: _Workspace | None = None
        self._pool: WorkerPool | None = None
        #: The checked files' sizes, and the CPU seconds roots took in the workers, by root: what
        #: a root is expected to cost (``_expected_costs``).
        self._sizes = sizes
        self._seconds: dict[Path, float] = {}
        #: The results of this check so far, by root and mentions.
        self._analyzed: dict[Path, dict[frozenset[str], RootResult]] = {}
        self._called: dict[Path, frozenset[bytes]] | None = None
        #: Class names to the classes defined on them in the checked files (``_subclass_index``).
        self._subclasses: dict[str, frozenset[str]] | None = None
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
        keys = [self._key(path, mentions) if stored_by_workers else None for path, mentions in tasks]
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
        another process is analyzing is left for last, and by then usually read from the cache."""
        local = self._workspace()
        progress = self.analyzer.progress
        results: dict[int, RootResult] = {}
        deferred = []
        for position, (path, mentions) in enumerate(tasks):
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

    def _workspace(self) -> _Workspace:
        """The workspace that analyzes roots in this process (made once per check). Walk summaries
        kept from earlier checks are dropped when what their imports found changed."""
        if self._local is None:
            memory = self.analyzer.walk_memory
            roots = self.workspace_arguments[2]
            if memory is not None and not memory.layout_holds(
                roots, lambda absent, layout: self._unchanged((), _by_folder(absent), layout)
            ):
                memory.clear()
            self._local = _Workspace(
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
        key = self._key(path, mentions)
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
        progress = self.analyzer.progress
        pool = self._workers()
        costs = self._expected_costs([Path(path) for path, _, _ in tasks])
        results: dict[int, RootResult] = {}
        finished = pool.run(_analyze_in_worker, tasks, costs, homes=[path for path, _, _ in tasks])
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

            self._pool = WorkerPool(self.analyzer.jobs, _start_worker, self.workspace_arguments)
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
        the function (``_may_see``)."""
        if self._called is None:
            self._called = self._called_names(contents)
        by_name: dict[str, list[tuple[Path, str, frozenset[str]]]] = {}
        for path, qualname in requested:
            parts = qualname.split(".")
            subclasses: frozenset[str] = frozenset()
            if len(parts) > 1 and not any(part.startswith("<") for part in parts):  # a method
                if self._subclasses is None:
                    self._subclasses = _subclass_index(contents.values())
                subclasses = _subclasses_of(parts[-2], self._subclasses)
            by_name.setdefault(parts[-1], []).append((Path(path), qualname, subclasses))
        found = []
        for source_file in self.files:
            called = self._called.get(source_file.path)
            if called is None:
                continue
            names = frozenset(
                name
                for name, functions in by_name.items()
                if name.encode() in called
                and any(_may_see(contents[source_file.path], source_file.path, *function) for function in functions)
            )
            if names:
                found.append((source_file, names))
        return found

    def _called_names(self, contents: Mapping[Path, bytes]) -> dict[Path, frozenset[bytes]]:
        # Kept as one NUL-joined string of names per file: encoded name by name, the torch tree's
        # 2,285 sets took 0.19 s to store and 0.21 s to load, in the main process between rounds.
        key = hashlib.sha256(f"called-names\0{self.scope}".encode()).hexdigest()
        stored = self.cache.load(key, dict[str, bytes]) if self.cache is not None else None
        known: dict[str, bytes] = stored or {}
        found = {path: _names_of(known[self.digests[path]]) for path in contents if self.digests[path] in known}
        missing = [path for path in contents if path not in found]
        if self._pool is not None and not self.overrides and len(missing) >= _PARALLEL_SCAN_FILES:
            # The workers are idle between rounds: they read and scan the files (from disk, where
            # the contents are without overrides) while this process waits.
            shares = [
                [(path, self.digests[path]) for path in missing[start :: self.analyzer.jobs]]
                for start in range(self.analyzer.jobs)
            ]
            costs = [float(len(share)) for share in shares]
            for position, names in self._pool.run(_called_names_in, shares, costs):
                found.update((path, called) for (path, _), called in zip(shares[position], names) if called is not None)
        found.update((path, _called_names_of(contents[path])) for path in missing if path not in found)
        current = {self.digests[path]: b"\0".join(names) for path, names in found.items()}
        if self.cache is not None and current.keys() != known.keys():
            self.cache.store(key, current)
        return found

    def _check_key(self) -> str:
        text = f"check\0{self.scope}\0{self.checked_contents}"
        return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()

    def remembered_check(self) -> CheckRecord | None:
        """The findings of a check of exactly these contents, when nothing it read has changed since."""
        if self.cache is None:
            return None
        found = self.cache.load(self._check_key(), CheckRecord)
        if found is None or not self._unchanged(found.read, found.absent, found.layout):
            return None
        return found

    def remember_check(self, record: CheckRecord) -> None:
        """Store a check's findings; not for editor buffers, whose contents pass with the next keystroke."""
        if self.cache is not None and (not self.overrides or self.derived):
            self.cache.store(self._check_key(), record)

    def _unchanged(
        self, read: Sequence[tuple[str, str]], absent: Sequence[tuple[str, Sequence[str]]], layout: LayoutFacts
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

    def _key(self, path: Path, mentions: frozenset[str]) -> str:
        return hashlib.sha256(
            f"result\0{self.scope}\0{path}\0{sorted(mentions)}".encode("utf-8", "surrogateescape")
        ).hexdigest()

    def _lookup(self, path: Path, mentions: frozenset[str]) -> RootResult | None:
        """The root's stored result, or the one found from derived contents (``--fix``'s), if valid."""
        if self.cache is None:
            return None
        key = self._key(path, mentions)
        found = self._valid_result(key)
        return found if found is not None else self._valid_result(derived_key(key))

    def _valid_result(self, key: str) -> RootResult | None:
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
        if self.cache is not None and result.cacheable:
            unsaved = self._unsaved_buffers()
            reads_unsaved = any(dependency in unsaved for dependency, _ in result.dependencies)
            key = self._key(path, mentions)
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


def _stats(files: list[SourceFile], analyzed: set[str], run: _Run, started: float) -> Stats:
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


__all__ = ["Analyzer", "Report", "Stats", "ViewMemory", "check", "load_view"]
