"""The open documents (``Document``: edits applied through a ``LineTable``), the workspace and protocol
that create them, what one analysis saw of them (``Snapshot``), and the files one publish reads (``Files``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.protocol.language_server import LanguageServerProtocol, lsp_method
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import TextDocument, Workspace

from ...core.locations import Location
from ...core.paths import as_the_cli_names_it, file_status, real_path
from .positions import LineTable


class Document(TextDocument):
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


class DocumentWorkspace(Workspace):
    """A workspace whose documents are ``Document``s."""

    def _create_text_document(
        self, doc_uri: str, source: str | None = None, version: int | None = None, language_id: str | None = None
    ) -> TextDocument:
        return Document(
            doc_uri, source=source, version=version, language_id=language_id, position_codec=self.position_codec
        )


class ServerProtocol(LanguageServerProtocol):
    """pygls's protocol, with the workspace it creates at ``initialize`` swapped for a ``DocumentWorkspace``.

    pygls builds its ``Workspace`` inside ``initialize`` and offers no hook for the document class.
    The swap happens before the response, so before any document can be opened.
    """

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Any:
        result = yield from super().lsp_initialize(params)
        created = self.workspace
        self._workspace = DocumentWorkspace(
            created.root_uri,
            types.TextDocumentSyncKind.Incremental,
            list(created.folders.values()),
            created.position_encoding,
        )
        return result


@dataclass(frozen=True)
class Buffer:
    """An open document as one analysis saw it. ``stamp`` identifies that exact buffer state."""

    uri: str
    path: Path
    version: int | None
    stamp: int | None


@dataclass(frozen=True)
class Snapshot:
    """What one analysis saw: the documents it publishes for and every open buffer's contents."""

    root: Path
    buffers: tuple[Buffer, ...]
    sources: Mapping[Path, bytes]
    #: Made for a document just opened: what follows its publish shows as a progress.
    opening: bool = False

    def buffer_paths(self) -> list[str]:
        """The open buffers' files named as the CLI names them: results are cached under the
        names the findings show, so the open files' own check shares the results of
        ``compile-ad-lint check FILE`` (and of the files' earlier checks) instead of keeping twins
        under absolute names."""
        return list(dict.fromkeys(as_the_cli_names_it(buffer.path) for buffer in self.buffers))


class Files:
    """What one publish needs to know about files, each looked up once.

    Findings name files by their displayed path; resolving it, finding the open buffer (or reading
    the saved file) and splitting the text happen once per file, however many findings and related
    locations point into it. Doing them per diagnostic made publishing quadratic.
    """

    def __init__(
        self,
        open_documents: Mapping[Path, Document],
        encoding: str | None,
        closed: ClosedTables | None = None,
    ) -> None:
        self._open = open_documents
        self._encoding = encoding
        self._files: dict[str, tuple[str, LineTable | None]] = {}
        self._closed = closed

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
        if self._closed is not None:
            return self._closed.get(path, self._encoding)
        return _read_table(path, self._encoding)


def _read_table(path: Path, encoding: str | None) -> tuple[str, LineTable | None]:
    """The URI and line table of a file that is not open (no table when it cannot be read)."""
    try:
        text = path.read_bytes().decode("utf-8-sig", errors="replace")
    except OSError:
        return from_fs_path(str(path)), None
    return from_fs_path(str(path)), LineTable(text, encoding)


#: Closed files' line tables kept at most (``ClosedTables``).
MAX_CLOSED_TABLES = 1024


class ClosedTables:
    """The line tables of files that are not open, kept between publishes while each file's
    ``file_status`` stays as it was: a CAL002 finding points into the dozens of files its chain
    crosses, and reading and splitting them again took a fifth of each edit's time in the server
    (docs/performance.md)."""

    def __init__(self) -> None:
        self._tables: dict[tuple[Path, str | None], tuple[tuple[int, ...], tuple[str, LineTable | None]]] = {}

    def get(self, path: Path, encoding: str | None) -> tuple[str, LineTable | None]:
        try:
            signature = file_status(path)
        except OSError:
            return _read_table(path, encoding)
        key = (path, encoding)
        kept = self._tables.get(key)
        if kept is not None and kept[0] == signature:
            return kept[1]
        table = _read_table(path, encoding)
        if len(self._tables) >= MAX_CLOSED_TABLES:
            self._tables.clear()  # a bound on what a long session keeps; they are cheap to rebuild
        self._tables[key] = (signature, table)
        return table


def saved(snapshot: Snapshot) -> bool:
    """Whether every buffer of ``snapshot`` holds what its file on disk holds."""
    for buffer in snapshot.buffers:
        try:
            if buffer.path.read_bytes() != snapshot.sources.get(buffer.path):
                return False
        except OSError:
            return False
    return True


def path_of(uri: str) -> Path | None:
    """The resolved file system path of a ``file:`` URI, else None."""
    path = to_fs_path(uri)
    if path is None or not uri.startswith("file:"):
        return None
    return real_path(path)  # a symlink loop too (it is reported where it is read)


def workspace_key(uri: str) -> str:
    """How pygls keys its open documents."""
    return unquote(uri)
