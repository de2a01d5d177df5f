"""``compile-ad-lint lsp``: a Language Server Protocol server on stdio (needs ``pygls``).

A thin adapter over ``Analyzer``. It analyzes the open documents of a project together, with the
unsaved contents of every open buffer passed as ``sources``, so that a change in one file updates
the diagnostics of the files that depend on it. It never runs user code (the analysis is static)
and never writes the user's files; like the CLI and flake8 it reads and writes the project's
``.compile_ad_lint_cache/``, so a first open after ``compile-ad-lint check`` is served from it, and
it keeps decoded entries in memory between edits.

Lines: LSP ends a line only at ``\\n``, ``\\r\\n`` and ``\\r``, and so does CPython's tokenizer, which
numbers the lines of our findings. Python's ``str.splitlines`` (used by pygls's ``TextDocument``)
also splits at form feeds, ``\\x1c``-``\\x1e``, U+0085, U+2028 and U+2029, which would shift every
line after such a character. All line bookkeeping here goes through ``LineTable`` instead: documents
(``_Document``) apply incremental edits, and diagnostics and quick fixes are placed, with it.

Positions: findings carry 1-based lines and columns with an exclusive end column, counted in
characters; LSP wants 0-based lines and columns in the client's position encoding (UTF-16 unless
negotiated otherwise). ``lsp_range`` is the one place that converts between the two.

Scheduling: ``didChange`` schedules an analysis per document after ``debounce`` seconds; another
change to the same document restarts its timer. ``didOpen`` and ``didSave`` analyze at once. Each
open buffer carries a stamp that changes whenever its text may have (open, change, close); an
analysis whose buffers were re-stamped before it started is skipped, one re-stamped while it ran is
dropped: a newer analysis of the same project is then due, and only it publishes.

Two passes: the analysis a change starts checks the open documents' own entry points (what the
buffers reach; fast enough to follow typing), and once the buffers have stayed as analyzed for
``IDLE_SECONDS`` a second pass checks the whole project with the same buffers, so that every
entry point whose dependencies include an edited buffer runs again: a finding in an open file that
another file's entry point reaches (an experiment script driving the trainer) then reads as the
CLI's does. Roots whose dependencies did not change are served from the cache; the pass gives way
(between roots) to the next edit, and publishes only the documents whose diagnostics changed. A
client that supports ``window/workDoneProgress`` sees it as a progress ("Checking the project").
Before the idle wait, the first pass's walks are rehearsed (``_rehearse``) while some could not be
replayed, so that the next edit replays the code it does not change; the rehearsal after an open
shows as a progress ("Indexing the open files") and gives way to the next analysis once that is
due, one after an edit stops at the next edit.

Code actions: for each diagnostic, its fixes as quick fixes (the preferred one first; a
``WorkspaceEdit`` that may change other files too, e.g. a CAL002 fix at a compiled call in another
module), then the ``# noqa`` suppression; and ``source.fixAll.compile-ad-lint``, every safe fix of the
document at once. Fixes are resolved (``fixes.resolve``) when the analysis runs, against the buffers
it saw, and offered only while every file they edit still holds that content.

Process: ``exit`` ends the process at once (0 after ``shutdown``, 1 without, as the specification
says), even while an analysis runs; ``FramedInput`` keeps malformed framing from making the server
deaf or exhausting memory.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import logging
import os
import re
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO, NoReturn
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol.language_server import LanguageServerProtocol, lsp_method
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import TextDocument, Workspace

from .._version import __version__
from ..api import AnalysisCancelled, Analyzer, ViewMemory, WalkMemory
from ..cache import EntryMemory, SummaryCache, content_digest
from ..config import load_config
from ..core.findings import Edit, Finding, Severity
from ..core.locations import Location
from ..core.paths import as_the_cli_names_it, real_path
from ..core.settings import DEFAULT_RULE_DOCS_URL, Config, ConfigError
from ..core.torch_versions import TargetError, TorchTarget
from ..fixes import Changes as FixChanges
from ..fixes import PlanError as FixPlanError
from ..fixes import Sources as FixSources
from ..fixes import ops_for as fix_ops
from ..fixes import resolve as resolve_fixes
from ..fixes.noqa import plan_noqa
from ..output.confirm_view import confirm_text, confirm_to_dict
from ..output.escape import printable
from ..project import project_root as shared_project_root
from ..rules import RULES_BY_CODE
from ..summary.outline import line_starts, split_lines
from ..target import with_target

SOURCE = "compile-ad-lint"
#: The "fix all" source action's kind (clients ask for ``source.fixAll``, e.g. on save).
FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.{SOURCE}"
DEFAULT_DEBOUNCE_SECONDS = 0.3
#: The largest message body accepted. A ``Content-Length`` above it is broken framing, not a message.
MAX_MESSAGE_BYTES = 1 << 30

logger = logging.getLogger(__name__)

_SEVERITIES = {Severity.ERROR: types.DiagnosticSeverity.Error, Severity.WARNING: types.DiagnosticSeverity.Warning}


def _unit_counter(encoding: str | None) -> Callable[[str], int]:
    """How many code units of the negotiated position encoding a string takes.

    UTF-16 unless UTF-8 or UTF-32 was negotiated (pygls falls back to UTF-16 the same way).
    ``surrogatepass`` counts a lone surrogate (JSON can carry one) as one UTF-16 unit, as pygls does.
    """
    if encoding == types.PositionEncodingKind.Utf32:
        return len
    if encoding == types.PositionEncodingKind.Utf8:
        return lambda text: len(text.encode("utf-8", "surrogatepass"))
    return lambda text: len(text.encode("utf-16-le", "surrogatepass")) // 2


class LineTable:
    """One text split into LSP lines once, with conversions between characters and client units.

    Built once per text and shared by every position computed in it, so that placing N diagnostics
    costs O(N + text) rather than one split of the text per diagnostic.
    """

    def __init__(self, text: str, encoding: str | None = types.PositionEncodingKind.Utf16) -> None:
        self.text = text
        self._starts = line_starts(text)
        self._units = _unit_counter(encoding)

    @property
    def line_count(self) -> int:
        """Lines as LSP counts them: a text ending with a line break has an empty last line."""
        return len(self._starts)

    @property
    def lines(self) -> tuple[str, ...]:
        """The lines with their endings, the shape of ``TextDocument.lines`` (no empty last line)."""
        ends = [*self._starts[1:], len(self.text)]
        return tuple(self.text[start:end] for start, end in zip(self._starts, ends, strict=True) if start < end)

    def line(self, number: int) -> str:
        """0-based line ``number`` without its line ending; '' outside the text."""
        if not 0 <= number < len(self._starts):
            return ""
        end = self._starts[number + 1] if number + 1 < len(self._starts) else len(self.text)
        return self.text[self._starts[number] : end].rstrip("\r\n")

    def position(self, line: int, column: int) -> types.Position:
        """0-based ``line`` and character ``column`` as a client position.

        A column past the line's end is its end (LSP's rule); a line past the text is the text's end.
        """
        if line >= len(self._starts):
            line = len(self._starts) - 1
            column = len(self.line(line))
        return types.Position(line, self._units(self.line(line)[:column]))

    def offset(self, position: types.Position) -> int:
        """The index into ``text`` of a client position, clamped like ``position``."""
        if position.line >= len(self._starts):
            return len(self.text)
        line = self.line(position.line)
        return self._starts[position.line] + self._column(line, position.character)

    def _column(self, line: str, units: int) -> int:
        """The character index in ``line`` after ``units`` client code units (inside a character: before it)."""
        if self._units(line) == len(line):  # one unit per character: ASCII, or any BMP text in UTF-16
            return min(units, len(line))
        column = counted = 0
        for character in line:
            counted += self._units(character)
            if counted > units:
                break
            column += 1
        return column


def lsp_range(location: Location, table: LineTable | None) -> types.Range:
    """The only 1-based → 0-based conversion: our Location to an LSP Range in the client's units.

    ``Location`` columns are 1-based character offsets, ``end_column`` exclusive; an LSP range end is
    exclusive and 0-based too, so both ends move by one. ``table`` is the text the location refers to
    (used to count code units); without it (an unreadable file) characters are taken as code units.
    """
    start = (max(location.line - 1, 0), max(location.column - 1, 0))
    end = max(start, (max(location.end_line - 1, 0), max(location.end_column - 1, 0)))
    if table is None:
        return types.Range(types.Position(*start), types.Position(*end))
    return types.Range(table.position(*start), table.position(*end))


class _Document(TextDocument):
    """pygls's open document with LSP's lines: edits and ``lines`` go through a cached ``LineTable``.

    pygls's own ``lines`` is ``str.splitlines``, so its incremental edits land on the wrong line after
    a form feed or U+2028; here an edit is applied to character offsets computed from the table.
    """

    _table: LineTable | None = None

    @property
    def line_table(self) -> LineTable:
        """The table of the current text, rebuilt only when the text changes."""
        source = self.source
        if self._table is None or self._table.text is not source:
            self._table = LineTable(source, self.position_codec.encoding)
        return self._table

    @property
    def lines(self) -> tuple[str, ...]:
        """LSP's lines, for pygls's helpers that index them (``offset_at_position``, ``word_at_position``)."""
        return self.line_table.lines

    def apply_change(self, change: types.TextDocumentContentChangeEvent) -> None:
        """An edit of the server's registered (incremental) sync, or a whole new text."""
        if not isinstance(change, types.TextDocumentContentChangePartial):
            self._source = change.text
            return
        table = self.line_table
        ends = sorted((table.offset(change.range.start), table.offset(change.range.end)))
        self._source = table.text[: ends[0]] + change.text + table.text[ends[1] :]


class _Workspace(Workspace):
    """A workspace whose documents are ``_Document``s."""

    def _create_text_document(
        self, doc_uri: str, source: str | None = None, version: int | None = None, language_id: str | None = None
    ) -> TextDocument:
        return _Document(
            doc_uri, source=source, version=version, language_id=language_id, position_codec=self.position_codec
        )


class _Protocol(LanguageServerProtocol):
    """pygls's protocol, with the workspace it creates at ``initialize`` swapped for a ``_Workspace``.

    pygls builds its ``Workspace`` inside ``initialize`` and offers no hook for the document class.
    The swap happens before the response, so before any document can be opened.
    """

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Any:
        result = yield from super().lsp_initialize(params)
        created = self.workspace
        self._workspace = _Workspace(
            created.root_uri,
            types.TextDocumentSyncKind.Incremental,
            list(created.folders.values()),
            created.position_encoding,
        )
        return result


@dataclass(frozen=True)
class _Buffer:
    """An open document as one analysis saw it. ``stamp`` identifies that exact buffer state."""

    uri: str
    path: Path
    version: int | None
    stamp: int | None


@dataclass(frozen=True)
class _Snapshot:
    """What one analysis saw: the documents it publishes for and every open buffer's contents."""

    root: Path
    buffers: tuple[_Buffer, ...]
    sources: Mapping[Path, bytes]
    #: Made for a document just opened: what follows its publish shows as a progress.
    opening: bool = False

    def buffer_paths(self) -> list[str]:
        """The open buffers' files named as the CLI names them: results are cached under the
        names the findings show, so the open files' own check shares the results of
        ``compile-ad-lint check FILE`` (and of the files' earlier checks) instead of keeping twins
        under absolute names."""
        return list(dict.fromkeys(as_the_cli_names_it(buffer.path) for buffer in self.buffers))


class _Files:
    """What one publish needs to know about files, each looked up once.

    Findings name files by their displayed path; resolving it, finding the open buffer (or reading
    the saved file) and splitting the text happen once per file, however many findings and related
    locations point into it. Doing them per diagnostic made publishing quadratic.
    """

    def __init__(self, open_documents: Mapping[Path, _Document], encoding: str | None) -> None:
        self._open = open_documents
        self._encoding = encoding
        self._files: dict[str, tuple[str, LineTable | None]] = {}

    def get(self, display: str) -> tuple[str, LineTable | None]:
        """The URI and line table of the file a finding displays as ``display``."""
        return self._kept(display, lambda: real_path(display))

    def of(self, location: Location) -> tuple[str, LineTable | None]:
        """``get`` for a finding's location, whose real file the API resolved already (resolving
        the 30 files a CAL002 finding points into took a third of each publish)."""
        return self._kept(location.path, lambda: location.file)

    def _kept(self, display: str, file: Callable[[], Path]) -> tuple[str, LineTable | None]:
        found = self._files.get(display)
        if found is None:
            found = self._files[display] = self._look_up(file())
        return found

    def _look_up(self, path: Path) -> tuple[str, LineTable | None]:
        document = self._open.get(path)
        if document is not None:
            return document.uri, document.line_table
        try:
            text = path.read_bytes().decode("utf-8-sig", errors="replace")
        except OSError:
            return from_fs_path(str(path)), None
        return from_fs_path(str(path)), LineTable(text, self._encoding)


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
            protocol_cls=_Protocol,
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
        #: Decoded cache entries kept between edits; what an analysis stores is written to disk once
        #: the buffers are idle (``_write_behind``).
        self._memory = EntryMemory(write_behind=True)
        #: Function walks kept between edits, by project root and configuration (``linking.walks``):
        #: an edit's own pass replays the walks of the code the edit did not change.
        self._walk_memories: dict[tuple[Path, str], WalkMemory] = {}
        #: Module views kept between edits and passes (``ViewMemory``): a check builds only the
        #: views of the files whose bytes changed.
        self._views = ViewMemory()
        #: Workspace key of each document published for → what its diagnostics were computed from.
        self._published: dict[str, _Published] = {}
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
        self._opening.add(_workspace_key(params.text_document.uri))
        self._analyze_soon(params.text_document.uri, delay=0.0)

    def did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        self._stamp(params.text_document.uri)
        self._analyze_soon(params.text_document.uri, delay=self.debounce)

    def did_save(self, params: types.DidSaveTextDocumentParams) -> None:
        self._analyze_soon(params.text_document.uri, delay=0.0)

    def did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        self._stamps.pop(_workspace_key(uri), None)
        self._sent.pop(_workspace_key(uri), None)
        self._opening.discard(_workspace_key(uri))
        self._cancel_timer(uri)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        path = _path_of(uri)
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
        _terminate(0 if self.shut_down else 1)

    # -- scheduling -------------------------------------------------------------------------

    def _stamp(self, uri: str) -> None:
        """A new stamp for ``uri``'s text: results computed from its earlier texts are now stale."""
        self._stamps[_workspace_key(uri)] = next(self._clock)

    def _stale(self, snapshot: _Snapshot) -> bool:
        """Whether a buffer of ``snapshot`` changed, closed or reopened since.

        Every such event schedules a newer analysis of the same project, so a stale snapshot's
        result is never needed. Read from the analysis thread too (a dict lookup, atomic).
        """
        return any(self._stamps.get(_workspace_key(buffer.uri)) != buffer.stamp for buffer in snapshot.buffers)

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
        key = _workspace_key(uri)
        opening = key in self._opening
        self._opening.discard(key)
        path = _path_of(uri)
        if path is None:
            return
        self._start(self._snapshot_for(path, opening=opening))

    def _start(self, snapshot: _Snapshot | None) -> None:
        if snapshot is None:
            return
        task = asyncio.get_running_loop().create_task(self._analyze_and_publish(snapshot))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _open_documents(self) -> dict[Path, _Document]:
        """The open documents with a ``file:`` URI, by resolved path: of a file open twice (through
        a symlink and as its target), the one edited last."""
        documents: dict[Path, _Document] = {}
        for path, document in self._documents_by_path():
            kept = documents.get(path)
            if kept is None or self._stamp_of(document) >= self._stamp_of(kept):
                documents[path] = document
        return documents

    def _documents_by_path(self) -> list[tuple[Path, _Document]]:
        found = []
        for document in list(self.workspace.text_documents.values()):
            path = _path_of(document.uri)
            if path is not None and isinstance(document, _Document):
                found.append((path, document))
        return found

    def _stamp_of(self, document: TextDocument) -> int:
        return self._stamps.get(_workspace_key(document.uri), 0)

    def _snapshot_for(self, path: Path, *, opening: bool = False) -> _Snapshot | None:
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
                    stamp = self._stamps.get(_workspace_key(document.uri))
                    buffers.append(_Buffer(document.uri, doc_path, document.version, stamp))
            except (OSError, RuntimeError, ValueError):
                logger.warning("compile-ad-lint: cannot take %s", document.uri, exc_info=True)
        if not buffers:
            return None
        return _Snapshot(root, tuple(buffers), sources, opening)

    def project_root(self, path: Path) -> Path:
        """``project.project_root`` with the workspace folders (the innermost holding ``path`` wins
        over markers), else the file's folder: a loose script is analyzed with its neighbours."""
        uris = [folder.uri for folder in self.workspace.folders.values()]
        if self.workspace.root_uri:
            uris.append(self.workspace.root_uri)
        folders = [folder for folder in map(_path_of, uris) if folder is not None]
        root = shared_project_root(path, folders)[0]
        return real_path(root) if root is not None else path.parent

    # -- analysis ---------------------------------------------------------------------------

    async def _analyze_and_publish(self, snapshot: _Snapshot) -> None:
        loop = asyncio.get_running_loop()
        if self.shut_down:
            return
        with self._due_lock:
            self._analyses_due += 1
        with _collector_paused():  # until the publish and the heap's settling (``_CollectorPause``)
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

    async def _rehearse(self, snapshot: _Snapshot) -> None:
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

    def _rehearsal_over(self, snapshot: _Snapshot) -> bool:
        """Whether a rehearsal of ``snapshot``'s walks should stop (read from the analysis thread)."""
        return self.shut_down or self._analysis_due() or (not snapshot.opening and self._stale(snapshot))

    def _analysis_due(self) -> bool:
        """Whether an analysis is waiting for the analysis thread (read from that thread too)."""
        return self._analyses_due > 0

    def _walk_again(self, snapshot: _Snapshot) -> int:
        """Runs in the analysis thread: one rehearsal; how many walks it could not replay."""
        if self._rehearsal_over(snapshot):
            return 0
        paths = snapshot.buffer_paths()
        analyzer = self._analyzer(snapshot, replay_walks=True)
        try:
            with _collector_paused():
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
        """Settle the heap (``_settle_heap``) on the analysis thread, after a publish (the next
        analysis queues behind it); not when an analysis is already due (its publish settles)."""

        def settle() -> None:
            if not self._analysis_due():
                _settle_heap(whole_heap)

        await self._on_analysis_thread(settle)

    async def _on_analysis_thread(self, work: Callable[[], object]) -> None:
        try:
            await asyncio.get_running_loop().run_in_executor(self._analysis_pool, work)
        except RuntimeError:  # the pool was shut down: ``on_shutdown`` writes what is left
            pass

    def _resolve_published(self, snapshot: _Snapshot) -> None:
        """Give the findings published for ``snapshot`` their fix edits (on the fix thread)."""
        for buffer in snapshot.buffers:
            published = self._published.get(_workspace_key(buffer.uri))
            if published is not None and published.snapshot is snapshot and not self._stale(snapshot):
                self._resolved(buffer.uri, published)

    def _resolved(self, uri: str, published: _Published) -> _Published:
        """``published`` with its fixes' edits, built once and kept (against the buffers as analyzed)."""
        if published.resolved:
            return published
        sources = FixSources(published.snapshot.sources, published.digests, cache=published.cache)
        done = replace(published, findings=resolve_fixes(published.findings, sources), resolved=True)
        key = _workspace_key(uri)
        if self._published.get(key) is published:
            self._published[key] = done
        return done

    def _analyzer(self, snapshot: _Snapshot, *, replay_walks: bool = False) -> Analyzer:
        """Static only: nothing is imported or executed. The only thing written is the project's
        ``.compile_ad_lint_cache/`` (shared with the CLI and flake8); decoded entries also stay in
        ``self._memory``, so an edit re-analyzes only the anchors whose dependencies changed.
        With ``replay_walks`` (the open files' pass after an edit) the walks of the code the edit
        did not change are replayed from the earlier passes' (``linking.walks``); the project
        pass analyzes as the CLI does, so what it publishes is what the CLI reports."""
        config = self._config(snapshot.root)
        walks = self._walk_memories.setdefault((snapshot.root, repr(config)), WalkMemory()) if replay_walks else None
        return Analyzer(
            config, jobs=1, cache_root=snapshot.root, memory=self._memory, walk_memory=walks, views=self._views
        )

    def _analyze(
        self, snapshot: _Snapshot
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
        report = analyzer.remembered(project, sources=snapshot.sources) if _saved(snapshot) else None
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

    async def _publish_project(self, snapshot: _Snapshot) -> bool:
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
        self, snapshot: _Snapshot
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
        snapshot: _Snapshot,
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
        files = _Files(self._open_documents(), self.workspace.position_encoding)
        docs_url = self._config(snapshot.root).rule_docs_url
        for buffer in snapshot.buffers:
            own = tuple(by_file.get(real_path(buffer.path), ()))
            key = _workspace_key(buffer.uri)
            self._published[key] = _Published(snapshot, own, dict(digests or {}), cache)
            diagnostics = [self.diagnostic(finding, files, docs_url) for finding in own]
            if only_changed and self._sent.get(key) == (buffer.version, diagnostics):
                continue  # the project pass found what the open files' pass published
            self._sent[key] = (buffer.version, diagnostics)
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=buffer.uri, diagnostics=diagnostics, version=buffer.version)
            )

    def _config(self, root: Path) -> Config:
        try:
            config = load_config(root)
        except ConfigError as error:
            message = f"{SOURCE}: configuration error, using defaults: {error}"
            if message not in self._reported_config_errors:
                self._reported_config_errors.add(message)
                self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))
            config = Config(root=root)
        return self._with_target(root, config)

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

    # -- conversion -------------------------------------------------------------------------

    def diagnostic(self, finding: Finding, files: _Files, docs_url: str = DEFAULT_RULE_DOCS_URL) -> types.Diagnostic:
        rule = RULES_BY_CODE.get(finding.code)
        related = []
        for item in finding.related:
            uri, table = files.of(item.location)
            related.append(
                types.DiagnosticRelatedInformation(
                    location=types.Location(uri=uri, range=lsp_range(item.location, table)),
                    message=item.message,
                )
            )
        return types.Diagnostic(
            range=lsp_range(finding.location, files.of(finding.location)[1]),
            severity=_SEVERITIES.get(finding.severity, types.DiagnosticSeverity.Error),
            code=finding.code,
            code_description=types.CodeDescription(href=rule.docs_url(docs_url)) if rule is not None else None,
            source=SOURCE,
            message=_message(finding),
            related_information=related or None,
            data={"confirm": confirm_to_dict(finding)} if finding.confirm else None,
        )

    # -- code actions -----------------------------------------------------------------------

    def code_action(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        """Quick fixes for the diagnostics asked about: each fix (preferred first), then the ``# noqa``
        suppression; and a "fix all" source action for the document's safe fixes."""
        uri = params.text_document.uri
        document = self.workspace.get_text_document(uri)
        assert isinstance(document, _Document)  # _Workspace creates every document
        only = params.context.only
        actions = []
        published = self._published.get(_workspace_key(uri))
        current = published is not None and not self._stale(published.snapshot)
        if current:
            assert published is not None
            published = self._resolved(uri, published)  # when asked before the background pass got to it
        files = _Files(self._open_documents(), self.workspace.position_encoding)
        if _wanted(only, types.CodeActionKind.QuickFix):
            for diagnostic in params.context.diagnostics:
                if diagnostic.source != SOURCE or not isinstance(diagnostic.code, str):
                    continue
                if current:
                    assert published is not None
                    for finding in published.findings:
                        if (
                            finding.code != diagnostic.code
                            or lsp_range(finding.location, document.line_table) != diagnostic.range
                        ):
                            continue
                        for number, fix in enumerate(finding.fixes):
                            edit = self._workspace_edit(fix.edits, files, published)
                            if edit is not None:
                                actions.append(
                                    types.CodeAction(
                                        title=fix.description,
                                        kind=types.CodeActionKind.QuickFix,
                                        diagnostics=[diagnostic],
                                        edit=edit,
                                        is_preferred=(number == 0 and fix.safe) or None,
                                    )
                                )
                        break
                noqa = noqa_edit(document.line_table, diagnostic.range.start.line, diagnostic.code)
                if noqa is not None:
                    actions.append(
                        types.CodeAction(
                            title=f"Suppress {diagnostic.code} on this line (# noqa: {diagnostic.code})",
                            kind=types.CodeActionKind.QuickFix,
                            diagnostics=[diagnostic],
                            edit=types.WorkspaceEdit(changes={uri: [noqa]}),
                        )
                    )
        if current and _wanted(only, FIX_ALL_KIND):
            assert published is not None
            fix_all = self._fix_all(published, files)
            if fix_all is not None:
                actions.append(fix_all)
        return actions

    def _fix_all(self, published: _Published, files: _Files) -> types.CodeAction | None:
        """Every safe fix of the document's findings, applied together (overlapping ones left out)."""
        safe = [
            f for f in published.findings if f.fix is not None and f.fix.safe and f.fix.plan is not None and f.fix.edits
        ]
        if not safe:
            return None
        sources = FixSources(published.snapshot.sources, published.digests)
        changes = FixChanges(sources)
        for finding in safe:
            try:
                changes.add(fix_ops(finding.fix.plan, sources))  # type: ignore[union-attr, arg-type]
            except FixPlanError:
                continue
        try:
            edits = changes.edits()
        except FixPlanError:
            return None
        edit = self._workspace_edit(edits, files, published)
        if edit is None:
            return None
        return types.CodeAction(title=f"{SOURCE}: apply every safe fix in this file", kind=FIX_ALL_KIND, edit=edit)

    def _workspace_edit(
        self, edits: tuple[Edit, ...], files: _Files, published: _Published
    ) -> types.WorkspaceEdit | None:
        """The edits as a WorkspaceEdit (files other than the document included); None when a file
        they touch no longer holds what was analyzed."""
        if not edits:
            return None
        changes: dict[str, list[types.TextEdit]] = {}
        for edit in edits:
            uri, table = files.get(edit.path)
            if table is None or published.digests.get(str(real_path(edit.path))) != content_digest(
                table.text.encode("utf-8", "surrogatepass")
            ):
                return None
            where = Location(edit.path, edit.line, edit.column, edit.end_line, edit.end_column)
            changes.setdefault(uri, []).append(types.TextEdit(range=lsp_range(where, table), new_text=edit.replacement))
        return types.WorkspaceEdit(changes=changes)


def _message(finding: Finding) -> str:
    """The diagnostic's message: the finding's headline and details, then its confirm verdicts (which say what ran: the
    project's code or a synthetic probe), when a confirm run attached any."""
    verdicts = confirm_text(finding)
    # The headline first (what flake8 and the text report's line show), the details under it.
    message = "\n".join([finding.message, *finding.details])
    return f"{message}\nconfirm: {printable(verdicts)}" if verdicts else message


def _saved(snapshot: _Snapshot) -> bool:
    """Whether every buffer of ``snapshot`` holds what its file on disk holds."""
    for buffer in snapshot.buffers:
        try:
            if buffer.path.read_bytes() != snapshot.sources.get(buffer.path):
                return False
        except OSError:
            return False
    return True


def _wanted(only: Sequence[str] | None, kind: str) -> bool:
    """Whether a client's ``only`` filter asks for ``kind`` (``source.fixAll`` covers ``source.fixAll.x``)."""
    return only is None or any(kind == k or kind.startswith(k + ".") for k in only)


@dataclass(frozen=True)
class _Published:
    """The findings published for one document, the analysis's snapshot and the digests of the
    files it read: fixes are offered only while both still hold. Their edits are built after the
    diagnostics are published (``resolved``), from ``cache`` where no file they read changed."""

    snapshot: _Snapshot
    findings: tuple[Finding, ...]
    digests: Mapping[str, str]
    cache: SummaryCache | None = None
    resolved: bool = False


def noqa_edit(table: LineTable, line: int, code: str) -> types.TextEdit | None:
    """The edit that adds ``code`` to ``line``'s noqa comment (or adds one); None if there is nothing
    to do. The grammar, and the tokenizer that finds comments, are the analyzer's (``fixes.noqa``)."""
    if not 0 <= line < table.line_count:
        return None
    edits, _ = plan_noqa(split_lines(table.text), {line + 1: [code]})
    if not edits:
        return None
    edit = edits[0]
    return types.TextEdit(
        range=types.Range(table.position(line, edit.start), table.position(line, edit.end)), new_text=edit.text
    )


class FramedInput:
    """stdin as pygls's reader sees it: only well-formed frames get through.

    pygls's loop (``pygls.io_.run_async``) trusts the framing. After a ``Content-Length`` it cannot
    parse (``abc``, ``-5``) it reads the body as header lines, and since a JSON body has no line
    break the next message's header is glued to it and missed, and so on for every message after:
    a deaf server. A huge length is read with one ``read(n)``, which allocates ``n`` bytes up front.

    This reader parses the headers itself and hands pygls each frame as ``Content-Length: N``, a
    blank line and the body. It skips what is not a header, resynchronizing on the last
    ``Content-Length`` of a line (a body glued to the next header), and says on stderr what it
    skipped; it reads bodies in chunks, and ends the input (pygls then stops) with a message on
    stderr when a length is over ``MAX_MESSAGE_BYTES`` or stdin ends inside a message (``broken``).
    A body that is not JSON is pygls's to report; the frames after it are read normally.
    """

    #: Header lines are read at most this long, so input without line breaks never fills memory.
    MAX_LINE = 64 * 1024
    _CHUNK = 1 << 20
    _FIELD = b"content-length:"
    _HEADER = re.compile(rb"[A-Za-z][A-Za-z0-9-]*:[^\r\n]*\r?\n\Z")

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        #: The length of the frame whose header pygls has been given but whose body it has not read.
        self._announced: int | None = None
        self.broken = False

    def readline(self) -> bytes:
        """pygls reads a frame as two header lines, then ``read``: ours are the length and the blank line."""
        if self._announced is not None:
            return b"\r\n"
        length = self._next_length()
        if length is None:
            return b""
        self._announced = length
        return b"Content-Length: %d\r\n" % length

    def read(self, size: int) -> bytes:
        """The body, read in chunks so that memory follows the bytes that came, not the length announced."""
        self._announced = None
        chunks, remaining = [], size
        while remaining:
            chunk = self._stream.read(min(remaining, self._CHUNK))
            if not chunk:
                self._fail(f"stdin ended {size - remaining} bytes into a message of {size} bytes")
                return b""
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)

    def _next_length(self) -> int | None:
        """Read header blocks until one announces a usable length; None at the end of stdin or on fatal framing."""
        length: int | None = None
        skipped = 0
        while True:
            line = self._stream.readline(self.MAX_LINE)
            if not line:
                if length is not None:
                    self._fail("stdin ended inside a message header")
                elif skipped:
                    self._fail(f"stdin ended after {skipped} bytes that were not LSP headers")
                return None
            if not line.strip():  # a blank line ends a header block
                if length is not None:
                    if skipped:
                        logger.warning("skipped %d bytes that were not LSP headers", skipped)
                    return length
                continue
            at = line.lower().rfind(self._FIELD)
            if at < 0:
                if not self._HEADER.match(line):
                    skipped += len(line)
                continue
            skipped += at
            value = line[at + len(self._FIELD) :].strip()
            digits = value.lstrip(b"0")
            if not value.isdigit() or not digits:
                logger.warning("ignored a message with Content-Length %r (not a positive number of bytes)", value[:40])
                length = None
            elif len(digits) > len(str(MAX_MESSAGE_BYTES)) or int(digits) > MAX_MESSAGE_BYTES:
                shown = digits[:20].decode() + ("..." if len(digits) > 20 else "")
                self._fail(
                    f"Content-Length {shown} is over the limit of {MAX_MESSAGE_BYTES} bytes; the client's framing is broken"
                )
                return None
            else:
                length = int(digits)

    def _fail(self, message: str) -> None:
        """Report broken framing on stderr; the caller then ends the input."""
        logger.error("%s; exiting", message)
        self.broken = True


def _path_of(uri: str) -> Path | None:
    """The resolved file system path of a ``file:`` URI, else None."""
    path = to_fs_path(uri)
    if path is None or not uri.startswith("file:"):
        return None
    return real_path(path)  # a symlink loop too (it is reported where it is read)


def _workspace_key(uri: str) -> str:
    """How pygls keys its open documents."""
    return unquote(uri)


def _settle_heap(whole: bool) -> None:
    """Collect the analyses' garbage and freeze what survives (the memories of summaries, walks and
    findings): the collector's full passes during the next edits then scan only what those edits
    allocate. A full pass over the whole heap took 0.17-0.26 s, every second or third edit of the
    generated framework's trainer (edit latency 0.19 s without one, 0.45 s with). ``whole`` (after
    a project pass, the buffers idle): everything is unfrozen and collected first, so that
    long-lived objects dropped since (replaced entries, evicted walks) do not stay frozen."""
    if whole:
        gc.unfreeze()
    gc.collect()
    gc.freeze()


class _CollectorPause:
    """No garbage collection while the open files' entry points are analyzed or rehearsed, and until
    an analysis's diagnostics are published and the heap settled (``_settle_heap``): the youngest
    generation's passes during the analysis took 17-32 ms each, one or two in each 0.1-0.2 s edit of
    the generated framework's trainer, and the one due when the collector came back on ran before
    the publish (14-21 ms of each edit's latency). These analyses are bounded (one file's entry
    points); the project pass, which can run long, keeps the collector.

    The collector is one for the process, and pauses overlap (an edit's analysis and publish on the
    event loop, a rehearsal on the analysis thread): it comes back on when the last pause ends, if
    it was on when the first began."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders = 0
        self._was_enabled = False

    @contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._holders == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._holders += 1
        try:
            yield
        finally:
            with self._lock:
                self._holders -= 1
                if self._holders == 0 and self._was_enabled:
                    gc.enable()


_collector_paused = _CollectorPause()


def _terminate(code: int) -> NoReturn:
    """End the process now with ``code``.

    Not ``sys.exit``: pygls's ``start_io`` swallows ``SystemExit`` (the code would be lost), and the
    interpreter's exit joins every worker thread, so an analysis still running (it cannot be
    interrupted) would keep the process alive. Nothing is pending: pygls flushes each message it
    writes, and the analysis writes no files.
    """
    sys.stderr.flush()
    os._exit(code)


def start(debounce: float = DEFAULT_DEBOUNCE_SECONDS) -> NoReturn:
    """Serve on stdin/stdout until the client sends ``exit`` or closes stdin.

    A client that closes stdin without ``exit`` is gone: the exit code is then 0 after ``shutdown``
    and 1 otherwise, or when the framing broke. Diagnostics about the stream go to stderr.
    """
    logging.basicConfig(level=logging.WARNING, format=f"{SOURCE} lsp: %(levelname)s: %(message)s", stream=sys.stderr)
    server = CompileAdLintServer(debounce=debounce)
    stdin = FramedInput(sys.stdin.buffer)
    server.start_io(stdin=stdin)  # type: ignore[arg-type]  # pygls only calls readline() and read()
    _terminate(0 if server.shut_down and not stdin.broken else 1)


__all__ = [
    "CompileAdLintServer",
    "DEFAULT_DEBOUNCE_SECONDS",
    "FramedInput",
    "LineTable",
    "MAX_MESSAGE_BYTES",
    "lsp_range",
    "noqa_edit",
    "start",
]
