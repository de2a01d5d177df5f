"""The fixture projects of issue 47 (run-time switches, code that never runs, the shapes real
training code hides hazards in) give the same findings in every front end: the CLI without a
cache, with a cold cache and a warm one (messages and ``conditions`` included), ``flake8 --select
CAL`` and the language server's diagnostics once its project pass is done."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from pygls.uris import from_fs_path, to_fs_path

from compile_ad_lint.testing import expected_in

from .test_lsp import TIMEOUT, _Client

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "projects"
PROJECTS = (
    "args_helper",
    "aux_indexed",
    "block_trainer",
    "dual_params",
    "fabric_kwargs",
    "jvp_plugin",
    "never_called",
    "policy_accelerate",
    "regional_compile",
    "titan_like",
    "vq_discriminator",
)
BIN = Path(sys.executable).parent
#: How long the language server stays silent before its diagnostics are taken as final.
QUIET_SECONDS = 5.0
FLAKE8_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]+\d+) ")


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    destination = tmp_path_factory.mktemp("issue47")
    for name in PROJECTS:
        shutil.copytree(FIXTURES / name, destination / name)
    (destination / "pyproject.toml").write_text("[tool.compile-ad-lint]\n", encoding="utf-8")
    return destination


def _cli(root: Path, *options: str) -> list[dict]:
    completed = subprocess.run(
        [sys.executable, "-m", "compile_ad_lint", "check", ".", "--format", "json", *options],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 1, completed.stderr
    return json.loads(completed.stdout)["findings"]


def _keys(findings: list[dict]) -> set[tuple[str, int, int, str]]:
    return {(os.path.normpath(f["path"]), f["line"], f["column"], f["code"]) for f in findings}


def _whole(findings: list[dict]) -> list[tuple]:
    return sorted(
        (f["path"], f["line"], f["column"], f["code"], f["message"], json.dumps(f["conditions"])) for f in findings
    )


def test_cli_cold_warm_flake8_and_language_server_agree(root: Path) -> None:
    reference = _cli(root, "--no-cache")
    expected = {
        (os.path.relpath(path, root), line, code)
        for file in root.rglob("*.py")
        for path, line, code in expected_in(file)
    }
    assert {(os.path.normpath(f["path"]), f["line"], f["code"]) for f in reference} == expected
    assert any(f["conditions"] for f in reference), "the switch fixtures name their conditions"

    cold, warm = _cli(root), _cli(root)
    assert _whole(cold) == _whole(reference)
    assert _whole(warm) == _whole(reference)

    flake8 = subprocess.run(
        [str(BIN / "flake8"), "--select", "CAL", "."], cwd=root, capture_output=True, text=True, timeout=600
    )
    assert "Traceback" not in flake8.stderr, flake8.stderr
    found = set()
    for line in flake8.stdout.splitlines():
        match = FLAKE8_LINE.match(line)
        assert match, line
        found.add((os.path.normpath(match["path"]), int(match["line"]), int(match["col"]), match["code"]))
    assert found == _keys(reference)  # flake8 prints its 0-based columns 1-based, as the CLI does

    files = sorted({Path(f["path"]) for f in reference})
    shown = asyncio.run(asyncio.wait_for(_language_server(root, files), 8 * TIMEOUT))
    # An editor shows the headline with its details under it.
    assert shown == {
        (os.path.normpath(f["path"]), f["line"], f["column"], f["code"], "\n".join([f["message"], *f["details"]]))
        for f in reference
    }


async def _language_server(root: Path, files: list[Path]) -> set[tuple[str, int, int, str, str]]:
    """The diagnostics of ``files`` (opened with their saved text) once the server is idle."""
    async with _Client(root, progress=True) as client:
        uris = [from_fs_path(str(root / file)) for file in files]
        for uri, file in zip(uris, files):
            client.open(uri, (root / file).read_text(encoding="utf-8"))
        # Each document's first publish, then quiet: no pass (the open files', the project's) is
        # still running; the latest publish of each document is what the editor shows.
        latest = {uri: await client.diagnostics(uri) for uri in uris}
        while True:
            try:
                await asyncio.wait_for(client.progress.get(), QUIET_SECONDS)
            except asyncio.TimeoutError:
                break
        shown: set[tuple[str, int, int, str, str]] = set()
        for uri in uris:
            queue = client.published[uri]
            while not queue.empty():
                latest[uri] = queue.get_nowait()
            path = os.path.normpath(os.path.relpath(to_fs_path(uri), root))
            for diagnostic in latest[uri].diagnostics:
                start = diagnostic.range.start
                shown.add((path, start.line + 1, start.character + 1, str(diagnostic.code), diagnostic.message))
        return shown
