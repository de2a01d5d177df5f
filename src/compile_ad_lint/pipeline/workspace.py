"""One process's analysis of roots (``Workspace``), in this process or in a worker (``start_worker``,
``analyze_in_worker``): module views, the module index, an interpreter per root."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path

from ..cache import SummaryCache
from ..core.collector import fewer_collections
from ..core.locations import Location
from ..core.paths import interned, is_notebook
from ..core.settings import Config
from ..deepstack import RECURSION_LIMIT, call_with_deep_stack
from ..layout import PackageLayout
from ..linking.events import Event, ModuleFailure
from ..linking.incremental import WalkMemory
from ..notebook import cell_failures
from ..project import module_identity, read_source
from ..summary.model import ParseFailure
from ..summary.view import ModuleView, ParseCounter, ViewMemory
from .results import by_folder
from .root_results import RootResult, store_result
from .tuning import peak_resident_bytes, walk_summary_budget


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


class Workspace:
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
        #: Walk summaries an earlier analysis left (``linking.incremental``; a long-lived front end's),
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
        from ..linking.index import ModuleIndex

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
        with fewer_collections():
            result = call_with_deep_stack(self._analyze, path, mentions, cancelled)
        memory = self.walk_memory
        if memory is not None:
            memory.note_layout(self.extra_roots, result.absent, result.layout)
            if not memory.every_walk and memory.summarizing:
                peak = peak_resident_bytes()
                if peak is not None and peak > walk_summary_budget():
                    memory.retire()
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
            from ..linking.interpreter import Interpreter

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
            interpreter.release()
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
            by_folder(self.index.absent),
            cacheable,
            covered,
            self.index.layout_facts(),
        )


_WORKER: Workspace | None = None


def start_worker(*arguments: object) -> None:
    global _WORKER
    _WORKER = Workspace(*arguments)  # type: ignore[arg-type]


def analyze_in_worker(task: tuple[str, frozenset[str], str | None]) -> tuple[RootResult, set, set, float]:
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
