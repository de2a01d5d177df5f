"""The language server: document events, the debounced analyses of the open files and the project
pass, publishing, and the code actions asked of what was published."""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import sys
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from ..._version import __version__
from ...api import AnalysisCancelled, Analyzer, ViewMemory, WalkMemory
from ...cache import EntryMemory, SummaryCache
from ...config import config_signature, load_config
from ...core.findings import Finding
from ...core.paths import as_the_cli_names_it, real_path
from ...core.settings import DEFAULT_RULE_DOCS_URL, Config, ConfigError
from ...core.torch_versions import TargetError, TorchTarget
from ...fixes import Sources as FixSources
from ...fixes import resolve as resolve_fixes
from ...project import project_root as shared_project_root
from ...target import with_target
from .actions import FIX_ALL_KIND, SOURCE, Published, code_actions, to_diagnostic
from .documents import Buffer, ClosedTables, Document, Files, ServerProtocol, Snapshot, path_of, saved, workspace_key
from .heap import collector_paused, settle_heap
from .transport import FramedInput, terminate

DEFAULT_DEBOUNCE_SECONDS = 0.3

logger = logging.getLogger(__name__)


#: How long a client may take to accept a progress token before the pass runs without one.
PROGRESS_CREATE_TIMEOUT_SECONDS = 5.0
#: How long the buffers must stay as analyzed before the whole project is checked with them and the
#: published findings' fix edits are built.
IDLE_SECONDS = 1.0
#: How many times the open files' walks are rehearsed after an analysis (``_rehearse``).
REHEARSALS = 3


class CompileAdLintServer(LanguageServer):
    """Publishes compile-ad-lint findings as diagnostics; offers their fixes and ``# noqa`` as quick
    fixes, and the safe fixes of a document as one "fix all" source action."""

    def __init__(self, debounce: float = DEFAULT_DEBOUNCE_SECONDS) -> None:
        super().__init__(
            name=SOURCE,
            version=__version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=ServerProtocol,
        )
        self.debounce = debounce
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task] = set()
        #: One analysis at a time: the project is small enough, and the CPUs are the user's.
        self._analysis_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="compile-ad-lint")
        #: Fix edits are built on their own thread, so that the next edit's analysis never waits for them.
        self._fix_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="compile-ad-lint-fixes")
        self._reported_config_errors: set[str] = set()
        #: The torch target of each project and ``target-torch`` setting (``_with_target``).
        self._targets: dict[tuple[Path, str | None], TorchTarget] = {}
        #: Each project's configuration and what it was read from (``config_signature``): read
        #: again only when a ``pyproject.toml`` it looks at changes, not twice per edit.
        self._configs: dict[Path, tuple[tuple, Config]] = {}
        #: Decoded cache entries kept between edits; what an analysis stores is written to disk once
        #: the buffers are idle (``_write_behind``).
        self._memory = EntryMemory(write_behind=True)
        #: Function walks kept between edits, by project root and configuration (``linking.incremental``):
        #: an edit's own pass replays the walks of the code the edit did not change.
        self._walk_memories: dict[tuple[Path, str], WalkMemory] = {}
        #: Module views kept between edits and passes (``ViewMemory``): a check builds only the
        #: views of the files whose bytes changed.
        self._views = ViewMemory()
        #: Line tables of the files findings point into that are not open (``ClosedTables``).
        self._closed_tables = ClosedTables()
        #: Workspace key of each document published for → what its diagnostics were computed from.
        self._published: dict[str, Published] = {}
        #: Workspace key of each open document → the stamp of its current text.
        self._stamps: dict[str, int] = {}
        #: Workspace keys of documents opened whose first analysis has not started yet.
        self._opening: set[str] = set()
        #: Workspace key of each document published for → the diagnostics and version last sent.
        self._sent: dict[str, tuple[int | None, list[types.Diagnostic]]] = {}
        self._clock = itertools.count(1)
        #: Analyses handed to the analysis thread and not begun yet: a rehearsal gives way to them.
        self._analyses_due = 0
        self._due_lock = threading.Lock()
        self.shut_down = False
        self._register(types.TEXT_DOCUMENT_DID_OPEN, self.did_open)
        self._register(types.TEXT_DOCUMENT_DID_CHANGE, self.did_change)
        self._register(types.TEXT_DOCUMENT_DID_SAVE, self.did_save, types.SaveOptions(include_text=False))
        self._register(types.TEXT_DOCUMENT_DID_CLOSE, self.did_close)
        self._register(
            types.TEXT_DOCUMENT_CODE_ACTION,
            self.code_action,
            types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]),
        )
        self._register(types.SHUTDOWN, self.on_shutdown)
        self._register(types.EXIT, self.on_exit)

    def _register(self, feature: str, method: Callable[[Any], Any], options: Any = None) -> None:
        """pygls registers plain functions (it tags them), so each handler is a closure over a method."""

        def handler(params: Any) -> Any:
            return method(params)

        self.feature(feature, options)(handler)

    # -- document events --------------------------------------------------------------------

    def did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        self._stamp(params.text_document.uri)
        self._opening.add(workspace_key(params.text_document.uri))
        self._analyze_soon(params.text_document.uri, delay=0.0)

    def did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        self._stamp(params.text_document.uri)
        self._analyze_soon(params.text_document.uri, delay=self.debounce)

    def did_save(self, params: types.DidSaveTextDocumentParams) -> None:
        self._analyze_soon(params.text_document.uri, delay=0.0)

    def did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        self._stamps.pop(workspace_key(uri), None)
        self._sent.pop(workspace_key(uri), None)
        self._opening.discard(workspace_key(uri))
        self._cancel_timer(uri)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        path = path_of(uri)
        if path is not None:  # the others fall back to this file's saved contents
            self._start(self._snapshot_for(path))

    def on_shutdown(self, _params: None) -> None:
        self.shut_down = True
        for uri in list(self._timers):
            self._cancel_timer(uri)
        self._analysis_pool.shutdown(wait=False, cancel_futures=True)
        self._fix_pool.shutdown(wait=False, cancel_futures=True)
        self._memory.flush()  # what was stored since the last idle moment (an analysis in flight may add more, unwritten)

    def on_exit(self, _params: None) -> NoReturn:
        """``exit``: 0 after ``shutdown``, else 1 (the specification), without waiting for an analysis."""
        terminate(0 if self.shut_down else 1)

    # -- scheduling -------------------------------------------------------------------------

    def _stamp(self, uri: str) -> None:
        """A new stamp for ``uri``'s text: results computed from its earlier texts are now stale."""
        self._stamps[workspace_key(uri)] = next(self._clock)

    def _stale(self, snapshot: Snapshot) -> bool:
        """Whether a buffer of ``snapshot`` changed, closed or reopened since.

        Every such event schedules a newer analysis of the same project, so a stale snapshot's
        result is never needed. Read from the analysis thread too (a dict lookup, atomic).
        """
        return any(self._stamps.get(workspace_key(buffer.uri)) != buffer.stamp for buffer in snapshot.buffers)

    def _analyze_soon(self, uri: str, delay: float) -> None:
        """Per-document debounce: (re)start ``uri``'s timer; when it fires, analyze its project."""
        self._cancel_timer(uri)
        loop = asyncio.get_running_loop()
        self._timers[uri] = loop.call_later(delay, self._timer_fired, uri)

    def _cancel_timer(self, uri: str) -> None:
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()

    def _timer_fired(self, uri: str) -> None:
        self._timers.pop(uri, None)
        key = workspace_key(uri)
        opening = key in self._opening
        self._opening.discard(key)
        path = path_of(uri)
        if path is None:
            return
        self._start(self._snapshot_for(path, opening=opening))

    def _start(self, snapshot: Snapshot | None) -> None:
        if snapshot is None:
            return
        task = asyncio.get_running_loop().create_task(self._analyze_and_publish(snapshot))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _open_documents(self) -> dict[Path, Document]:
        """The open documents with a ``file:`` URI, by resolved path: of a file open twice (through
        a symlink and as its target), the one edited last."""
        documents: dict[Path, Document] = {}
        for path, document in self._documents_by_path():
            kept = documents.get(path)
            if kept is None or self._stamp_of(document) >= self._stamp_of(kept):
                documents[path] = document
        return documents

    def _documents_by_path(self) -> list[tuple[Path, Document]]:
        found = []
        for document in list(self.workspace.text_documents.values()):
            path = path_of(document.uri)
            if path is not None and isinstance(document, Document):
                found.append((path, document))
        return found

    def _stamp_of(self, document: TextDocument) -> int:
        return self._stamps.get(workspace_key(document.uri), 0)

    def _snapshot_for(self, path: Path, *, opening: bool = False) -> Snapshot | None:
        """The open documents in ``path``'s project and the contents of every open buffer. A
        buffer whose file is gone (deleted while open) is analyzed as it is; each document of a
        file open twice is published for. One document no analysis can take (text that is no
        Unicode, a path that cannot be looked at) is left out, never the others."""
        root = self.project_root(path)
        buffers, sources = [], {}
        latest = self._open_documents()
        for doc_path, document in self._documents_by_path():
            try:
                if latest.get(doc_path) is document:
                    # A lone surrogate (valid in JSON) is kept as bytes no decoding takes: CAL900.
                    sources[doc_path] = document.source.encode("utf-8", "surrogatepass")
                if (
                    doc_path.suffix in (".py", ".pyi")
                    and (doc_path.is_file() or not os.path.lexists(doc_path))
                    and self.project_root(doc_path) == root
                ):
                    stamp = self._stamps.get(workspace_key(document.uri))
                    buffers.append(Buffer(document.uri, doc_path, document.version, stamp))
            except (OSError, RuntimeError, ValueError):
                logger.warning("compile-ad-lint: cannot take %s", document.uri, exc_info=True)
        if not buffers:
            return None
        return Snapshot(root, tuple(buffers), sources, opening)

    def project_root(self, path: Path) -> Path:
        """``project.project_root`` with the workspace folders (the innermost holding ``path`` wins
        over markers), else the file's folder: a loose script is analyzed with its neighbours."""
        uris = [folder.uri for folder in self.workspace.folders.values()]
        if self.workspace.root_uri:
            uris.append(self.workspace.root_uri)
        folders = [folder for folder in map(path_of, uris) if folder is not None]
        root = shared_project_root(path, folders)[0]
        return real_path(root) if root is not None else path.parent

    # -- analysis ---------------------------------------------------------------------------

    async def _analyze_and_publish(self, snapshot: Snapshot) -> None:
        loop = asyncio.get_running_loop()
        if self.shut_down:
            return
        with self._due_lock:
            self._analyses_due += 1
        with collector_paused():  # until the publish and the heap's settling (``CollectorPause``)
            try:
                analyzed = await loop.run_in_executor(self._analysis_pool, self._analyze, snapshot)
            except Exception as error:
                if self.shut_down:
                    return
                logger.exception("compile-ad-lint analysis failed")
                self.window_log_message(
                    types.LogMessageParams(
                        type=types.MessageType.Error, message=f"{SOURCE}: analysis failed: {error!r}"
                    )
                )
                return
            if analyzed is None or self._stale(snapshot):
                return  # superseded: the newer analysis publishes
            whole_project, findings, digests, cache, rehearse = analyzed
            # Diagnostics first: a fix's edits can take LibCST longer than the analysis itself (a
            # CAL002 fix may wrap compiled calls in a dozen files), and code actions resolve on demand.
            self._publish(snapshot, findings, digests, cache)
            await self._settle(whole_heap=False)
        if rehearse:
            await self._rehearse(snapshot)
        # Writing the cache, the project pass and the fix edits wait until the buffers have stayed
        # as analyzed for a moment: started at once, they took the time between two keystrokes'
        # analyses (writing the trainer's result: 0.05-0.13 s, in the 0.3 s a rehearsal has) or
        # shared the interpreter lock with the next edit's analysis (fix edits built at once made
        # the first edit of the trainer take 3.4 s instead of 1.2 s).
        await asyncio.sleep(IDLE_SECONDS)
        if self.shut_down or self._stale(snapshot):
            return  # the newer analysis publishes and builds its own
        await self._write_behind()
        if not whole_project:
            published = await self._publish_project(snapshot)
            await self._write_behind()  # what the pass stored, also when an edit stopped it
            await self._settle(whole_heap=True)
            if not published:
                return
        try:
            await loop.run_in_executor(self._fix_pool, self._resolve_published, snapshot)
        except Exception:
            logger.exception("compile-ad-lint: resolving fixes failed")

    async def _rehearse(self, snapshot: Snapshot) -> None:
        """Walk the open files' entry points again for the walk memory (``Analyzer.rehearse``), at
        most ``REHEARSALS`` times while walks were not replayed, so that the next edit replays the
        code it did not change: after an open served from a recorded check the first edit walked
        everything (1.3-1.5 s on the generated framework's trainer), and the first edits after a
        fresh open walked part of it again (0.3-0.5 s, against 0.2 s once replayed).

        The rehearsal after an open shows as a work-done progress ("Indexing the open files", ended
        "done", or "superseded" when an analysis came first): edits made before it ends walk what
        it has not (the first edit after an open served from a recorded check: 1.4-1.9 s, against
        0.1-0.3 s once it ended). It goes on while the user types and gives way, between two walks,
        to the next analysis once that is due (its debounce over): what it walks is the code the
        first edits do not change. A rehearsal after an edit stops at the next edit, as the
        project pass does: it replays the buffer a keystroke old, whose edited function the next
        edit most likely changes again, and going on until the next analysis was due made the
        generated trainer's real edits slower (one A/B round, ``forward_backward_step`` edited ten
        times: p50 0.40-0.41 s against 0.32-0.39 s)."""
        token = await self._begin_progress("Indexing the open files") if snapshot.opening else None
        outcome = "superseded"
        try:
            for _ in range(REHEARSALS):
                if self._rehearsal_over(snapshot):
                    return
                try:
                    walked = await asyncio.get_running_loop().run_in_executor(
                        self._analysis_pool, self._walk_again, snapshot
                    )
                except RuntimeError:  # the pool was shut down
                    return
                if self._analysis_due():
                    return  # the next analysis is waiting; its publish settles the heap
                await self._settle(whole_heap=False)
                if not walked:
                    break
            outcome = "done"
        finally:
            if token is not None:
                self.work_done_progress.end(token, types.WorkDoneProgressEnd(message=outcome))

    def _rehearsal_over(self, snapshot: Snapshot) -> bool:
        """Whether a rehearsal of ``snapshot``'s walks should stop (read from the analysis thread)."""
        return self.shut_down or self._analysis_due() or (not snapshot.opening and self._stale(snapshot))

    def _analysis_due(self) -> bool:
        """Whether an analysis is waiting for the analysis thread (read from that thread too)."""
        return self._analyses_due > 0

    def _walk_again(self, snapshot: Snapshot) -> int:
        """Runs in the analysis thread: one rehearsal; how many walks it could not replay."""
        if self._rehearsal_over(snapshot):
            return 0
        paths = snapshot.buffer_paths()
        analyzer = self._analyzer(snapshot, replay_walks=True)
        try:
            with collector_paused():
                return analyzer.rehearse(
                    paths, sources=snapshot.sources, cancelled=lambda: self._rehearsal_over(snapshot)
                )
        except AnalysisCancelled:
            return 0
        except Exception:
            logger.exception("compile-ad-lint: rehearsing the walks failed")
            return 0

    async def _write_behind(self) -> None:
        """Write what the analyses stored to the cache directory, on the analysis thread, once the
        buffers are idle; it gives way (between two entries) to an analysis that comes due."""
        await self._on_analysis_thread(lambda: self._memory.flush(stop=self._analysis_due))

    async def _settle(self, *, whole_heap: bool) -> None:
        """Settle the heap (``settle_heap``) on the analysis thread, after a publish (the next
        analysis queues behind it); not when an analysis is already due (its publish settles)."""

        def settle() -> None:
            if not self._analysis_due():
                settle_heap(whole_heap)

        await self._on_analysis_thread(settle)

    async def _on_analysis_thread(self, work: Callable[[], object]) -> None:
        try:
            await asyncio.get_running_loop().run_in_executor(self._analysis_pool, work)
        except RuntimeError:  # the pool was shut down: ``on_shutdown`` writes what is left
            pass

    def _resolve_published(self, snapshot: Snapshot) -> None:
        """Give the findings published for ``snapshot`` their fix edits (on the fix thread)."""
        for buffer in snapshot.buffers:
            published = self._published.get(workspace_key(buffer.uri))
            if published is not None and published.snapshot is snapshot and not self._stale(snapshot):
                self._resolved(buffer.uri, published)

    def _resolved(self, uri: str, published: Published) -> Published:
        """``published`` with its fixes' edits, built once and kept (against the buffers as analyzed)."""
        if published.resolved:
            return published
        sources = FixSources(published.snapshot.sources, published.digests, cache=published.cache)
        done = replace(published, findings=resolve_fixes(published.findings, sources), resolved=True)
        key = workspace_key(uri)
        if self._published.get(key) is published:
            self._published[key] = done
        return done

    def _analyzer(self, snapshot: Snapshot, *, replay_walks: bool = False) -> Analyzer:
        """Static only: nothing is imported or executed. The only thing written is the project's
        ``.compile_ad_lint_cache/`` (shared with the CLI and flake8); decoded entries also stay in
        ``self._memory``, so an edit re-analyzes only the anchors whose dependencies changed.
        With ``replay_walks`` (the open files' pass after an edit) the walks of the code the edit
        did not change are replayed from the earlier passes' (``linking.incremental``); the project
        pass analyzes as the CLI does, so what it publishes is what the CLI reports."""
        config = self._config(snapshot.root)
        walks = self._walk_memories.setdefault((snapshot.root, repr(config)), WalkMemory()) if replay_walks else None
        return Analyzer(
            config, jobs=1, cache_root=snapshot.root, memory=self._memory, walk_memory=walks, views=self._views
        )

    def _analyze(
        self, snapshot: Snapshot
    ) -> tuple[bool, tuple[Finding, ...], Mapping[str, str], SummaryCache | None, bool] | None:
        """Runs in the analysis thread: whether the findings are the whole project's, the findings,
        the digests of the files read, the cache, and whether walks are worth rehearsing (some
        were not replayed); None when the snapshot went stale while queued."""
        with self._due_lock:
            self._analyses_due -= 1
        if self._stale(snapshot):
            return None
        analyzer = self._analyzer(snapshot, replay_walks=True)
        walks = analyzer.walk_memory
        assert walks is not None
        replayed, missed = walks.hits, walks.misses
        # The whole project's findings when a check of it recorded them for these very contents
        # (a first open after ``compile-ad-lint check .``): what the CLI showed, at a warm run's cost.
        # Otherwise the open files' own entry points, which an edit re-analyzes alone (the project
        # pass follows once the buffers are idle). A record is keyed by what is on disk, so it is
        # not looked for (reading the whole project) once a buffer holds unsaved edits.
        project = [as_the_cli_names_it(snapshot.root)]
        report = analyzer.remembered(project, sources=snapshot.sources) if saved(snapshot) else None
        if report is not None:  # nothing walked: rehearse the open files' walks
            return True, report.findings, dict(report.digests), analyzer.cache_for(project), True
        paths = snapshot.buffer_paths()
        try:  # an edit meanwhile stops it (a long first pass): the edit's analysis publishes
            report = analyzer.check(paths, sources=snapshot.sources, cancelled=lambda: self._stale(snapshot))
        except AnalysisCancelled:
            return None
        # Rehearse when some walk could not be replayed, and when none was walked at all: the open
        # files' results came from the cache (a reopened editor after a session that left unsaved
        # edits, a check of the file alone), so the memory holds nothing the next edit can replay.
        rehearse = walks.misses > missed or walks.hits == replayed
        return False, report.findings, dict(report.digests), analyzer.cache_for(paths), rehearse

    async def _publish_project(self, snapshot: Snapshot) -> bool:
        """Publish the whole project's findings with ``snapshot``'s buffers (what the CLI would
        report were they saved) for the documents whose diagnostics they change. False when an
        edit (or close) made the snapshot stale meanwhile: the pass stopped, nothing was published.
        The progress ends after the publish, so a client that sees "done" has the diagnostics."""
        token = await self._begin_progress("Checking the project")
        outcome = "superseded"
        try:
            found = await asyncio.get_running_loop().run_in_executor(
                self._analysis_pool, self._analyze_project, snapshot
            )
            if found is None or self.shut_down or self._stale(snapshot):
                return False
            self._publish(snapshot, *found, only_changed=True)
            outcome = "done"
            return True
        finally:
            if token is not None:
                self.work_done_progress.end(token, types.WorkDoneProgressEnd(message=outcome))

    def _analyze_project(
        self, snapshot: Snapshot
    ) -> tuple[tuple[Finding, ...], Mapping[str, str], SummaryCache | None] | None:
        if self._stale(snapshot):
            return None
        analyzer = self._analyzer(snapshot)
        project = [as_the_cli_names_it(snapshot.root)]
        try:
            report = analyzer.check(project, sources=snapshot.sources, cancelled=lambda: self._stale(snapshot))
        except AnalysisCancelled:
            return None
        return report.findings, dict(report.digests), analyzer.cache_for(project)

    async def _begin_progress(self, title: str) -> str | None:
        """A work-done progress begun with ``title``, when the client supports them; its token."""
        window = self.client_capabilities.window
        if window is None or not window.work_done_progress:
            return None
        token = f"{SOURCE}/{next(self._clock)}"
        try:
            await asyncio.wait_for(self.work_done_progress.create_async(token), PROGRESS_CREATE_TIMEOUT_SECONDS)
        except Exception:  # a client that refuses or never answers gets no progress, the pass still runs
            logger.debug("compile-ad-lint: work done progress refused", exc_info=True)
            return None
        self.work_done_progress.begin(token, types.WorkDoneProgressBegin(title=f"{SOURCE}: {title}"))
        return token

    def _publish(
        self,
        snapshot: Snapshot,
        findings: tuple[Finding, ...],
        digests: Mapping[str, str] | None = None,
        cache: SummaryCache | None = None,
        *,
        only_changed: bool = False,
    ) -> None:
        # By real file: a recorded project check names files relative to the project, this
        # server's own analysis names open files as the editor does.
        by_file: dict[Path, list[Finding]] = {}
        for finding in findings:
            by_file.setdefault(finding.location.file, []).append(finding)
        files = Files(self._open_documents(), self.workspace.position_encoding, self._closed_tables)
        docs_url = self._config(snapshot.root).rule_docs_url
        for buffer in snapshot.buffers:
            own = tuple(by_file.get(real_path(buffer.path), ()))
            key = workspace_key(buffer.uri)
            self._published[key] = Published(snapshot, own, dict(digests or {}), cache)
            diagnostics = [self.diagnostic(finding, files, docs_url) for finding in own]
            if only_changed and self._sent.get(key) == (buffer.version, diagnostics):
                continue  # the project pass found what the open files' pass published
            self._sent[key] = (buffer.version, diagnostics)
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=buffer.uri, diagnostics=diagnostics, version=buffer.version)
            )

    def _config(self, root: Path) -> Config:
        signature = config_signature(root)
        known = self._configs.get(root)
        if known is not None and known[0] == signature:
            return known[1]
        try:
            config = load_config(root)
        except ConfigError as error:
            message = f"{SOURCE}: configuration error, using defaults: {error}"
            if message not in self._reported_config_errors:
                self._reported_config_errors.add(message)
                self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))
            config = Config(root=root)
        config = self._with_target(root, config)
        self._configs[root] = (signature, config)
        return config

    def _with_target(self, root: Path, config: Config) -> Config:
        """``config`` with the torch it speaks for, resolved once per project and setting, and logged."""
        key = (root, config.target_torch)
        target = self._targets.get(key)
        if target is None:
            try:
                target = with_target(config, [str(root)]).torch
            except TargetError:  # checked when the configuration was read; defensive
                target = with_target(replace(config, target_torch=None), [str(root)]).torch
            assert target is not None
            self._targets[key] = target
            self.window_log_message(
                types.LogMessageParams(
                    type=types.MessageType.Info, message=f"{SOURCE}: {root}: findings for {target.describe()}"
                )
            )
        return replace(config, torch=target)

    # -- conversion and code actions ------------------------------------------------------

    def diagnostic(self, finding: Finding, files: Files, docs_url: str = DEFAULT_RULE_DOCS_URL) -> types.Diagnostic:
        return to_diagnostic(finding, files, docs_url)

    def code_action(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        """Quick fixes and "fix all" for a document (``actions.code_actions``), from what was
        published for it while that is current."""
        uri = params.text_document.uri
        document = self.workspace.get_text_document(uri)
        assert isinstance(document, Document)  # DocumentWorkspace creates every document
        published = self._published.get(workspace_key(uri))
        if published is not None and self._stale(published.snapshot):
            published = None
        elif published is not None:
            published = self._resolved(uri, published)  # when asked before the background pass got to it
        files = Files(self._open_documents(), self.workspace.position_encoding, self._closed_tables)
        return code_actions(params, document, published, files)


def start(debounce: float = DEFAULT_DEBOUNCE_SECONDS) -> NoReturn:
    """Serve on stdin/stdout until the client sends ``exit`` or closes stdin.

    A client that closes stdin without ``exit`` is gone: the exit code is then 0 after ``shutdown``
    and 1 otherwise, or when the framing broke. Diagnostics about the stream go to stderr.
    """
    logging.basicConfig(level=logging.WARNING, format=f"{SOURCE} lsp: %(levelname)s: %(message)s", stream=sys.stderr)
    server = CompileAdLintServer(debounce=debounce)
    stdin = FramedInput(sys.stdin.buffer)
    server.start_io(stdin=stdin)  # type: ignore[arg-type]  # pygls only calls readline() and read()
    terminate(0 if server.shut_down and not stdin.broken else 1)
