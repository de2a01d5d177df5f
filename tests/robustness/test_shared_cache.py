"""One cache for every front end: the CLI, flake8 and the language server share
``.compile_ad_lint_cache/`` (the only thing any of them writes) and report the same findings."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from robustness_helpers import FIXTURES, assert_contract, run_cli, tree_digest

from compile_ad_lint.cache import CACHE_DIRECTORY, EntryMemory, SummaryCache
from compile_ad_lint.summary.outline import ModuleOutline

from .test_cache_security import _lsp_message, _read_lsp_messages

BIN = Path(sys.executable).parent


def _entries(project: Path) -> dict[str, int]:
    return {str(p.relative_to(project)): p.stat().st_mtime_ns for p in (project / CACHE_DIRECTORY).glob("??/*.json")}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "gpt"
    shutil.copytree(FIXTURES / "projects" / "gpt_train", root)
    (root / "pyproject.toml").write_text("[tool.compile-ad-lint]\n")
    return root


def _flake8(project: Path, *paths: str) -> set[tuple[str, int, int, str]]:
    completed = subprocess.run(
        [str(BIN / "flake8"), "--select", "CAL", *paths], cwd=project, capture_output=True, text=True, timeout=300
    )
    assert "Traceback" not in completed.stderr, completed.stderr
    found = set()
    for line in completed.stdout.splitlines():
        path, row, column, rest = line.split(":", 3)
        found.add((Path(path).name, int(row), int(column), rest.split()[0]))
    return found


def _cli(project: Path, *extra: str) -> set[tuple[str, int, int, str]]:
    result = run_cli(["check", ".", "--format", "json", *extra], project)
    assert_contract(result, (1,))
    return {(Path(f["path"]).name, f["line"], f["column"], f["code"]) for f in result.findings}


def test_flake8_after_a_warm_cli_run_is_served_from_the_cache(project):
    expected = _cli(project, "--no-cache")
    assert _cli(project) == expected
    before = _entries(project)
    assert before
    assert _flake8(project, ".") == expected
    assert _flake8(project, "train.py") == {f for f in expected if f[0] == "train.py"}
    assert _entries(project) == before, "flake8 re-analyzed what the CLI had cached"


def test_flake8_cold_writes_the_cache_the_cli_then_uses(project):
    sources = tree_digest(project)
    found = _flake8(project, ".")
    assert _entries(project), "flake8 wrote no cache"
    assert tree_digest(project) == sources, "flake8 wrote outside the cache"
    warm = run_cli(["check", ".", "--format", "json"], project)
    assert_contract(warm, (1,))
    assert warm.document["stats"]["parsed"] == 0
    assert {(Path(f["path"]).name, f["line"], f["column"], f["code"]) for f in warm.findings} == found


def _lsp_open(project: Path, path: Path) -> list[dict]:
    """Start the language server at ``project``, open ``path``, return its first diagnostics."""
    server = subprocess.Popen(
        [sys.executable, "-m", "compile_ad_lint", "lsp"],
        cwd=project,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        for message in (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"processId": None, "rootUri": project.as_uri(), "capabilities": {}},
            },
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didOpen",
                "params": {
                    "textDocument": {
                        "uri": path.as_uri(),
                        "languageId": "python",
                        "version": 1,
                        "text": path.read_text(),
                    }
                },
            },
        ):
            server.stdin.write(_lsp_message(message))
        server.stdin.flush()
        published = _read_lsp_messages(server.stdout, "textDocument/publishDiagnostics", time.monotonic() + 120)
        server.stdin.write(
            _lsp_message({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
            + _lsp_message({"jsonrpc": "2.0", "method": "exit"})
        )
        server.stdin.flush()
        server.wait(timeout=60)
    finally:
        server.kill()
        server.wait()
    return published["params"]["diagnostics"]


def test_language_server_reads_and_writes_the_same_cache(project):
    pytest.importorskip("pygls")
    expected = {(line, column, code) for name, line, column, code in _cli(project, "--no-cache") if name == "train.py"}
    shutil.rmtree(project / CACHE_DIRECTORY, ignore_errors=True)
    sources = tree_digest(project)
    train = project / "train.py"
    diagnostics = _lsp_open(project, train)
    found = {(d["range"]["start"]["line"] + 1, d["range"]["start"]["character"] + 1, d["code"]) for d in diagnostics}
    assert found == expected
    assert _entries(project), "the language server wrote no cache"
    assert tree_digest(project) == sources, "the language server wrote outside the cache"
    written = _entries(project)
    assert _outlines(project, written), "the language server stored no module outline"
    document = json.loads(run_cli(["check", "train.py", "--format", "json"], project).stdout)
    assert document["stats"]["analyzed"] >= 1
    added = {entry: stamp for entry, stamp in _entries(project).items() if entry not in written}
    # Outlines (a whole-file parse each) are the summaries kept on disk; block summaries are
    # rebuilt from them (decoding one took longer than building it).
    assert not _outlines(project, added), "the CLI re-parsed files whose outline the language server had cached"


def test_write_behind_keeps_entries_in_memory_until_flushed(tmp_path):
    """The language server's memory writes behind: a stored entry serves loads at once and reaches
    the directory (where another process finds it) only when flushed, in the order stored."""
    memory = EntryMemory(write_behind=True)
    cache = SummaryCache.open(tmp_path, memory=memory)
    assert cache is not None
    outline = ModuleOutline("pkg.mod", False, (), ())
    other = ModuleOutline("pkg.other", False, (), ())
    cache.store("ab" * 32, outline)
    cache.store("cd" * 32, other)
    cache.store("ef" * 32, other, to_disk=False)
    assert cache.load("ab" * 32, ModuleOutline) is outline
    fresh = SummaryCache.open(tmp_path, create=False, warn=None)
    assert fresh is not None
    assert fresh.load("ab" * 32, ModuleOutline) is None, "written before the flush"
    assert memory.flush() == 2, "a memory-only entry was queued for the disk"
    assert fresh.load("ab" * 32, ModuleOutline) == outline
    assert fresh.load("cd" * 32, ModuleOutline) == other
    assert fresh.load("ef" * 32, ModuleOutline) is None
    assert memory.flush() == 0, "a flush writes each entry once"


def test_write_behind_writes_a_key_stored_again_once_and_can_stop_between_entries(tmp_path):
    """A key stored again before the flush is written once, with the latest value (a root's result
    is stored at every keystroke's analysis); a flush told to stop leaves the rest for the next."""
    memory = EntryMemory(write_behind=True)
    cache = SummaryCache.open(tmp_path, memory=memory)
    assert cache is not None
    first, second, third = (ModuleOutline(f"pkg.m{i}", False, (), ()) for i in range(3))
    cache.store("ab" * 32, first)
    cache.store("cd" * 32, second)
    cache.store("ab" * 32, third)  # the same key again: its latest value
    asked = []

    def stop() -> bool:
        asked.append(True)
        return len(asked) > 1  # write one entry, then stop

    assert memory.flush(stop=stop) == 1
    fresh = SummaryCache.open(tmp_path, create=False, warn=None)
    assert fresh is not None
    assert fresh.load("cd" * 32, ModuleOutline) == second, "the oldest store was not written first"
    assert fresh.load("ab" * 32, ModuleOutline) is None, "written after the flush stopped"
    assert memory.flush() == 1
    assert fresh.load("ab" * 32, ModuleOutline) == third
    assert memory.flush() == 0


def _results_on_disk(project: Path) -> list:
    """Every root result in ``project``'s cache directory, read as another process would."""
    from compile_ad_lint.api import RootResult

    cache = SummaryCache.open(project, create=False, warn=None)
    assert cache is not None
    found = [cache.load(path.stem, RootResult) for path in (project / CACHE_DIRECTORY).glob("??/*.json")]
    return [result for result in found if result is not None]


def test_results_that_read_an_unsaved_buffer_stay_off_the_disk(project, monkeypatch):
    """A check with an editor buffer that differs from the saved file (the language server's, a
    ``flake8 -``) keeps the results that read it in memory: on disk they would replace the saved
    contents' results under the same keys, and the next CLI run would analyze everything again. A
    buffer equal to the saved file is no reason not to write."""
    from compile_ad_lint import load_config
    from compile_ad_lint.api import Analyzer
    from compile_ad_lint.cache import content_digest

    monkeypatch.chdir(project)
    train = (project / "train.py").resolve()
    saved = train.read_bytes()
    edited = saved + b"\n# typed, not saved\n"
    config = load_config(project)
    memory = EntryMemory()
    unsaved = Analyzer(config, jobs=1, memory=memory).check(["."], sources={train: edited})
    assert any(path == str(train) for path, _ in unsaved.digests)
    on_disk = _results_on_disk(project)
    assert on_disk, "results that read only saved files were not written"
    assert not any((str(train), content_digest(edited)) in result.dependencies for result in on_disk), (
        "a result that read the unsaved buffer was written"
    )
    # In memory they serve the next check of the same buffer.
    assert Analyzer(config, jobs=1, memory=memory).check(["."], sources={train: edited}).findings == unsaved.findings
    Analyzer(config, jobs=1, memory=EntryMemory()).check(["."], sources={train: saved})
    assert any((str(train), content_digest(saved)) in result.dependencies for result in _results_on_disk(project))


def test_a_check_of_unsaved_contents_spreads_its_roots_over_workers(project, monkeypatch):
    """A check with a buffer (``check -``, flake8's ``-`` and single-file runs) analyzes the
    project like ``check .``: its roots go to worker processes as there (they all stayed in this
    one), with the same findings as one process, and the results that read the unsaved buffer
    still stay off the disk (this process stores the workers' results)."""
    from compile_ad_lint import api, load_config
    from compile_ad_lint.cache import content_digest
    from compile_ad_lint.pipeline.run import Run

    for copy in range(4):
        shutil.copy(project / "train.py", project / f"train_{copy}.py")
    monkeypatch.chdir(project)
    spread: list[int] = []
    original = Run._compute_in_workers

    def counted(run, tasks):
        spread.append(len(tasks))
        return original(run, tasks)

    monkeypatch.setattr(Run, "_compute_in_workers", counted)
    train = (project / "train.py").resolve()
    edited = train.read_bytes() + b"\n# typed, not saved\n"
    config = load_config(project)
    parallel = api.Analyzer(config, jobs=2, memory=EntryMemory()).check(["."], sources={train: edited})
    assert spread and spread[0] >= 5, "the roots were not spread over workers"
    spread.clear()
    alone = api.Analyzer(config, jobs=1, use_cache=False).check(["."], sources={train: edited})
    assert not spread
    assert parallel.findings == alone.findings
    flagged = {f.location.file.name for f in parallel.findings if f.code == "CAL002"}
    assert {"train.py", *(f"train_{copy}.py" for copy in range(4))} <= flagged
    on_disk = _results_on_disk(project)
    assert any(Path(path).name == "train_0.py" for result in on_disk for path, _ in result.dependencies)
    assert not any((str(train), content_digest(edited)) in result.dependencies for result in on_disk), (
        "a result that read the unsaved buffer was written"
    )


def _outlines(project: Path, entries: dict[str, int]) -> list[str]:
    """The entries among ``entries`` that hold a module outline."""
    cache = SummaryCache.open(project, create=False, warn=None)
    assert cache is not None
    return [entry for entry in entries if cache.load(Path(entry).stem, ModuleOutline) is not None]


def test_language_server_first_open_after_a_cli_run_shows_what_the_cli_showed(project):
    """The whole project's recorded findings serve the first open: the same messages as the CLI's
    (a finding also reached from other entry points reads the same), and nothing is re-analyzed."""
    pytest.importorskip("pygls")
    result = run_cli(["check", ".", "--format", "json"], project)
    assert_contract(result, (1,))
    expected = sorted(  # the diagnostic: the headline, then the details under it
        (f["line"], f["column"], f["code"], "\n".join([f["message"], *f["details"]]))
        for f in result.findings
        if f["path"] == "train.py"
    )
    assert expected
    before = _entries(project)
    diagnostics = _lsp_open(project, project / "train.py")
    found = sorted(
        (d["range"]["start"]["line"] + 1, d["range"]["start"]["character"] + 1, d["code"], d["message"])
        for d in diagnostics
    )
    assert found == expected
    assert _entries(project) == before, "the first open re-analyzed what the CLI had recorded"
