"""End-to-end tests of ``compile-ad-lint lsp`` with a real LSP client over stdio (pygls's client)."""

from __future__ import annotations

import asyncio
import gc
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

from compile_ad_lint import Location, load_config
from compile_ad_lint.api import Analyzer
from compile_ad_lint.integrations.lsp import SOURCE, LineTable, collector_paused, lsp_range, noqa_edit
from compile_ad_lint.rules import RULES_BY_CODE

TIMEOUT = 30.0

MODEL = """\
import torch

f = torch.compile(torch.sin)
"""

MODEL_SAFE = """\
import torch

f = torch.compile(torch.sin, backend="aot_eager")
"""

HAZARD = """\
import torch.autograd.forward_ad as fwAD
from model import f

def run(x, t):
    with fwAD.dual_level():
        y = f(fwAD.make_dual(x, t))
    return y
"""

#: The flagged call ``f(fwAD.make_dual(x, t))`` is on 0-based line 5, characters 12 to 35.
HAZARD_RANGE = types.Range(types.Position(5, 12), types.Position(5, 35))

FIXED = HAZARD.replace("y = f(fwAD.make_dual(x, t))", "y = fwAD.make_dual(x, t)")

#: A character outside the BMP before the call: one code point, two UTF-16 code units.
HAZARD_EMOJI = HAZARD.replace("y = f(fwAD.make_dual(x, t))", 'y = ("\U0001f60b", f(fwAD.make_dual(x, t)))')


class _LanguageClient(LanguageClient):
    """pygls's client, keeping the server process once it has exited (for its exit code)."""

    process: asyncio.subprocess.Process | None = None

    async def server_exit(self, server: asyncio.subprocess.Process) -> None:
        self.process = server


class _Client:
    """A pygls LanguageClient running the server (``python -m compile_ad_lint lsp`` unless ``command``)."""

    def __init__(
        self,
        root: Path,
        command: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        debounce_ms: int = 50,
        *,
        progress: bool = False,
    ) -> None:
        self.root = root
        self.command = [*(command or ("-m", "compile_ad_lint")), "lsp", "--debounce-ms", str(debounce_ms)]
        self.env = env
        self.client = _LanguageClient("compile-ad-lint-tests", "0")
        self.published: dict[str, asyncio.Queue[types.PublishDiagnosticsParams]] = {}
        self.messages: asyncio.Queue[types.ShowMessageParams] = asyncio.Queue()
        #: Work-done progress notifications, when the client says it supports them.
        self.progress: asyncio.Queue[types.ProgressParams] = asyncio.Queue()
        self.supports_progress = progress

        @self.client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def on_create(params: types.WorkDoneProgressCreateParams) -> None:
            return None

        @self.client.feature(types.PROGRESS)
        def on_progress(params: types.ProgressParams) -> None:
            self.progress.put_nowait(params)

        @self.client.feature(types.WINDOW_SHOW_MESSAGE)
        def on_message(params: types.ShowMessageParams) -> None:
            self.messages.put_nowait(params)

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: types.PublishDiagnosticsParams) -> None:
            self._queue(params.uri).put_nowait(params)

    def _queue(self, uri: str) -> asyncio.Queue:
        return self.published.setdefault(uri, asyncio.Queue())

    async def __aenter__(self) -> _Client:
        await self.client.start_io(sys.executable, *self.command, cwd=str(self.root), env=self.env)
        await asyncio.wait_for(
            self.client.initialize_async(
                types.InitializeParams(
                    capabilities=types.ClientCapabilities(
                        window=types.WindowClientCapabilities(work_done_progress=True)
                        if self.supports_progress
                        else None
                    ),
                    root_uri=from_fs_path(str(self.root)),
                    workspace_folders=[types.WorkspaceFolder(uri=from_fs_path(str(self.root)), name="project")],
                )
            ),
            TIMEOUT,
        )
        self.client.initialized(types.InitializedParams())
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, *exc_info: object) -> None:
        if self.client.process is not None:
            return  # the test ended the server itself
        try:
            code = await self.exit(shutdown=True)
        finally:
            server = self.client._server  # pygls keeps no public handle on a server that never exited
            if server is not None and server.returncode is None:
                server.kill()
        if exc_type is None:
            assert code == 0

    async def exit(self, shutdown: bool) -> int:
        """``exit`` (after ``shutdown`` if asked); the server's exit code once it has gone."""
        if shutdown:
            await asyncio.wait_for(self.client.shutdown_async(None), TIMEOUT)
        self.client.exit(None)
        await asyncio.wait_for(self.client.stop(), TIMEOUT)
        assert self.client.process is not None and self.client.process.returncode is not None
        return self.client.process.returncode

    async def diagnostics(self, uri: str, version: int | None = None) -> types.PublishDiagnosticsParams:
        """The next publish for ``uri`` (with ``version``, when given: the others are skipped)."""
        while True:
            published = await asyncio.wait_for(self._queue(uri).get(), TIMEOUT)
            if version is None or published.version == version:
                return published

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
            )
        )

    def close(self, uri: str) -> None:
        self.client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))

    def save(self, uri: str) -> None:
        self.client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))

    def replace_all(self, uri: str, text: str, version: int) -> None:
        self.change(uri, version, [types.TextDocumentContentChangeWholeDocument(text=text)])

    def change(self, uri: str, version: int, changes: Sequence[types.TextDocumentContentChangeEvent]) -> None:
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=list(changes),
            )
        )

    async def code_actions(self, uri: str, diagnostics: Sequence[types.Diagnostic]) -> list[types.CodeAction]:
        actions = await asyncio.wait_for(
            self.client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    range=diagnostics[0].range
                    if diagnostics
                    else types.Range(types.Position(0, 0), types.Position(0, 0)),
                    context=types.CodeActionContext(diagnostics=list(diagnostics)),
                )
            ),
            TIMEOUT,
        )
        assert actions is not None
        assert all(isinstance(action, types.CodeAction) for action in actions)
        return [action for action in actions if isinstance(action, types.CodeAction)]


def _project(tmp_path: Path) -> tuple[Path, str, str]:
    (tmp_path / "pyproject.toml").write_text("[tool.compile-ad-lint]\n", encoding="utf-8")
    (tmp_path / "model.py").write_text(MODEL, encoding="utf-8")
    # On disk the script is clean: the hazard exists only in the editor's unsaved buffer.
    (tmp_path / "train.py").write_text(FIXED, encoding="utf-8")
    return tmp_path, from_fs_path(str(tmp_path / "train.py")), from_fs_path(str(tmp_path / "model.py"))


def _run(coroutine) -> None:
    asyncio.run(asyncio.wait_for(coroutine, 4 * TIMEOUT))


def test_diagnostic_code_action_and_fix(tmp_path: Path) -> None:
    root, train, model = _project(tmp_path)

    async def scenario() -> None:
        async with _Client(root) as client:
            client.open(train, HAZARD)
            published = await client.diagnostics(train)
            assert published.version == 1
            [diagnostic] = published.diagnostics
            assert diagnostic.range == HAZARD_RANGE
            assert diagnostic.code == "CAL001"
            assert diagnostic.source == SOURCE
            assert diagnostic.severity == types.DiagnosticSeverity.Error
            assert diagnostic.code_description is not None
            assert diagnostic.code_description.href == RULES_BY_CODE["CAL001"].docs_url()
            assert "dual_level" in diagnostic.message
            related = {
                (info.location.uri, info.location.range.start.line, info.message)
                for info in diagnostic.related_information or ()
            }
            assert (train, 4, "forward-AD region entered here") in related
            assert any(uri == model and line == 2 and "compiled here" in message for uri, line, message in related)

            actions = await client.code_actions(train, [diagnostic])
            # The fixes first (tests/frontends/test_lsp_fixes.py), the suppression next to them.
            [action] = [a for a in actions if a.title.startswith("Suppress")]
            assert action is actions[-1]
            assert action.kind == types.CodeActionKind.QuickFix
            assert action.edit is not None and action.edit.changes is not None
            [edit] = action.edit.changes[train]
            line_end = len("        y = f(fwAD.make_dual(x, t))")
            assert edit.range == types.Range(types.Position(5, line_end), types.Position(5, line_end))
            assert edit.new_text == "  # noqa: CAL001"

            # Several quick edits are debounced into one analysis of the latest text: the fix.
            client.replace_all(train, HAZARD.replace("y = f(", "y = f( "), version=2)
            client.replace_all(train, FIXED, version=3)
            published = await client.diagnostics(train)
            assert published.version == 3  # nothing was published for version 2
            assert list(published.diagnostics) == []

            # Nothing was written but the project cache: the unsaved buffer never reached the disk.
            assert (root / "train.py").read_text(encoding="utf-8") == FIXED
            assert sorted(p.name for p in root.iterdir()) == [
                ".compile_ad_lint_cache",
                "model.py",
                "pyproject.toml",
                "train.py",
            ]
            assert (root / "model.py").read_text(encoding="utf-8") == MODEL

    _run(scenario())


def test_change_in_one_file_republishes_its_dependents(tmp_path: Path) -> None:
    root, train, model = _project(tmp_path)

    async def scenario() -> None:
        async with _Client(root) as client:
            client.open(train, HAZARD)
            assert len((await client.diagnostics(train)).diagnostics) == 1
            client.open(model, MODEL)
            await client.diagnostics(model)
            # An unsaved edit of model.py (a tangent-preserving backend) clears train.py's finding.
            client.replace_all(model, MODEL_SAFE, version=2)
            while (await client.diagnostics(train)).diagnostics:
                pass
            # Saving re-analyzes too; closing model.py falls back to its saved (hazardous) text.
            client.close(model)
            while not (await client.diagnostics(train)).diagnostics:
                pass

    _run(scenario())


def test_a_closed_file_changed_on_disk_is_placed_as_it_now_reads(tmp_path: Path) -> None:
    # The server keeps closed files' line tables between publishes: one rewritten on disk (a
    # ``git checkout``) must be read again, or its related locations keep the old columns.
    root, train, model = _project(tmp_path)

    def compiled_here(diagnostic: types.Diagnostic) -> types.Position:
        [start] = [
            info.location.range.start
            for info in diagnostic.related_information or ()
            if info.location.uri == model and "compiled here" in info.message
        ]
        return start

    async def scenario() -> None:
        async with _Client(root) as client:
            client.open(train, HAZARD)
            [diagnostic] = (await client.diagnostics(train)).diagnostics
            assert compiled_here(diagnostic) == types.Position(2, 4)
            # One code point outside the BMP before the compile: two UTF-16 code units.
            (root / "model.py").write_text(MODEL.replace("f = ", 's = "\U0001f60b"; f = '), encoding="utf-8")
            client.replace_all(train, HAZARD + "\n", version=2)
            [diagnostic] = (await client.diagnostics(train, version=2)).diagnostics
            assert compiled_here(diagnostic) == types.Position(2, len('s = "xx"; f = '))

    _run(scenario())


def test_a_configuration_changed_on_disk_applies_to_the_next_edit(tmp_path: Path) -> None:
    # The server keeps each project's configuration while its pyproject.toml stays as read.
    root, train, _model = _project(tmp_path)

    async def scenario() -> None:
        async with _Client(root) as client:
            client.open(train, HAZARD)
            assert len((await client.diagnostics(train)).diagnostics) == 1
            (root / "pyproject.toml").write_text('[tool.compile-ad-lint]\nignore = ["CAL001"]\n', encoding="utf-8")
            client.replace_all(train, HAZARD + "\n", version=2)
            assert list((await client.diagnostics(train, version=2)).diagnostics) == []
            (root / "pyproject.toml").unlink()
            client.replace_all(train, HAZARD + "\n\n", version=3)
            assert len((await client.diagnostics(train, version=3)).diagnostics) == 1

    _run(scenario())


def test_ranges_count_utf16_code_units(tmp_path: Path) -> None:
    root, train, _model = _project(tmp_path)

    async def scenario() -> None:
        async with _Client(root) as client:
            client.open(train, HAZARD_EMOJI)
            [diagnostic] = (await client.diagnostics(train)).diagnostics
            prefix = '        y = ("\U0001f60b", '
            start = len(prefix.encode("utf-16-le")) // 2
            call = "f(fwAD.make_dual(x, t))"
            assert diagnostic.range == types.Range(types.Position(5, start), types.Position(5, start + len(call)))

    _run(scenario())


# -- LSP lines: only \n, \r\n and \r end a line ----------------------------------------------------

#: What ``str.splitlines`` takes for a line end and LSP does not, and a character of two UTF-16 units.
UNUSUAL = {
    "form feed": "\x0c",
    "file separator": "\x1c",
    "group separator": "\x1d",
    "record separator": "\x1e",
    "next line": "\x85",
    "line separator": "\u2028",
    "paragraph separator": "\u2029",
    "astral": "\U0001f60b",
}

#: The character on a line before the flagged call, on its line before the call and in a comment after
#: it; a form feed also as a page break of its own.
UNUSUAL_HAZARD = """\
import torch.autograd.forward_ad as fwAD
from model import f
# before{c}the function{c}
{page}def run(x, t):
    with fwAD.dual_level():
        y = ("{c}", f(fwAD.make_dual(x, t)))  # why{c} not
    return y
"""

CALL = "f(fwAD.make_dual(x, t))"


def _unusual(char: str, newline: str = "\n") -> str:
    return UNUSUAL_HAZARD.format(c=char, page=f"{char}\n" if char == "\x0c" else "").replace("\n", newline)


#: Name → buffer text: each unusual character, and two of them under the other LSP line ends.
UNUSUAL_BUFFERS = {
    **{name: _unusual(char) for name, char in UNUSUAL.items()},
    "CRLF line ends": _unusual("\u2028", "\r\n"),
    "CR line ends": _unusual("\x0c", "\r"),
}

_LSP_LINE_END = re.compile(r"\r\n|\r|\n")


def _line_of(text: str, offset: int) -> tuple[int, int]:
    """The 0-based LSP line of ``offset`` in ``text`` and where that line starts, computed independently of the server."""
    line, line_start = 0, 0
    for match in _LSP_LINE_END.finditer(text, 0, offset):
        line, line_start = line + 1, match.end()
    return line, line_start


def _position(text: str, offset: int) -> types.Position:
    """The LSP position of ``offset`` in ``text``, its column in UTF-16 code units."""
    line, line_start = _line_of(text, offset)
    return types.Position(line, len(text[line_start:offset].encode("utf-16-le")) // 2)


def _span(text: str, part: str) -> types.Range:
    """The range of the first ``part`` in ``text``."""
    offset = text.index(part)
    return types.Range(_position(text, offset), _position(text, offset + len(part)))


def _edit(text: str, start: int, end: int, new_text: str) -> tuple[str, types.TextDocumentContentChangePartial]:
    """``text`` with ``[start, end)`` replaced, and the change an editor sends for it."""
    change = types.TextDocumentContentChangePartial(
        range=types.Range(_position(text, start), _position(text, end)), text=new_text
    )
    return text[:start] + new_text + text[end:], change


def _document(root: Path, name: str) -> str:
    """A file for the buffer ``name`` (the server analyzes files that exist), and its URI."""
    path = root / f"buffer_{re.sub(r'[^a-z]+', '_', name.lower())}.py"
    path.write_text(FIXED, encoding="utf-8")
    return from_fs_path(str(path))


def test_unusual_characters_keep_diagnostic_ranges(tmp_path: Path) -> None:
    root, _train, _model = _project(tmp_path)

    async def scenario() -> None:
        async with _Client(root) as client:
            for name, text in UNUSUAL_BUFFERS.items():
                uri = _document(root, name)
                client.open(uri, text)
                [diagnostic] = (await client.diagnostics(uri, version=1)).diagnostics
                assert diagnostic.range == _span(text, CALL), name
                [region] = [
                    info
                    for info in diagnostic.related_information or ()
                    if info.message == "forward-AD region entered here"
                ]
                assert region.location.range.start == _position(text, text.index("with")), name
                client.close(uri)

    _run(scenario())


def test_unusual_characters_keep_incremental_edits(tmp_path: Path) -> None:
    root, _train, _model = _project(tmp_path)

    async def scenario() -> None:
        async with _Client(root) as client:
            for name, hazard in UNUSUAL_BUFFERS.items():
                uri = _document(root, name)
                text = hazard.replace(CALL, "fwAD.make_dual(x, t)")
                client.open(uri, text)
                assert not (await client.diagnostics(uri, version=1)).diagnostics, name

                # Two edits in one change, the second counted in the text the first left: f( ... ).
                call = text.index("fwAD.make_dual(x, t)")
                text, close_call = _edit(
                    text, call + len("fwAD.make_dual(x, t)"), call + len("fwAD.make_dual(x, t)"), ")"
                )
                text, open_call = _edit(text, call, call, "f(")
                client.change(uri, 2, [close_call, open_call])
                assert text == hazard
                [diagnostic] = (await client.diagnostics(uri, version=2)).diagnostics
                assert diagnostic.range == _span(text, CALL), name

                # Delete the lines holding the character before the function, and type unusual text into
                # the call's line.
                text, delete = _edit(text, text.index("# before"), text.index("def run"), "")
                call = text.index(CALL)
                text, insert = _edit(text, call, call, '"\U0001f60b\u2028\x0c" and ')
                client.change(uri, 3, [delete, insert])
                [diagnostic] = (await client.diagnostics(uri, version=3)).diagnostics
                assert diagnostic.range == _span(text, CALL), name
                client.close(uri)

    _run(scenario())


def test_unusual_characters_keep_quick_fix_positions(tmp_path: Path) -> None:
    root, _train, _model = _project(tmp_path)

    async def scenario() -> None:
        async with _Client(root) as client:
            for name, text in UNUSUAL_BUFFERS.items():
                uri = _document(root, name)
                client.open(uri, text)
                [diagnostic] = (await client.diagnostics(uri, version=1)).diagnostics
                [action] = [a for a in await client.code_actions(uri, [diagnostic]) if a.title.startswith("Suppress")]
                assert action.edit is not None and action.edit.changes is not None
                [edit] = action.edit.changes[uri]
                line_end = text.index(" not", text.index(CALL)) + len(" not")  # the end of the flagged line
                assert edit.range == types.Range(_position(text, line_end), _position(text, line_end)), name
                assert edit.new_text == "  # noqa: CAL001"
                # The editor applies the fix and sends it back as an incremental change: the finding is gone.
                text, change = _edit(text, line_end, line_end, edit.new_text)
                client.change(uri, 2, [change])
                assert not (await client.diagnostics(uri, version=2)).diagnostics, name
                client.close(uri)

    _run(scenario())


@pytest.mark.parametrize("name", list(UNUSUAL_BUFFERS))
def test_findings_number_lines_as_lsp_does(tmp_path: Path, name: str) -> None:
    """The server takes a finding's line for an LSP line: the analyzer (CPython's and LibCST's
    tokenizers) must end lines only where LSP does, and count columns in characters."""
    root, _train, _model = _project(tmp_path)
    text = UNUSUAL_BUFFERS[name]
    path = (root / "train.py").resolve()
    [finding] = (
        Analyzer(load_config(root), use_cache=False, jobs=1)
        .check([str(path)], sources={path: text.encode("utf-8")})
        .findings
    )
    line, line_start = _line_of(text, text.index(CALL))
    start = text.index(CALL) - line_start
    assert (finding.location.line, finding.location.column, finding.location.end_line, finding.location.end_column) == (
        line + 1,
        start + 1,
        line + 1,
        start + len(CALL) + 1,
    )


def test_columns_after_a_leading_form_feed(tmp_path: Path) -> None:
    """A form feed in a line's indentation is a character of the line (LibCST restarted its columns there)."""
    root, _train, _model = _project(tmp_path)
    path = (root / "train.py").resolve()
    text = 'import torch\n\x0ctorch._functorch.config.backward_pass_autocast = "bad"\n'
    [finding] = (
        Analyzer(load_config(root), use_cache=False, jobs=1)
        .check([str(path)], sources={path: text.encode("utf-8")})
        .findings
    )
    assert (finding.code, finding.location.line, finding.location.column) == ("CAL003", 2, 2)


#: A function whose hazard depends on what its callers pass: ``lib.py``'s own entry points do not
#: show it, the project's do (``run.py`` passes a compiled module).
TANGENT_LIB = """\
import torch.autograd.forward_ad as fwAD


def tangent_step(f, x, t):
    with fwAD.dual_level():
        return f(fwAD.make_dual(x, t))
"""

#: ``TANGENT_LIB`` without the call of ``f``.
TANGENT_LIB_SAFE = TANGENT_LIB.replace("return f(fwAD.make_dual(x, t))", "return fwAD.make_dual(x, t)")

TANGENT_RUN = """\
import torch

from lib import tangent_step

model = torch.compile(torch.nn.Linear(4, 4))
tangent_step(model, torch.randn(4), torch.randn(4))
"""


def test_the_project_pass_shows_what_other_entry_points_reach_in_an_open_file(tmp_path: Path) -> None:
    """The open file's own entry points first, then (the buffers idle) the whole project's, which
    finds what ``run.py`` reaches in ``lib.py``: the diagnostics the CLI gives for the project."""
    (tmp_path / "pyproject.toml").write_text("[tool.compile-ad-lint]\n", encoding="utf-8")
    (tmp_path / "lib.py").write_text(TANGENT_LIB_SAFE, encoding="utf-8")  # saved: no hazard
    (tmp_path / "run.py").write_text(TANGENT_RUN, encoding="utf-8")
    lib = from_fs_path(str(tmp_path / "lib.py"))
    expected = Analyzer(load_config(tmp_path), use_cache=False).check(
        [str(tmp_path)], sources={tmp_path / "lib.py": TANGENT_LIB.encode()}
    )
    [finding] = expected.findings
    assert finding.code == "CAL001" and finding.location.line == 6

    async def scenario() -> None:
        async with _Client(tmp_path, progress=True) as client:
            client.open(lib, TANGENT_LIB)
            fast = await client.diagnostics(lib, version=1)
            assert list(fast.diagnostics) == []  # lib.py alone: nothing calls tangent_step
            # After the open its walks are rehearsed, shown as a progress of their own.
            indexing = await asyncio.wait_for(client.progress.get(), TIMEOUT)
            assert indexing.value == {"kind": "begin", "title": f"{SOURCE}: Indexing the open files"}
            indexed = await asyncio.wait_for(client.progress.get(), TIMEOUT)
            assert indexed.value == {"kind": "end", "message": "done"} and indexed.token == indexing.token
            begun = await asyncio.wait_for(client.progress.get(), TIMEOUT)
            assert begun.value == {"kind": "begin", "title": f"{SOURCE}: Checking the project"}
            settled = await client.diagnostics(lib, version=1)
            [diagnostic] = settled.diagnostics
            assert diagnostic.code == "CAL001"
            assert diagnostic.message == "\n".join([finding.message, *finding.details])
            assert diagnostic.range == types.Range(types.Position(5, 15), types.Position(5, 38))
            related = {
                (info.location.uri, info.location.range.start.line) for info in diagnostic.related_information or ()
            }
            assert (from_fs_path(str(tmp_path / "run.py")), 4) in related
            ended = await asyncio.wait_for(client.progress.get(), TIMEOUT)
            assert ended.value == {"kind": "end", "message": "done"} and ended.token == begun.token

            # An edit that changes nothing the project pass sees: the pass publishes nothing again.
            client.replace_all(lib, TANGENT_LIB + "\n", version=2)
            again = await client.diagnostics(lib, version=2)
            assert list(again.diagnostics) == []
            begun = await asyncio.wait_for(client.progress.get(), TIMEOUT)
            ended = await asyncio.wait_for(client.progress.get(), TIMEOUT)
            assert ended.value == {"kind": "end", "message": "done"} and ended.token == begun.token
            [diagnostic] = (await client.diagnostics(lib, version=2)).diagnostics
            assert diagnostic.message == "\n".join([finding.message, *finding.details])
            # Removing the hazard from the buffer: both passes agree there is none, one publish.
            client.replace_all(lib, TANGENT_LIB_SAFE, version=3)
            assert list((await client.diagnostics(lib, version=3)).diagnostics) == []
            begun = await asyncio.wait_for(client.progress.get(), TIMEOUT)
            ended = await asyncio.wait_for(client.progress.get(), TIMEOUT)
            assert ended.value == {"kind": "end", "message": "done"} and ended.token == begun.token
            assert client.published[lib].empty()

    _run(scenario())


def test_save_publishes(tmp_path: Path) -> None:
    root, train, _model = _project(tmp_path)
    (root / "train.py").write_text(HAZARD, encoding="utf-8")

    async def scenario() -> None:
        async with _Client(root) as client:
            client.open(train, HAZARD)
            assert len((await client.diagnostics(train)).diagnostics) == 1
            client.save(train)
            assert len((await client.diagnostics(train)).diagnostics) == 1

    _run(scenario())


def test_configuration_error_is_shown_and_defaults_are_used(tmp_path: Path) -> None:
    root, train, _model = _project(tmp_path)
    (root / "pyproject.toml").write_text("[tool.compile-ad-lint]\nbogus = 1\n", encoding="utf-8")

    async def scenario() -> None:
        async with _Client(root) as client:
            client.open(train, HAZARD)
            assert len((await client.diagnostics(train)).diagnostics) == 1
            message = await asyncio.wait_for(client.messages.get(), TIMEOUT)
            assert message.type == types.MessageType.Warning
            assert "bogus" in message.message

    _run(scenario())


# -- the conversion and the edit, without a client ----------------------------------------------


def test_lsp_range_is_zero_based_with_exclusive_end() -> None:
    location = Location("x.py", 1, 7, 1, 11)  # ``f(x)``: columns 7..10, end exclusive at 11
    assert lsp_range(location, LineTable("abc = f(x)\n")) == types.Range(types.Position(0, 6), types.Position(0, 10))


def test_line_table_ends_lines_only_where_lsp_does() -> None:
    table = LineTable("a\x0cb\u2028c\x85\r\nd\re\n")
    assert table.lines == ("a\x0cb\u2028c\x85\r\n", "d\r", "e\n")
    assert [table.line(number) for number in range(table.line_count)] == ["a\x0cb\u2028c\x85", "d", "e", ""]


@pytest.mark.parametrize(("encoding", "units"), [("utf-8", 1 + 2 + 4), ("utf-16", 1 + 1 + 2), ("utf-32", 3)])
def test_line_table_counts_the_negotiated_code_units(encoding: str, units: int) -> None:
    table = LineTable("a\u00e9\U0001f60bx\ny", encoding)
    assert table.position(0, 3) == types.Position(0, units)
    assert table.offset(types.Position(0, units)) == 3
    # Past a line's end is its end (not the next line), past the last line the text's end.
    assert table.offset(types.Position(0, 99)) == 4
    assert table.position(0, 99) == table.position(0, 4)
    assert table.offset(types.Position(5, 0)) == len(table.text)
    assert table.position(5, 0) == types.Position(1, 1)


def test_line_table_offset_inside_a_surrogate_pair_is_before_the_character() -> None:
    assert LineTable("a\U0001f60bb").offset(types.Position(0, 2)) == 1


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("y = f(x)\n", ((0, 8), (0, 8), "  # noqa: CAL001")),
        ("y = f(x)   \n", ((0, 8), (0, 11), "  # noqa: CAL001")),
        ("y = f(x)  # noqa: CAL002\n", ((0, 24), (0, 24), ", CAL001")),
        ("y = f(x)  # noqa:CAL002,CAL003\n", ((0, 30), (0, 30), ", CAL001")),
        ("y = f(x)  # why  # noqa: E501\n", ((0, 29), (0, 29), ", CAL001")),
        ("y = f(x)  # noqa\n", None),
        ("y = f(x)  # noqa: CAL001\n", None),
        ("y = f(x) + \\\n", None),
        # Only Python's whitespace is trailing whitespace: U+2028 stays, the form feed is replaced.
        ("y = f(x)  # a\u2028b\x0c\n", ((0, 15), (0, 16), "  # noqa: CAL001")),
    ],
)
def test_noqa_edit(line: str, expected) -> None:
    edit = noqa_edit(LineTable(line + "z = 1\n"), 0, "CAL001")
    if expected is None:
        assert edit is None
        return
    (start, end, text) = expected
    assert edit == types.TextEdit(types.Range(types.Position(*start), types.Position(*end)), text)


def test_overlapping_collector_pauses_end_with_the_last() -> None:
    """An edit's analysis and publish (on the event loop) and a rehearsal (on the analysis thread)
    pause the one collector of the process: it comes back on when the last pause ends, and stays
    off when it was off before the first."""
    assert gc.isenabled()
    first, second = collector_paused(), collector_paused()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert not gc.isenabled(), "the first pause to end turned the collector on under the second"
    second.__exit__(None, None, None)
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_code_description_points_under_the_configured_docs_url(tmp_path: Path) -> None:
    root, train, _ = _project(tmp_path)
    (root / "pyproject.toml").write_text(
        '[tool.compile-ad-lint]\nrule-docs-url = "https://docs.example.org/cal/rules"\n', encoding="utf-8"
    )

    async def scenario() -> None:
        async with _Client(root) as client:
            client.open(train, HAZARD)
            [diagnostic] = (await client.diagnostics(train)).diagnostics
            assert diagnostic.code_description is not None
            assert diagnostic.code_description.href == "https://docs.example.org/cal/rules/CAL001.md"

    _run(scenario())
