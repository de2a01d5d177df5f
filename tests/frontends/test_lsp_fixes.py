"""The language server's fixes, end to end with a real client: quick fixes (also editing another
file) next to the suppression, the "fix all" source action, and no fix for a changed buffer."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from lsprotocol import types
from pygls.uris import from_fs_path

from compile_ad_lint.integrations.lsp import FIX_ALL_KIND

from .test_lsp import FIXED, HAZARD, MODEL, TIMEOUT, _Client, _project, _run

AMP = """\
import torch
import torch._functorch.config as fc

step = torch.compile(net)
fc.backward_pass_autocast = {"device_type": "cpu"}


def train(x):
    with torch.autocast("cpu"):
        loss = step(x).sum()
    loss.backward()
"""


def _apply(text: str, edits) -> str:  # type: ignore[no-untyped-def]
    """Apply LSP TextEdits (ASCII text: UTF-16 units are characters) the way an editor does."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: types.Position) -> int:
        return starts[position.line] + position.character if position.line < len(lines) else len(text)

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


async def _actions(client: _Client, uri: str, diagnostics, only=None):  # type: ignore[no-untyped-def]
    found = await asyncio.wait_for(
        client.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=diagnostics[0].range if diagnostics else types.Range(types.Position(0, 0), types.Position(0, 0)),
                context=types.CodeActionContext(diagnostics=list(diagnostics), only=only),
            )
        ),
        TIMEOUT,
    )
    return list(found or [])


def test_quick_fixes_come_before_the_suppression_and_may_edit_another_file(tmp_path: Path) -> None:
    root, train, model = _project(tmp_path)

    async def scenario() -> None:
        async with _Client(root) as client:
            client.open(train, HAZARD)
            [diagnostic] = (await client.diagnostics(train)).diagnostics
            actions = await _actions(client, train, [diagnostic])
            titles = [a.title for a in actions]
            assert titles[0].startswith("Call the uncompiled callable") and "unsafe" in titles[0]
            assert titles[1].startswith('Compile with backend="eager"')
            assert titles[2] == "Suppress CAL001 on this line (# noqa: CAL001)"
            assert all(
                a.kind == types.CodeActionKind.QuickFix and [d.code for d in a.diagnostics or ()] == ["CAL001"]
                for a in actions
            )
            assert not any(a.is_preferred for a in actions)  # unsafe fixes are never preferred

            # The backend fix edits model.py, which is not open.
            [backend] = [a for a in actions if a.title.startswith("Compile")]
            assert backend.edit is not None and set(backend.edit.changes or {}) == {model}
            model_text = _apply(MODEL, backend.edit.changes[model])  # type: ignore[index]
            assert model_text == MODEL.replace("torch.compile(torch.sin)", 'torch.compile(torch.sin, backend="eager")')

            # The editor applies the in-file fix: the finding is gone.
            [uncompiled] = [a for a in actions if a.title.startswith("Call")]
            text = _apply(HAZARD, uncompiled.edit.changes[train])  # type: ignore[union-attr, index]
            assert "y = f.__wrapped__(fwAD.make_dual(x, t))" in text
            client.replace_all(train, text, version=2)
            assert list((await client.diagnostics(train, version=2)).diagnostics) == []

            # Applying the other file's fix instead (the editor opens and edits model.py) clears it too.
            client.replace_all(train, HAZARD, version=3)
            assert (await client.diagnostics(train, version=3)).diagnostics
            client.open(model, model_text)
            while (await client.diagnostics(train)).diagnostics:
                pass
            assert (root / "model.py").read_text() == MODEL  # the server wrote nothing

    _run(scenario())


def test_fix_all_applies_the_safe_fixes_and_the_safe_fix_is_preferred(tmp_path: Path) -> None:
    root, _train, _model = _project(tmp_path)
    (root / "amp.py").write_text(FIXED, encoding="utf-8")
    uri = from_fs_path(str(root / "amp.py"))

    async def scenario() -> None:
        async with _Client(root) as client:
            client.open(uri, AMP)
            diagnostics = (await client.diagnostics(uri)).diagnostics
            assert sorted(d.code for d in diagnostics) == ["CAL003"]  # an invalid config hides CAL002
            actions = await _actions(client, uri, diagnostics)
            assert actions[0].is_preferred and actions[0].title.startswith("Make the dict a list")
            [fix_all] = await _actions(client, uri, [], only=[types.CodeActionKind.SourceFixAll])
            assert fix_all.kind == FIX_ALL_KIND
            text = _apply(AMP, fix_all.edit.changes[uri])  # type: ignore[union-attr, index]
            assert 'fc.backward_pass_autocast = [{"device_type": "cpu"}]' in text
            client.replace_all(uri, text, version=2)
            [cal002] = (await client.diagnostics(uri, version=2)).diagnostics  # now the config is valid
            assert cal002.code == "CAL002"
            [fix_all] = await _actions(client, uri, [], only=[types.CodeActionKind.SourceFixAll])
            text = _apply(text, fix_all.edit.changes[uri])  # type: ignore[union-attr, index]
            assert '        with fc.patch(backward_pass_autocast="off"):\n            loss = step(x).sum()\n' in text
            client.replace_all(uri, text, version=3)
            assert list((await client.diagnostics(uri, version=3)).diagnostics) == []
            # Nothing left to fix: no source action; asked for quick fixes only: none either.
            assert await _actions(client, uri, [], only=[types.CodeActionKind.SourceFixAll]) == []

    _run(scenario())


def test_no_fix_for_a_buffer_changed_since_the_analysis(tmp_path: Path) -> None:
    root, train, _model = _project(tmp_path)

    async def scenario() -> None:
        async with _Client(root, debounce_ms=60_000) as client:
            client.open(train, HAZARD)
            [diagnostic] = (await client.diagnostics(train)).diagnostics
            # An edit elsewhere; its analysis waits for the debounce, the code action comes first.
            client.replace_all(train, "# a comment\n" + HAZARD, version=2)
            actions = await _actions(client, train, [diagnostic])
            assert [a.title for a in actions] == ["Suppress CAL001 on this line (# noqa: CAL001)"]

    _run(scenario())


def test_the_noqa_quick_fix_never_edits_a_string_literal(tmp_path: Path) -> None:
    """``# noqa:`` in a string is text: the suppression goes into a comment after it."""
    root, _train, _model = _project(tmp_path)
    source = 'import torch._functorch.config as fc\nfc.backward_pass_autocast = "of"; tag = "# noqa: CAL999"\n'
    (root / "tagged.py").write_text(source, encoding="utf-8")
    uri = from_fs_path(str(root / "tagged.py"))

    async def scenario() -> None:
        async with _Client(root) as client:
            client.open(uri, source)
            [diagnostic] = (await client.diagnostics(uri)).diagnostics
            assert diagnostic.code == "CAL003"
            [noqa] = [a for a in await _actions(client, uri, [diagnostic]) if a.title.startswith("Suppress")]
            text = _apply(source, noqa.edit.changes[uri])  # type: ignore[union-attr, index]
            assert text.splitlines()[1] == 'fc.backward_pass_autocast = "of"; tag = "# noqa: CAL999"  # noqa: CAL003'
            client.replace_all(uri, text, version=2)
            assert list((await client.diagnostics(uri, version=2)).diagnostics) == []

    _run(scenario())
