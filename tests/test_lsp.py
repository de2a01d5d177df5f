"""End-to-end tests of ``compile-ad-lint lsp`` with a real LSP client over stdio (pygls's client)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402
from pygls.workspace import TextDocument  # noqa: E402

from compile_ad_lint.findings import Location  # noqa: E402
from compile_ad_lint.integrations.lsp import SOURCE, lsp_range, noqa_edit  # noqa: E402
from compile_ad_lint.rules import RULES_BY_CODE  # noqa: E402

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


class _Client:
    """A pygls LanguageClient running ``python -m compile_ad_lint lsp`` and collecting diagnostics."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.client = LanguageClient("compile-ad-lint-tests", "0")
        self.published: dict[str, asyncio.Queue[types.PublishDiagnosticsParams]] = {}
        self.messages: asyncio.Queue[types.ShowMessageParams] = asyncio.Queue()

        @self.client.feature(types.WINDOW_SHOW_MESSAGE)
        def on_message(params: types.ShowMessageParams) -> None:
            self.messages.put_nowait(params)

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: types.PublishDiagnosticsParams) -> None:
            self._queue(params.uri).put_nowait(params)

    def _queue(self, uri: str) -> asyncio.Queue:
        return self.published.setdefault(uri, asyncio.Queue())

    async def __aenter__(self) -> "_Client":
        await self.client.start_io(sys.executable, "-m", "compile_ad_lint", "lsp", "--debounce-ms", "50", cwd=str(self.root))
        await asyncio.wait_for(
            self.client.initialize_async(
                types.InitializeParams(
                    capabilities=types.ClientCapabilities(),
                    root_uri=from_fs_path(str(self.root)),
                    workspace_folders=[types.WorkspaceFolder(uri=from_fs_path(str(self.root)), name="project")],
                )
            ),
            TIMEOUT,
        )
        self.client.initialized(types.InitializedParams())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        try:
            await asyncio.wait_for(self.client.shutdown_async(None), TIMEOUT)
            self.client.exit(None)
        finally:
            await asyncio.wait_for(self.client.stop(), TIMEOUT)

    async def diagnostics(self, uri: str) -> types.PublishDiagnosticsParams:
        return await asyncio.wait_for(self._queue(uri).get(), TIMEOUT)

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text))
        )

    def replace_all(self, uri: str, text: str, version: int) -> None:
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )


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
            related = {(info.location.uri, info.location.range.start.line, info.message) for info in diagnostic.related_information or ()}
            assert (train, 4, "forward-AD region entered here") in related
            assert any(uri == model and line == 2 and "compiled here" in message for uri, line, message in related)

            actions = await asyncio.wait_for(
                client.client.text_document_code_action_async(
                    types.CodeActionParams(
                        text_document=types.TextDocumentIdentifier(uri=train),
                        range=diagnostic.range,
                        context=types.CodeActionContext(diagnostics=[diagnostic]),
                    )
                ),
                TIMEOUT,
            )
            assert actions is not None
            [action] = actions
            assert isinstance(action, types.CodeAction)
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

            # Nothing was written: the unsaved buffer never reached the disk.
            assert (root / "train.py").read_text(encoding="utf-8") == FIXED
            assert not (root / ".compile_ad_lint_cache").exists()

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
            client.client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=model)))
            while not (await client.diagnostics(train)).diagnostics:
                pass

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


def test_save_publishes(tmp_path: Path) -> None:
    root, train, _model = _project(tmp_path)
    (root / "train.py").write_text(HAZARD, encoding="utf-8")

    async def scenario() -> None:
        async with _Client(root) as client:
            client.open(train, HAZARD)
            assert len((await client.diagnostics(train)).diagnostics) == 1
            client.client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri=train)))
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
    document = TextDocument("file:///x.py", "abc = f(x)\n")
    location = Location("x.py", 1, 7, 1, 11)  # ``f(x)``: columns 7..10, end exclusive at 11
    assert lsp_range(location, document.lines, document.position_codec) == types.Range(
        types.Position(0, 6), types.Position(0, 10)
    )


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
    ],
)
def test_noqa_edit(line: str, expected) -> None:
    document = TextDocument("file:///x.py", line + "z = 1\n")
    edit = noqa_edit(document, 0, "CAL001")
    if expected is None:
        assert edit is None
        return
    (start, end, text) = expected
    assert edit == types.TextEdit(types.Range(types.Position(*start), types.Position(*end)), text)
