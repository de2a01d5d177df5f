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

from .test_lsp import TIMEOUT, _Client, _run

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


def _two_scripts(root: Path) -> tuple[str, str]:
    """``train.py`` with a hazard and ``other.py``, both importing the compiled helper."""
    (root / "pyproject.toml").write_text("[tool.compile-ad-lint]\n")
    (root / "helpers.py").write_text(COMPILED_HELPERS)
    (root / "train.py").write_text(SCRIPT)
    (root / "other.py").write_text(SCRIPT)
    return from_fs_path(str(root / "train.py")), from_fs_path(str(root / "other.py"))


def test_a_buffer_holding_a_lone_surrogate_stops_no_other_diagnostics(tmp_path: Path) -> None:
    """JSON carries ``\\ud800``: that buffer is CAL900 (no text a parser takes), the others go on."""
    train, other = _two_scripts(tmp_path)

    async def scenario() -> None:
        async with _Client(tmp_path) as client:
            client.open(other, SCRIPT + 'broken = "\ud800"\n')
            [failure] = (await client.diagnostics(other)).diagnostics
            assert failure.code == "CAL900"
            client.open(train, SCRIPT)
            [diagnostic] = (await client.diagnostics(train)).diagnostics
            assert diagnostic.code == "CAL001"
            client.replace_all(train, SCRIPT.replace("step(fwAD", "(fwAD"), version=2)
            assert list((await client.diagnostics(train, version=2)).diagnostics) == []

    _run(scenario())


def test_an_open_document_whose_path_is_a_symlink_loop_stops_no_other_diagnostics(tmp_path: Path) -> None:
    train, _other = _two_scripts(tmp_path)
    (tmp_path / "loop.py").symlink_to(tmp_path / "loop.py")
    loop = from_fs_path(str(tmp_path / "loop.py"))

    async def scenario() -> None:
        async with _Client(tmp_path) as client:
            client.open(loop, SCRIPT)
            client.open(train, SCRIPT)
            [diagnostic] = (await client.diagnostics(train)).diagnostics
            assert diagnostic.code == "CAL001"
            client.replace_all(train, SCRIPT.replace("step(fwAD", "(fwAD"), version=2)
            assert list((await client.diagnostics(train, version=2)).diagnostics) == []

    _run(scenario())


def test_a_file_deleted_while_open_is_still_analyzed(tmp_path: Path) -> None:
    train, _other = _two_scripts(tmp_path)

    async def scenario() -> None:
        async with _Client(tmp_path) as client:
            client.open(train, SCRIPT)
            assert len((await client.diagnostics(train)).diagnostics) == 1
            (tmp_path / "train.py").unlink()
            client.replace_all(train, SCRIPT.replace("step(fwAD", "(fwAD"), version=2)
            assert list((await client.diagnostics(train, version=2)).diagnostics) == []
            client.replace_all(train, SCRIPT, version=3)
            assert len((await client.diagnostics(train, version=3)).diagnostics) == 1

    _run(scenario())


def test_a_file_open_through_a_symlink_and_as_its_target_updates_both(tmp_path: Path) -> None:
    train, _other = _two_scripts(tmp_path)
    (tmp_path / "alias.py").symlink_to(tmp_path / "train.py")
    alias = from_fs_path(str(tmp_path / "alias.py"))

    async def scenario() -> None:
        async with _Client(tmp_path) as client:
            client.open(train, SCRIPT)
            assert len((await client.diagnostics(train)).diagnostics) == 1
            client.open(alias, SCRIPT)
            assert len((await client.diagnostics(alias)).diagnostics) == 1
            # The edit through the link is what is analyzed, for both documents.
            client.replace_all(alias, SCRIPT.replace("step(fwAD", "(fwAD"), version=2)
            assert list((await client.diagnostics(alias, version=2)).diagnostics) == []
            while (await client.diagnostics(train)).diagnostics:
                pass
            client.replace_all(train, SCRIPT, version=2)
            assert len((await client.diagnostics(train, version=2)).diagnostics) == 1

    _run(scenario())


def test_an_edit_stops_a_long_first_pass(tmp_path: Path) -> None:
    """The first analysis of an opened file that takes minutes (a call graph whose values grow,
    with a walk budget raised far beyond the default) gives way to the edit that replaces it: the
    edit's diagnostics come in seconds, not after the first pass."""
    from robustness.test_analysis_bounds import _growing_call_graph

    (tmp_path / "pyproject.toml").write_text("[tool.compile-ad-lint]\nmax-function-walks = 2000000\n")
    (tmp_path / "helpers.py").write_text(COMPILED_HELPERS)
    (tmp_path / "graph.py").write_text(_growing_call_graph())
    graph = from_fs_path(str(tmp_path / "graph.py"))

    async def scenario() -> None:
        async with _Client(tmp_path) as client:
            client.open(graph, _growing_call_graph())
            await asyncio.sleep(2.0)  # the first pass is walking
            client.replace_all(graph, SCRIPT, version=2)
            edited = asyncio.get_running_loop().time()
            [diagnostic] = (await client.diagnostics(graph, version=2)).diagnostics
            assert diagnostic.code == "CAL001"
            assert asyncio.get_running_loop().time() - edited < 20

    _run(scenario())
