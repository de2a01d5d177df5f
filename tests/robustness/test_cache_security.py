"""The cache never runs or trusts what a checked repository ships (issue: data-only, exact cache).

Every attack here is planted the way a repository could plant it, and checked through the real
front ends: the CLI, flake8 and the language server.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import pickle
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from robustness_helpers import (
    HAZARD,
    HAZARD_COLUMN,
    HAZARD_LINE,
    assert_contract,
    finding_keys,
    run_cli,
    tree_digest,
    write,
)

from compile_ad_lint import Config, __version__, deepstack
from compile_ad_lint.api import Analyzer, RootResult
from compile_ad_lint.cache import CACHE_DIRECTORY, MARKER, SummaryCache, build_digest, codec
from compile_ad_lint.summary.model import BlockSummary, Call, Const, DictLiteral, ListLiteral, Ref, Span, Symbol

BIN = Path(sys.executable).parent
HAZARD_FINDING = ("hazard.py", HAZARD_LINE, HAZARD_COLUMN, "CAL001")


class _Exploit:
    """Unpickling this creates ``sentinel``: proof that a cache entry was executed."""

    def __init__(self, sentinel: Path) -> None:
        self.sentinel = sentinel

    def __reduce__(self):
        return (os.system, (f"touch {self.sentinel}",))


def _findings(result) -> set[tuple[str, int, int, str]]:
    return {(Path(f["path"]).name, f["line"], f["column"], f["code"]) for f in result.findings}


def _old_key(kind: str, source: bytes, module: str) -> str:
    """The outline key of the pickle-based cache: computable by anyone from the file's bytes."""
    digest = hashlib.sha256()
    digest.update(f"{__version__}\0{2}\0{module}\0{False}\0".encode())
    digest.update(kind.encode() + b"\0" + source)
    return digest.hexdigest()


def _plant_pickles(project: Path, sentinel: Path) -> None:
    """Pickles under every name the old and the new layout could look for, plus a forged marker."""
    cache = project / CACHE_DIRECTORY
    payload = pickle.dumps(_Exploit(sentinel))
    source = (project / "hazard.py").read_bytes()
    for key in (_old_key("outline", source, "hazard"), hashlib.sha256(source).hexdigest()):
        for name in (f"{key}.pickle", f"{key}.json"):
            write(cache, {f"{key[:2]}/{name}": payload})
    write(
        cache,
        {
            ".gitignore": "*\n",
            MARKER: json.dumps({"tool": "compile-ad-lint", "format": 3, "device": 1, "inode": 2, "secret": "00" * 32}),
        },
    )


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, Path]:
    project = write(tmp_path / "project", {"hazard.py": HAZARD, "pyproject.toml": "[tool.compile-ad-lint]\n"})
    sentinel = tmp_path / "pwned"
    _plant_pickles(project, sentinel)
    return project, sentinel


def test_planted_pickle_never_runs_from_the_cli(planted):
    project, sentinel = planted
    for _ in range(2):
        result = run_cli(["check", ".", "--format", "json"], project)
        assert_contract(result, (1,))
        assert _findings(result) == {HAZARD_FINDING}
        assert "not using the cache" in result.stderr and "not created here" in result.stderr
    assert not sentinel.exists(), "a cache entry was executed"


def test_planted_pickle_never_runs_from_flake8(planted):
    project, sentinel = planted
    completed = subprocess.run(
        [str(BIN / "flake8"), "--select", "CAL", "hazard.py"], cwd=project, capture_output=True, text=True, timeout=300
    )
    assert "Traceback" not in completed.stderr, completed.stderr
    assert f"hazard.py:{HAZARD_LINE}:{HAZARD_COLUMN}: CAL001" in completed.stdout
    assert not sentinel.exists(), "a cache entry was executed"


def _lsp_message(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read_lsp_messages(stream, wanted: str, deadline: float) -> dict:
    while time.monotonic() < deadline:
        header = b""
        while not header.endswith(b"\r\n\r\n"):
            byte = stream.read(1)
            if not byte:
                raise AssertionError("the server closed its output")
            header += byte
        length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
        message = json.loads(stream.read(length))
        if message.get("method") == wanted:
            return message
    raise AssertionError(f"no {wanted} in time")


def test_planted_pickle_never_runs_from_the_language_server(planted):
    project, sentinel = planted
    pytest.importorskip("pygls")
    uri = (project / "hazard.py").as_uri()
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
                "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": HAZARD}},
            },
        ):
            server.stdin.write(_lsp_message(message))
        server.stdin.flush()
        published = _read_lsp_messages(server.stdout, "textDocument/publishDiagnostics", time.monotonic() + 120)
        assert [d["code"] for d in published["params"]["diagnostics"]] == ["CAL001"]
        server.stdin.write(
            _lsp_message({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
            + _lsp_message({"jsonrpc": "2.0", "method": "exit"})
        )
        server.stdin.flush()
        server.wait(timeout=60)
    finally:
        server.kill()
        server.wait()
    assert not sentinel.exists(), "a cache entry was executed"


# -- the directory must be ours ---------------------------------------------------------------


def _project(tmp_path: Path) -> Path:
    return write(tmp_path / "project", {"hazard.py": HAZARD, "pyproject.toml": "[tool.compile-ad-lint]\n"})


def test_symlinked_cache_directory_is_neither_read_nor_written(tmp_path):
    project = _project(tmp_path)
    target = tmp_path / "elsewhere"
    target.mkdir()
    (project / CACHE_DIRECTORY).symlink_to(target, target_is_directory=True)
    result = run_cli(["check", ".", "--format", "json", "--jobs", "1"], project)
    assert_contract(result, (1,))
    assert _findings(result) == {HAZARD_FINDING}
    assert result.stderr.count("not using the cache") == 1 and "symbolic link" in result.stderr
    assert list(target.iterdir()) == []


def test_cache_path_that_is_a_file_is_reported_once(tmp_path):
    project = _project(tmp_path)
    (project / CACHE_DIRECTORY).write_text("mine\n")
    result = run_cli(["check", ".", "--format", "json"], project)
    assert_contract(result, (1,))
    assert result.stderr.count("not using the cache") == 1 and "not a directory" in result.stderr
    assert (project / CACHE_DIRECTORY).read_text() == "mine\n"


def test_directory_without_marker_is_not_used(tmp_path):
    """Entries in an unmarked directory (an older version's cache, one shipped with the
    repository) are not ours: the directory is neither read nor written. (An empty one is what a
    run killed while creating the cache leaves: it is made again, see below.)"""
    project = _project(tmp_path)
    write(project / CACHE_DIRECTORY, {"ab/ab" + "0" * 62 + ".json": "CAL4 forged"})
    before = tree_digest(project, skip_cache=False)
    result = run_cli(["check", ".", "--format", "json"], project)
    assert_contract(result, (1,))
    assert "lacks the marker" in result.stderr
    assert tree_digest(project, skip_cache=False) == before  # nothing written into it


def test_copied_cache_is_not_trusted_and_clean_recovers(tmp_path):
    original = _project(tmp_path)
    first = run_cli(["check", ".", "--format", "json"], original)
    assert_contract(first, (1,))
    assert first.stderr == ""
    copy = tmp_path / "copy"
    shutil.copytree(original, copy, symlinks=True)
    copied = run_cli(["check", ".", "--format", "json"], copy)
    assert_contract(copied, (1,))
    assert "not created here" in copied.stderr
    assert copied.document["stats"]["cached"] == 0
    cleaned = run_cli(["cache", "clean", "."], copy)
    assert cleaned.returncode == 0 and "removed" in cleaned.stdout, cleaned.describe()
    cold, warm = (run_cli(["check", ".", "--format", "json"], copy) for _ in range(2))
    assert cold.stderr == warm.stderr == ""
    assert warm.document["stats"]["parsed"] == 0 and _findings(warm) == {HAZARD_FINDING}


def test_damaged_marker_stops_cache_use(tmp_path):
    project = _project(tmp_path)
    assert_contract(run_cli(["check", "."], project), (1,))
    (project / CACHE_DIRECTORY / MARKER).write_text("{")
    result = run_cli(["check", ".", "--format", "json"], project)
    assert_contract(result, (1,))
    assert "marker is damaged" in result.stderr and result.document["stats"]["cached"] == 0


def test_entries_it_did_not_write_are_rejected(tmp_path):
    """A forged entry under the right key (a tracked file pulled into a real cache) is ignored."""
    project = _project(tmp_path)
    baseline = run_cli(["check", ".", "--format", "json", "--jobs", "1"], project)
    assert_contract(baseline, (1,))
    silenced = codec.dumps(RootResult((), frozenset(), ()))
    entries = [p for p in (project / CACHE_DIRECTORY).glob("??/*.json")]
    assert entries
    for entry in entries:
        entry.write_bytes(entry.read_bytes()[:5] + b"0" * 64 + b"\n" + silenced)  # its magic, a forged MAC
    forged = run_cli(["check", ".", "--format", "json", "--jobs", "1"], project)
    assert_contract(forged, (1,))
    assert _findings(forged) == {HAZARD_FINDING}
    assert forged.document["stats"]["parsed"] > 0


def test_entries_are_only_read_inside_the_directory(tmp_path):
    """An entry folder replaced by a symlink to elsewhere is not followed, for reading or writing."""
    project = _project(tmp_path)
    assert_contract(run_cli(["check", ".", "--jobs", "1"], project), (1,))
    outside = tmp_path / "outside"
    outside.mkdir()
    for folder in [p for p in (project / CACHE_DIRECTORY).iterdir() if p.is_dir() and len(p.name) == 2]:
        shutil.rmtree(folder)
        folder.symlink_to(outside, target_is_directory=True)
    result = run_cli(["check", ".", "--format", "json", "--jobs", "1"], project)
    assert_contract(result, (1,))
    assert _findings(result) == {HAZARD_FINDING} and result.document["stats"]["parsed"] > 0
    assert list(outside.iterdir()) == []


def test_cache_clean_on_a_symlink_removes_the_link_only(tmp_path):
    project = _project(tmp_path)
    target = tmp_path / "precious"
    write(target, {"keep.txt": "data"})
    (project / CACHE_DIRECTORY).symlink_to(target, target_is_directory=True)
    result = run_cli(["cache", "clean", "."], project)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.describe()
    assert not (project / CACHE_DIRECTORY).is_symlink() and (target / "keep.txt").read_text() == "data"


def test_cache_clean_refuses_what_is_not_a_cache(tmp_path):
    project = _project(tmp_path)
    write(project / CACHE_DIRECTORY, {"notes.txt": "mine"})
    result = run_cli(["cache", "clean", "."], project)
    assert result.returncode == 2 and "does not look like a compile-ad-lint cache" in result.stderr, result.describe()
    assert (project / CACHE_DIRECTORY / "notes.txt").read_text() == "mine"


#: Kill the process (SIGKILL) at a point of the cache's creation, then run the CLI.
_KILLED_WHILE_CREATING = {
    "after mkdir": "c.secrets.token_bytes = lambda n: os.kill(os.getpid(), 9)",
    "before the marker is in place": (
        "replace = c.os.replace\n"
        "c.os.replace = lambda a, b: os.kill(os.getpid(), 9) if str(b).endswith(c.MARKER) else replace(a, b)"
    ),
}


def _killed_while_creating_the_cache(project: Path, point: str) -> None:
    script = f"import os\nimport compile_ad_lint.cache as c\n{_KILLED_WHILE_CREATING[point]}\n"
    script += "from compile_ad_lint.cli import main\nmain(['check', '.'])\n"
    killed = subprocess.run([sys.executable, "-c", script], cwd=project, capture_output=True, timeout=120)
    assert killed.returncode == -9, killed.stderr
    assert (project / CACHE_DIRECTORY).is_dir() and not (project / CACHE_DIRECTORY / MARKER).exists()


@pytest.mark.parametrize("point", sorted(_KILLED_WHILE_CREATING))
def test_a_run_killed_while_creating_the_cache_leaves_no_refused_cache(tmp_path, point):
    project = _project(tmp_path)
    _killed_while_creating_the_cache(project, point)
    first = run_cli(["check", ".", "--format", "json"], project)
    assert_contract(first, (1,))
    assert "not using the cache" not in first.stderr, first.describe()
    again = run_cli(["check", ".", "--format", "json"], project)
    assert_contract(again, (1,))
    assert again.document["stats"]["parsed"] == 0 and _findings(again) == {HAZARD_FINDING}, again.describe()


@pytest.mark.parametrize("point", sorted(_KILLED_WHILE_CREATING))
def test_cache_clean_removes_what_a_run_killed_while_creating_it_left(tmp_path, point):
    project = _project(tmp_path)
    _killed_while_creating_the_cache(project, point)
    result = run_cli(["cache", "clean", "."], project)
    assert result.returncode == 0 and not (project / CACHE_DIRECTORY).exists(), result.describe()


def test_orphaned_temporary_files_are_removed_later(tmp_path):
    project = _project(tmp_path)
    assert_contract(run_cli(["check", "."], project), (1,))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    temporary = project / CACHE_DIRECTORY / "tmp"
    orphan = temporary / f"{dead.pid}-0123456789abcdef.tmp"
    live = temporary / f"{os.getpid()}-fedcba9876543210.tmp"  # a run still writing: kept
    orphan.write_bytes(b"half an entry")
    live.write_bytes(b"being written")
    assert_contract(run_cli(["check", "."], project), (1,))
    assert not orphan.exists() and live.exists()


# -- exact keys ---------------------------------------------------------------------------


def _build_copy(tmp_path: Path, name: str, patch) -> Path:
    import compile_ad_lint

    root = tmp_path / name
    shutil.copytree(
        Path(compile_ad_lint.__file__).parent, root / "compile_ad_lint", ignore=shutil.ignore_patterns("__pycache__")
    )
    patch(root / "compile_ad_lint")
    return root


def _check_with(build: Path, project: Path, *extra: str) -> set:
    completed = subprocess.run(
        [sys.executable, "-m", "compile_ad_lint", "check", ".", "--format", "json", "--jobs", "1", *extra],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(build)},
    )
    assert completed.returncode in (0, 1) and "Traceback" not in completed.stderr, completed.stderr
    return {(f["line"], f["code"]) for f in json.loads(completed.stdout)["findings"]}


def test_builds_with_the_same_version_do_not_share_entries(tmp_path):
    """An older build's cached CAL001 is not reported by a newer build that finds none."""
    project = _project(tmp_path)

    def blind(package: Path) -> None:  # the same version string, an interpreter that finds nothing
        interpreter = package / "linking" / "interpreter.py"
        text = interpreter.read_text()
        marker = "    def analyze_module(self, path: Path, mentions: frozenset[str] = frozenset()) -> None:\n"
        assert marker in text
        interpreter.write_text(text.replace(marker, marker + "        return\n", 1))

    older = _build_copy(tmp_path, "older", lambda package: None)
    newer = _build_copy(tmp_path, "newer", blind)
    assert _check_with(older, project) == {(HAZARD_LINE, "CAL001")}
    assert _check_with(newer, project) == _check_with(newer, project, "--no-cache") == set()
    assert _check_with(older, project) == {(HAZARD_LINE, "CAL001")}


def test_build_digest_covers_the_package_sources():
    assert len(build_digest()) == 64 and build_digest() == build_digest()


# -- results equal --no-cache -------------------------------------------------------------


MAIN_IMPORTING_HELPERS = """\
import torch.autograd.forward_ad as fwAD
from helpers import step

def run(x, t):
    with fwAD.dual_level():
        return step(fwAD.make_dual(x, t))
"""
HELPERS = """\
import torch

@torch.compile
def step(x):
    return x * 2
"""


def test_module_created_after_the_first_run(tmp_path):
    project = write(
        tmp_path / "project", {"main.py": MAIN_IMPORTING_HELPERS, "pyproject.toml": "[tool.compile-ad-lint]\n"}
    )
    first = run_cli(["check", "main.py", "--format", "json"], project)
    assert_contract(first, (0,))
    write(project, {"helpers.py": HELPERS})
    again = run_cli(["check", "main.py", "--format", "json"], project)
    fresh = run_cli(["check", "main.py", "--format", "json", "--no-cache"], project)
    assert _findings(again) == _findings(fresh) == {("main.py", 6, 16, "CAL001")}


COMPILED_STEP = "import torch\nstep = torch.compile(torch.sin)\n"
PLAIN_STEP = "import torch\nstep = torch.sin\n"
SCRIPT_IMPORTING = MAIN_IMPORTING_HELPERS  # from helpers import step; step(dual) inside dual_level()


def _add_scripts_marker(project: Path) -> None:
    (project / "scripts" / "__init__.py").write_text("")


def _remove_scripts_marker(project: Path) -> None:
    (project / "scripts" / "__init__.py").unlink()


def _add_lib_marker(project: Path) -> None:
    (project / "lib" / "__init__.py").write_text("")


def _create_source_layout(project: Path) -> None:
    write(project, {"src/mypkg/helpers.py": COMPILED_STEP})


def _remove_source_layout(project: Path) -> None:
    shutil.rmtree(project / "src")


def _retarget_link(project: Path) -> None:
    (project / "helpers.py").unlink()
    (project / "helpers.py").symlink_to(Path("impl") / "b.py")


#: (files, the path checked, what changes between the runs, the findings before and after): a
#: script's identity (two ``helpers.py``: the marker decides which one it imports), an imported
#: module's identity (its imports start at the project root once its folder is a package, and find
#: another ``impl.py``), an import root created and removed.
LAYOUT_CHANGES = {
    "scripts marker created": (
        {"helpers.py": COMPILED_STEP, "scripts/helpers.py": PLAIN_STEP, "scripts/train.py": SCRIPT_IMPORTING},
        "scripts/train.py",
        _add_scripts_marker,
        0,
        1,
    ),
    "scripts marker removed": (
        {
            "helpers.py": PLAIN_STEP,
            "scripts/__init__.py": "",
            "scripts/helpers.py": COMPILED_STEP,
            "scripts/train.py": SCRIPT_IMPORTING,
        },
        "scripts/train.py",
        _remove_scripts_marker,
        0,
        1,
    ),
    "imported package marker created": (
        {
            "lib/helpers.py": "from impl import step\n",
            "lib/impl.py": PLAIN_STEP,
            "impl.py": COMPILED_STEP,
            "train.py": SCRIPT_IMPORTING.replace("from helpers", "from lib.helpers"),
        },
        "train.py",
        _add_lib_marker,
        0,
        1,
    ),
    "source layout created": (
        {"train.py": SCRIPT_IMPORTING.replace("from helpers", "from mypkg.helpers")},
        "train.py",
        _create_source_layout,
        0,
        1,
    ),
    "source layout removed": (
        {
            "train.py": SCRIPT_IMPORTING.replace("from helpers", "from mypkg.helpers"),
            "src/mypkg/helpers.py": COMPILED_STEP,
        },
        "train.py",
        _remove_source_layout,
        1,
        0,
    ),
}


@pytest.mark.parametrize("change", sorted(LAYOUT_CHANGES))
def test_a_layout_change_after_a_run_gives_what_no_cache_gives(tmp_path, change):
    files, checked, mutate, before, after = LAYOUT_CHANGES[change]
    project = write(tmp_path / "project", {"pyproject.toml": "[tool.compile-ad-lint]\n", **files})
    first = run_cli(["check", checked, "--format", "json"], project)
    assert_contract(first)
    assert len(first.findings) == before, first.describe()
    mutate(project)
    again = run_cli(["check", checked, "--format", "json"], project)
    fresh = run_cli(["check", checked, "--format", "json", "--no-cache"], project)
    assert _findings(again) == _findings(fresh), again.describe()
    assert len(fresh.findings) == after, fresh.describe()


@pytest.mark.parametrize("checked", ["train.py", "."])
def test_a_symlinked_module_re_targeted_after_a_run(tmp_path, checked):
    """The dependency is recorded under the link's target, whose contents do not change: the
    link itself must be part of what the result depends on."""
    project = write(
        tmp_path / "project",
        {"pyproject.toml": "[tool.compile-ad-lint]\n", "impl/a.py": COMPILED_STEP, "impl/b.py": PLAIN_STEP},
    )
    write(project, {"train.py": SCRIPT_IMPORTING})
    (project / "helpers.py").symlink_to(Path("impl") / "a.py")
    first = run_cli(["check", checked, "--format", "json"], project)
    assert_contract(first, (1,))
    assert ("train.py", 6, 16, "CAL001") in _findings(first)
    _retarget_link(project)
    again = run_cli(["check", checked, "--format", "json"], project)
    fresh = run_cli(["check", checked, "--format", "json", "--no-cache"], project)
    assert _findings(again) == _findings(fresh), again.describe()
    assert ("train.py", 6, 16, "CAL001") not in _findings(fresh)


def test_a_cache_written_by_another_interpreter_is_not_served(tmp_path, monkeypatch, capsys):
    """Two Pythons (or LibCST versions) sharing a project's cache: each gets its own entries (3.12
    parses PEP 695 syntax that 3.11 reports as CAL900). Simulated through the digest's input."""
    import compile_ad_lint.cache as cache_module
    from compile_ad_lint.cli import main

    project = write(tmp_path / "project", {"pyproject.toml": "[tool.compile-ad-lint]\n", "hazard.py": HAZARD})
    monkeypatch.chdir(project)
    real = cache_module.runtime_versions()
    versions = {"this": real, "other": real.replace(f"{sys.version_info[0]}.{sys.version_info[1]}", "3.99", 1)}
    assert versions["other"] != real

    def check_under(python: str) -> dict:
        monkeypatch.setattr(cache_module, "runtime_versions", lambda: versions[python])
        build_digest.cache_clear()
        try:
            assert main(["check", ".", "--format", "json", "--jobs", "1"]) == 1
        finally:
            build_digest.cache_clear()
        return json.loads(capsys.readouterr().out)["stats"]

    check_under("this")
    assert check_under("this")["parsed"] == 0  # served from this interpreter's entries
    assert check_under("other")["cached"] == 0  # another interpreter's entries are not its own
    assert check_under("this")["parsed"] == 0


def _chain_project(root: Path, length: int) -> Path:
    files = {"m0.py": HELPERS, "pyproject.toml": "[tool.compile-ad-lint]\n"}
    files.update({f"m{i}.py": f"from m{i - 1} import step\n" for i in range(1, length)})
    files["main.py"] = MAIN_IMPORTING_HELPERS.replace("from helpers", f"from m{length - 1}")
    return write(root, files)


def test_deep_reexport_chain_and_nested_literal_still_report(tmp_path):
    chain = _chain_project(tmp_path / "chain", 190)
    nested = write(
        tmp_path / "nested",
        {"main.py": "DATA = " + "[" * 150 + "1" + "]" * 150 + "\n" + MAIN_IMPORTING_HELPERS, "helpers.py": HELPERS},
    )
    for project, line in ((chain, 6), (nested, 7)):
        for cache in ("--no-cache", "--jobs=1"):
            result = run_cli(["check", "main.py", "--format", "json", cache], project)
            assert_contract(result, (1,))
            assert _findings(result) == {("main.py", line, 16, "CAL001")}, result.describe()


def test_a_recursion_limit_hit_is_not_cached(tmp_path, monkeypatch):
    """A file analyzed once under a limit it hit, then edited to need less: same as --no-cache."""
    project = _chain_project(tmp_path / "project", 120)
    monkeypatch.setattr(deepstack, "RECURSION_LIMIT", 150)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(150)
    try:
        limited = Analyzer(Config(), jobs=1).check([str(project / "main.py")])
    finally:
        sys.setrecursionlimit(limit)
    assert [f.code for f in limited.findings] == ["CAL900"]
    assert "analysis incomplete" in limited.findings[0].message or "deeper than" in limited.findings[0].message
    monkeypatch.undo()
    cached = Analyzer(Config(), jobs=1).check([str(project / "main.py")])
    fresh = Analyzer(Config(), jobs=1, use_cache=False).check([str(project / "main.py")])
    assert finding_keys(cached) == finding_keys(fresh) and [f.code for f in cached.findings] == ["CAL001"]


# -- the codec ------------------------------------------------------------------------------


def test_codec_round_trips_summaries():
    span = Span(1, 2, 3, 4)
    literal = Const((ListLiteral((Symbol("torch.float16"), 1.5, None)), DictLiteral((("k", b"v"),)), 2j, True), span)
    value = BlockSummary((), (), (), ("pkg.mod",))
    for item, expected in ((literal, Const), (Call(Ref("f"), (), span), Call), (value, BlockSummary)):
        assert codec.loads(codec.dumps(item), expected) == item


def test_codec_writes_a_shared_value_as_it_writes_copies():
    # The encoder reuses the document of an instance met again: the bytes must not depend on it.
    span = Span(1, 2, 3, 4)
    shared = Const((ListLiteral((Symbol("torch.float16"), 1.5)), span), span)
    copies = Const((ListLiteral((Symbol("torch.float16"), 1.5)), Span(1, 2, 3, 4)), Span(1, 2, 3, 4))
    together = (shared, shared, (shared, frozenset({shared})), {"k": shared})
    apart = (copies, Const(copies.value, copies.span), (copies, frozenset({copies})), {"k": copies})
    assert codec.dumps(together) == codec.dumps(apart)
    # Equal values are one node, written once: the copies' document is no longer than the shared one's.
    nodes = json.loads(codec.dumps(together))["#graph"]
    alone = json.loads(codec.dumps(copies))["#graph"]
    assert len(nodes) == len(alone) + 4  # the list, set, map and tuple
    # The shared value is written as its copy is: the same nodes, and the same reference to it.
    assert nodes[: len(alone) - 1] == alone[:-1] and nodes[int(nodes[-1][1:])][0] == alone[-1]
    assert (
        codec.loads(codec.dumps(together), tuple[Const, Const, tuple[Const, frozenset[Const]], dict[str, Const]])
        == apart
    )


@dataclass(frozen=True)
class _Held:
    span: Span
    note: Const | None = None


def test_codec_leaves_the_fields_a_caller_omits_undecoded():
    # A warm flake8 run decodes findings without their evidence: whatever the document holds there
    # is None, and a class only that field reaches is not needed (nor checked).
    whole = _Held(Span(1, 2, 3, 4), Const(1, Span(5, 6, 7, 8)))
    data = codec.dumps((whole, Span(1, 1, 1, 2)))
    omit = frozenset({(_Held, "note")})
    assert codec.loads(data, tuple[_Held, Span]) == (whole, Span(1, 1, 1, 2))
    assert codec.loads(data, tuple[_Held, Span], omit) == (_Held(Span(1, 2, 3, 4)), Span(1, 1, 1, 2))
    assert codec.loads(b'{"_Held": [{"Span": [1, 2, 3, 4]}, {"os.system": ["x"]}]}', _Held, omit) == _Held(
        Span(1, 2, 3, 4)
    )
    with pytest.raises(codec.SchemaError):  # the fields kept are checked as ever
        codec.loads(b'{"_Held": [{"Span": [1, 2, 3, "4"]}, null]}', _Held, omit)
    with pytest.raises(TypeError):  # a field that does not admit None cannot be left out
        codec.loads(data, tuple[_Held, Span], frozenset({(_Held, "span")}))


def test_a_pause_begun_while_an_entry_is_written_outlasts_the_write():
    """The language server pauses the collector for an edit while the project pass may be writing
    an entry on another thread: the write ending must not turn it back on under the edit."""
    from compile_ad_lint.integrations.lsp import collector_paused

    edit = collector_paused()

    class EditStartsMidWrite(dict):
        def items(self):  # type: ignore[no-untyped-def]
            edit.__enter__()
            return super().items()

    assert gc.isenabled()
    try:
        codec.dumps(EditStartsMidWrite(k=1))
        assert not gc.isenabled(), "the write's end turned the collector on under the edit's pause"
    finally:
        edit.__exit__(None, None, None)
    assert gc.isenabled()


@pytest.mark.parametrize("enabled", [True, False])
def test_codec_leaves_the_garbage_collector_as_it_found_it(enabled):
    # Writing and reading pause the collector; a failure on either side must not leave it off
    # (nor turn on a collector the host process turned off).
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        assert codec.loads(codec.dumps(Span(1, 2, 3, 4)), Span) == Span(1, 2, 3, 4)
        assert gc.isenabled() is enabled
        with pytest.raises(TypeError):
            codec.dumps((Span(1, 2, 3, 4), object()))
        assert gc.isenabled() is enabled
        with pytest.raises(codec.SchemaError):
            codec.loads(b'{"Span": [1, 2, 3, "4"]}', Span)
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


@dataclass(frozen=True)
class _Renamed:
    lines: int


@pytest.mark.parametrize(
    "document",
    [
        b'{"Span": [1, 2, 3]}',  # a field missing (an older build's shape)
        b'{"Span": [1, 2, 3, "4"]}',  # a field of the wrong type
        b'{"Span": [1, 2, 3, true]}',  # bool is not an int here
        b'{"_Renamed": [1]}',  # a class the schema does not reach
        b'{"os.system": ["touch x"]}',
        b"[1, 2]",
        b'{"#set": [[1], {"#map": 3}]}',
        b"\xff\xfe",
        b"[" * 100000 + b"]" * 100000,
    ],
)
def test_codec_rejects_what_the_schema_does_not_allow(document):
    with pytest.raises(codec.SchemaError):
        codec.loads(document, Span)


def test_cache_load_never_raises_for_bad_data(tmp_path):
    cache = SummaryCache.open(tmp_path)
    assert cache is not None
    cache.store("ab" + "0" * 62, Span(1, 1, 1, 2))
    assert cache.load("ab" + "0" * 62, Span) == Span(1, 1, 1, 2)
    assert cache.load("ab" + "0" * 62, BlockSummary) is None  # another type under that key
    assert cache.load("cd" + "0" * 62, Span) is None


def test_every_entry_a_check_writes_decodes_to_what_was_written(tmp_path):
    # Entries are decoded as their type's annotations say (each field's decoder checks as it
    # decodes): every entry of a check, a --format json run and a --diff over a project with
    # findings across modules must decode, as the type its reader asks for, to a value that
    # writes the same bytes again.
    from compile_ad_lint.fixes import ResolvedPlan
    from compile_ad_lint.fixes.rounds import RoundRecord
    from compile_ad_lint.pipeline.results import CheckRecord
    from compile_ad_lint.pipeline.root_results import ResultReads
    from compile_ad_lint.summary.outline import ModuleOutline

    project = tmp_path / "project"
    shutil.copytree(Path(__file__).parents[2] / "fixtures" / "projects" / "frameworks", project)
    for arguments in ([], ["--format", "json"], ["--diff"]):
        subprocess.run(
            [sys.executable, "-m", "compile_ad_lint", "check", ".", *arguments],
            cwd=project,
            capture_output=True,
            check=False,
        )
    cache = SummaryCache.open(project, create=False)
    assert cache is not None
    # dict[str, bytes]: the called names of each file (the callers round); dict[str, bool]: which
    # files can hold an anchor (the entry points), both by digest.
    kinds = (
        ModuleOutline,
        RootResult,
        ResultReads,
        CheckRecord,
        RoundRecord,
        ResolvedPlan,
        dict[str, bytes],
        dict[str, bool],
    )
    decoded: dict[str, int] = {}
    entries = sorted((project / CACHE_DIRECTORY).glob("[0-9a-f][0-9a-f]/*.json"))
    assert len(entries) > 10
    for entry in entries:
        payload = entry.read_bytes().split(b"\n", 1)[1]
        found = [(kind, value) for kind in kinds if (value := cache.load(entry.stem, kind)) is not None]
        assert found, f"{entry.name} decodes as none of the stored kinds"
        for kind, value in found:
            # A set's members are written in the writing process's hash order.
            assert _unordered(codec.dumps(value)) == _unordered(payload), f"{entry.name} as {kind}"
            label = kind.__name__ if isinstance(kind, type) else str(kind)
            decoded[label] = decoded.get(label, 0) + 1
    assert {
        "ModuleOutline",
        "RootResult",
        "ResultReads",
        "CheckRecord",
        "RoundRecord",
        "dict[str, bool]",
    } <= decoded.keys()


def _unordered(data: bytes) -> object:
    def each(document: object) -> object:
        if isinstance(document, list):
            return [each(item) for item in document]
        if isinstance(document, dict):
            if set(document) == {"#set"}:
                return {"#set": sorted((each(item) for item in document["#set"]), key=json.dumps)}
            return {key: each(value) for key, value in document.items()}
        return document

    return each(json.loads(data))


@dataclass(frozen=True)
class _Shapes:
    numbers: tuple[int, ...]
    kept: frozenset[str]
    table: dict[str, float]
    either: Span | Const | None
    pair: tuple[str, bool]


@pytest.mark.parametrize(
    "document",
    [
        b'{"_Shapes": [{"#set": [1]}, {"#set": []}, {"#map": []}, null, ["a", true]]}',  # a set for a tuple
        b'{"_Shapes": [[1], ["a"], {"#map": []}, null, ["a", true]]}',  # a list for a frozenset
        b'{"_Shapes": [[1], {"#set": []}, [["k", 1.0]], null, ["a", true]]}',  # a list for a dict
        b'{"_Shapes": [[1], {"#set": []}, {"#map": [["k", "1"]]}, null, ["a", true]]}',  # a str for a float
        b'{"_Shapes": [[1], {"#set": []}, {"#map": [["k"]]}, null, ["a", true]]}',  # a pair short of its value
        # a class the schema knows (a literal's Symbol) that the union does not admit
        b'{"_Shapes": [[1], {"#set": []}, {"#map": []}, {"Symbol": ["torch.float16"]}, ["a", true]]}',
        b'{"_Shapes": [[1], {"#set": []}, {"#map": []}, {"_Renamed": [1]}, ["a", true]]}',  # not in the union
        b'{"_Shapes": [[1], {"#set": []}, {"#map": []}, 3, ["a", true]]}',
        b'{"_Shapes": [[1], {"#set": []}, {"#map": []}, null, ["a", 1]]}',  # an int for a bool
        b'{"_Shapes": [[1], {"#set": []}, {"#map": []}, null, ["a", true, 1]]}',  # a longer tuple
        b'{"_Shapes": [[true], {"#set": []}, {"#map": []}, null, ["a", true]]}',  # a bool for an int
        b'{"_Shapes": [[1], {"#set": []}, {"#map": []}, null, ["a", true], 1]}',  # an extra field
        b'{"Span": [1, 2, 3, 4]}',  # another class than the one asked for
    ],
)
def test_codec_checks_each_field_as_its_annotation_says(document):
    with pytest.raises(codec.SchemaError):
        codec.loads(document, _Shapes)


def test_codec_decodes_each_shape_an_annotation_admits():
    span = Span(1, 2, 3, 4)
    for either in (None, span, Const(2.5, span)):
        value = _Shapes((1, 2), frozenset({"a", "b"}), {"k": 1, "m": 0.5}, either, ("a", False))
        assert codec.loads(codec.dumps(value), _Shapes) == value


@pytest.mark.parametrize(
    "document",
    [
        b'{"#graph": ["#0"]}',  # the value refers to itself (no node 0)
        b'{"#graph": [{"Span": [1, 2, 3, 4]}, "#1"]}',  # a reference past the nodes
        b'{"#graph": [{"Span": [1, 2, 3, 4]}, "#-1"]}',
        b'{"#graph": [{"Span": [1, 2, 3, 4]}, "#x"]}',
        b'{"#graph": []}',
        b'{"#graph": {"Span": [1, 2, 3, 4]}}',
        # nodes that contain each other
        b'{"#graph": [{"_Shapes": [[1], {"#set": []}, {"#map": []}, "#1", ["a", true]]},'
        b' {"Const": ["#0", null]}, "#0"]}',
        b'{"#graph": [["#0"], {"_Shapes": ["#0", {"#set": []}, {"#map": []}, null, ["a", true]]}, "#1"]}',
        # one node read as two types: numbers, then strings; numbers, then a (str, bool) pair
        b'{"#graph": [[1], {"_Shapes": ["#0", "#0", {"#map": []}, null, ["a", true]]}, "#1"]}',
        b'{"#graph": [[1, 1], {"_Shapes": ["#0", {"#set": []}, {"#map": []}, null, "#0"]}, "#1"]}',
        # a reference where a string must be
        b'{"#graph": [["a"], {"_Shapes": [[1], {"#set": []}, {"#map": []}, null, ["#0", true]]}, "#1"]}',
    ],
)
def test_codec_rejects_a_graph_the_schema_does_not_allow(document):
    with pytest.raises(codec.SchemaError):
        codec.loads(document, _Shapes)


def test_codec_writes_each_equal_value_once_and_keeps_strings_that_start_with_a_hash():
    span = Span(1, 2, 3, 4)
    value = _Shapes((1, 1), frozenset({"#0", "##", "#", "a"}), {"#1": 1.0}, Const("#2", Span(1, 2, 3, 4)), ("#0", True))
    data = codec.dumps((value, value, _Shapes((1, 1), value.kept, {"#1": 1.0}, Const("#2", span), ("#0", True))))
    assert codec.loads(data, tuple[_Shapes, _Shapes, _Shapes]) == (value, value, value)
    nodes = json.loads(data)["#graph"]
    assert len(nodes) == len(set(map(json.dumps, nodes))) == 9  # 8 nodes and the value
