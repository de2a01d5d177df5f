"""The language server under a changing project and hostile buffers, end to end with a real client:
a package marker created during a session, buffers no analysis can take, files deleted or reached
through symlinks while open, an edit during the first pass, a configuration that cannot be read."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from lsprotocol import types
from pygls.uris import from_fs_path
from test_lsp import TIMEOUT, _Client, _run

COMPILED_HELPERS = "import torch\nstep = torch.compile(torch.sin)\n"
PLAIN_HELPERS = "import torch\nstep = torch.sin\n"
SCRIPT = """\
import torch.autograd.forward_ad as fwAD
from helpers import step

def run(x, t):
    with fwAD.dual_level():
        return step(fwAD.make_dual(x, t))
"""


def _scripts_project(root: Path) -> str:
    """A root ``helpers.py`` that compiles and a ``scripts/helpers.py`` that does not: which one
    ``scripts/train.py`` imports depends on whether ``scripts/`` is a package."""
    (root / "pyproject.toml").write_text("[tool.compile-ad-lint]\n")
    (root / "helpers.py").write_text(COMPILED_HELPERS)
    (root / "scripts").mkdir()
    (root / "scripts" / "helpers.py").write_text(PLAIN_HELPERS)
    (root / "scripts" / "train.py").write_text(SCRIPT)
    return from_fs_path(str(root / "scripts" / "train.py"))


def test_a_package_marker_created_during_a_session_changes_what_an_import_finds(tmp_path: Path) -> None:
    """``scripts/__init__.py`` created while the server runs: ``scripts/train.py`` is then module
    ``scripts.train``, its imports start at the project root, and it reaches the compiled helper."""
    train = _scripts_project(tmp_path)

    async def scenario() -> None:
        async with _Client(tmp_path) as client:
            client.open(train, SCRIPT)
            assert list((await client.diagnostics(train)).diagnostics) == []
            (tmp_path / "scripts" / "__init__.py").write_text("")
            client.save(train)
            [diagnostic] = (await client.diagnostics(train)).diagnostics
            assert diagnostic.code == "CAL001"
            (tmp_path / "scripts" / "__init__.py").unlink()
            client.replace_all(train, SCRIPT + "\n", version=2)
            assert list((await client.diagnostics(train, version=2)).diagnostics) == []

    _run(scenario())


def test_a_configuration_nested_too_deeply_is_shown_and_diagnostics_go_on(tmp_path: Path) -> None:
    """A 3,000-deep array in the tool's section: a message naming the file, defaults are used."""
    (tmp_path / "pyproject.toml").write_text("[tool.compile-ad-lint]\nselect = " + "[" * 3000 + "]" * 3000 + "\n")
    (tmp_path / "helpers.py").write_text(COMPILED_HELPERS)
    (tmp_path / "train.py").write_text(SCRIPT)
    train = from_fs_path(str(tmp_path / "train.py"))

    async def scenario() -> None:
        async with _Client(tmp_path) as client:
            client.open(train, SCRIPT)
            [diagnostic] = (await client.diagnostics(train)).diagnostics
            assert diagnostic.code == "CAL001"
            message = await asyncio.wait_for(client.messages.get(), TIMEOUT)
            assert message.type == types.MessageType.Warning
            assert str(tmp_path / "pyproject.toml") in message.message and "nested too deeply" in message.message

    _run(scenario())
