"""``compile-ad-lint lsp``: a Language Server Protocol server on stdio (needs ``pygls``).

A thin adapter over ``Analyzer``. It analyzes the open documents of a project together, with the
unsaved contents of every open buffer passed as ``sources``, so that a change in one file updates
the diagnostics of the files that depend on it. It never writes files (no summary cache) and never
runs user code: the analysis is static.

Positions: findings carry 1-based lines and columns with an exclusive end column, counted in
characters; LSP wants 0-based lines and columns in the client's position encoding (UTF-16 unless
negotiated otherwise). ``lsp_range`` is the one place that converts between the two.

Debounce: ``didChange`` schedules an analysis per document after ``debounce`` seconds; another
change to the same document restarts its timer. ``didOpen`` and ``didSave`` analyze at once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote
from typing import Any, Callable, Mapping, Sequence

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import PositionCodec, TextDocument
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from .. import __version__
from ..api import Analyzer
from ..config import Config, ConfigError, find_pyproject, load_config
from ..findings import Finding, Location, Severity
from ..rules import RULES_BY_CODE

SOURCE = "compile-ad-lint"
DEFAULT_DEBOUNCE_SECONDS = 0.3

logger = logging.getLogger(__name__)

_SEVERITIES = {Severity.ERROR: types.DiagnosticSeverity.Error, Severity.WARNING: types.DiagnosticSeverity.Warning}
#: An existing ``# noqa`` comment: bare (suppresses everything) or with a code list to extend.
_NOQA = re.compile(r"#\s*noqa(?P<colon>:\s?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)


def lsp_range(location: Location, lines: Sequence[str], codec: PositionCodec) -> types.Range:
    """The only 1-based → 0-based conversion: our Location to an LSP Range in the client's units.

    ``Location`` columns are 1-based character offsets, ``end_column`` exclusive; an LSP range end is
    exclusive and 0-based too, so both ends move by one. ``lines`` is the text the location refers to
    (used to count UTF-16/UTF-8 code units); without it characters are taken as code units.
    """
    start = ServerTextPosition(max(location.line - 1, 0), max(location.column - 1, 0))
    end = ServerTextPosition(max(location.end_line - 1, 0), max(location.end_column - 1, 0))
    if end < start:
        end = start
    if not lines:
        return types.Range(types.Position(start.line, start.character), types.Position(end.line, end.character))
    return codec.range_to_client_units(lines, ServerTextRange(start, end))


@dataclass(frozen=True)
class _Snapshot:
    """What one analysis saw: the documents it publishes for and every open buffer's contents."""

    root: Path
    documents: tuple[tuple[str, Path, int | None], ...]  # (uri, resolved path, version)
    sources: Mapping[Path, bytes]


class CompileAdLintServer(LanguageServer):
    """Publishes compile-ad-lint findings as diagnostics and offers ``# noqa`` quick fixes."""

    def __init__(self, debounce: float = DEFAULT_DEBOUNCE_SECONDS) -> None:
        super().__init__(name=SOURCE, version=__version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.debounce = debounce
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task] = set()
        #: One analysis at a time: the project is small enough, and the CPUs are the user's.
        self._analysis_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="compile-ad-lint")
        self._reported_config_errors: set[str] = set()
        self._closed = False
        self._register(types.TEXT_DOCUMENT_DID_OPEN, self.did_open)
        self._register(types.TEXT_DOCUMENT_DID_CHANGE, self.did_change)
        self._register(types.TEXT_DOCUMENT_DID_SAVE, self.did_save, types.SaveOptions(include_text=False))
        self._register(types.TEXT_DOCUMENT_DID_CLOSE, self.did_close)
        self._register(
            types.TEXT_DOCUMENT_CODE_ACTION,
            self.code_action,
            types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
        )
        self._register(types.SHUTDOWN, self.on_shutdown)

    def _register(self, feature: str, method: Callable[[Any], Any], options: Any = None) -> None:
        """pygls registers plain functions (it tags them), so each handler is a closure over a method."""

        def handler(params: Any) -> Any:
            return method(params)

        self.feature(feature, options)(handler)

    # -- document events --------------------------------------------------------------------

    def did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        self._analyze_soon(params.text_document.uri, delay=0.0)

    def did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        self._analyze_soon(params.text_document.uri, delay=self.debounce)

    def did_save(self, params: types.DidSaveTextDocumentParams) -> None:
        self._analyze_soon(params.text_document.uri, delay=0.0)

    def did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        self._cancel_timer(uri)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        path = _path_of(uri)
        if path is not None:  # the others fall back to this file's saved contents
            self._start(self._snapshot_for(path))

    def on_shutdown(self, _params: None) -> None:
        self._closed = True
        for uri in list(self._timers):
            self._cancel_timer(uri)
        self._analysis_pool.shutdown(wait=False, cancel_futures=True)

    # -- scheduling -------------------------------------------------------------------------

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
        path = _path_of(uri)
        if path is None:
            return
        self._start(self._snapshot_for(path))

    def _start(self, snapshot: _Snapshot | None) -> None:
        if snapshot is None:
            return
        task = asyncio.get_running_loop().create_task(self._analyze_and_publish(snapshot))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _snapshot_for(self, path: Path) -> _Snapshot | None:
        """The open documents in ``path``'s project and the contents of every open buffer."""
        root = self.project_root(path)
        documents, sources = [], {}
        for document in list(self.workspace.text_documents.values()):
            doc_path = _path_of(document.uri)
            if doc_path is None:
                continue
            sources[doc_path] = document.source.encode("utf-8")
            if doc_path.suffix in (".py", ".pyi") and doc_path.is_file() and self.project_root(doc_path) == root:
                documents.append((document.uri, doc_path, document.version))
        if not documents:
            return None
        return _Snapshot(root, tuple(documents), sources)

    def project_root(self, path: Path) -> Path:
        """Nearest pyproject.toml with our section, else the enclosing workspace folder, else the file's folder."""
        pyproject = find_pyproject(path)
        if pyproject is not None:
            return pyproject.parent.resolve()
        folders = [folder.uri for folder in self.workspace.folders.values()]
        if self.workspace.root_uri:
            folders.append(self.workspace.root_uri)
        best: Path | None = None
        for folder_uri in folders:
            folder = _path_of(folder_uri)
            if folder is not None and path.is_relative_to(folder) and (best is None or len(folder.parts) > len(best.parts)):
                best = folder
        return best or path.parent

    # -- analysis ---------------------------------------------------------------------------

    async def _analyze_and_publish(self, snapshot: _Snapshot) -> None:
        loop = asyncio.get_running_loop()
        if self._closed:
            return
        try:
            findings = await loop.run_in_executor(self._analysis_pool, self._analyze, snapshot)
        except Exception as error:  # noqa: BLE001 - an analysis bug must not take the server down
            if self._closed:
                return
            logger.exception("compile-ad-lint analysis failed")
            self.window_log_message(types.LogMessageParams(type=types.MessageType.Error, message=f"{SOURCE}: analysis failed: {error!r}"))
            return
        by_path: dict[str, list[Finding]] = {}
        for finding in findings:
            by_path.setdefault(finding.location.path, []).append(finding)
        for uri, path, version in snapshot.documents:
            document = self.workspace.text_documents.get(_workspace_key(uri))
            if document is None or document.version != version:
                continue  # closed or edited since: a newer analysis will publish
            diagnostics = [self.diagnostic(finding, document) for finding in by_path.get(str(path), ())]
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
            )

    def _analyze(self, snapshot: _Snapshot) -> tuple[Finding, ...]:
        """Runs in the analysis thread. Static only: nothing is imported or executed, nothing written."""
        analyzer = Analyzer(self._config(snapshot.root), use_cache=False, jobs=1)
        return analyzer.check([str(path) for _, path, _ in snapshot.documents], sources=snapshot.sources).findings

    def _config(self, root: Path) -> Config:
        try:
            return load_config(root)
        except ConfigError as error:
            message = f"{SOURCE}: configuration error, using defaults: {error}"
            if message not in self._reported_config_errors:
                self._reported_config_errors.add(message)
                self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))
            return Config(root=root)

    # -- conversion -------------------------------------------------------------------------

    def diagnostic(self, finding: Finding, document: TextDocument) -> types.Diagnostic:
        rule = RULES_BY_CODE.get(finding.code)
        related = []
        for item in finding.related:
            path = _resolve_display(item.location.path)
            related.append(
                types.DiagnosticRelatedInformation(
                    location=types.Location(uri=from_fs_path(str(path)), range=self._range_in(path, item.location)),
                    message=item.message,
                )
            )
        return types.Diagnostic(
            range=lsp_range(finding.location, document.lines, document.position_codec),
            severity=_SEVERITIES.get(finding.severity, types.DiagnosticSeverity.Error),
            code=finding.code,
            code_description=types.CodeDescription(href=rule.docs_url()) if rule is not None else None,
            source=SOURCE,
            message=finding.message,
            related_information=related or None,
        )

    def _range_in(self, path: Path, location: Location) -> types.Range:
        """``location``'s range, counted in the open buffer of ``path`` or else its saved text."""
        for document in self.workspace.text_documents.values():
            if _path_of(document.uri) == path:
                return lsp_range(location, document.lines, document.position_codec)
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        except OSError:
            lines = []
        return lsp_range(location, lines, self.workspace.position_codec)

    # -- code actions -----------------------------------------------------------------------

    def code_action(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        document = self.workspace.get_text_document(params.text_document.uri)
        actions = []
        for diagnostic in params.context.diagnostics:
            if diagnostic.source != SOURCE or not isinstance(diagnostic.code, str):
                continue
            edit = noqa_edit(document, diagnostic.range.start.line, diagnostic.code)
            if edit is None:
                continue
            actions.append(
                types.CodeAction(
                    title=f"Suppress {diagnostic.code} on this line (# noqa: {diagnostic.code})",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic],
                    edit=types.WorkspaceEdit(changes={params.text_document.uri: [edit]}),
                )
            )
        return actions


def noqa_edit(document: TextDocument, line: int, code: str) -> types.TextEdit | None:
    """The edit that adds ``code`` to ``line``'s noqa comment (or adds one); None if there is nothing to do."""
    lines = document.lines
    if not 0 <= line < len(lines):
        return None
    text = lines[line].rstrip("\r\n")
    match = _NOQA.search(text)
    if match is not None:
        codes = match.group("codes")
        if codes is None:
            return None  # a bare ``# noqa`` already suppresses every code
        if code.upper() in {c.upper() for c in re.findall(r"[A-Za-z]+[0-9]+", codes)}:
            return None
        start, end, new_text = match.end("codes"), match.end("codes"), f", {code}"
    else:
        if text.rstrip().endswith("\\"):
            return None  # a comment after a line continuation would be a syntax error
        stripped = len(text.rstrip())
        start, end, new_text = stripped, len(text), f"  # noqa: {code}"
    codec = document.position_codec
    return types.TextEdit(
        range=codec.range_to_client_units(
            lines, ServerTextRange(ServerTextPosition(line, start), ServerTextPosition(line, end))
        ),
        new_text=new_text,
    )


def _path_of(uri: str) -> Path | None:
    """The resolved file system path of a ``file:`` URI, else None."""
    path = to_fs_path(uri)
    if path is None or not uri.startswith("file:"):
        return None
    return Path(path).resolve()


def _workspace_key(uri: str) -> str:
    """How pygls keys its open documents."""
    return unquote(uri)


def _resolve_display(display: str) -> Path:
    """Findings name files as displayed (absolute for ours, relative to the cwd when reached by import)."""
    return Path(os.path.abspath(display)).resolve()


def start(debounce: float = DEFAULT_DEBOUNCE_SECONDS) -> None:
    """Serve on stdin/stdout until the client exits."""
    CompileAdLintServer(debounce=debounce).start_io()


__all__ = ["CompileAdLintServer", "DEFAULT_DEBOUNCE_SECONDS", "lsp_range", "noqa_edit", "start"]
