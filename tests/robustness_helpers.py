"""Shared helpers for the robustness, fuzz and real-corpus tests ("never crash, never lose code").

Most robustness checks run the real CLI in a subprocess: a segfault in a native parser, a hang on a
special file or an uncaught exception must show up as a failed test, not take pytest down with it.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from compile_ad_lint import Config
from compile_ad_lint.api import Analyzer
from compile_ad_lint.cache import CACHE_DIRECTORY
from compile_ad_lint.testing import write_files

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"

#: A file with exactly one CAL001 at 6:9 (the `f(` call inside the region).
HAZARD = """\
import torch
import torch.autograd.forward_ad as fwAD

f = torch.compile(torch.sin)
with fwAD.dual_level():
    y = f(fwAD.make_dual(x, t))
"""
HAZARD_LINE, HAZARD_COLUMN = 6, 9

#: Generous per-run bound for small inputs (2 shared cores, another worker may be benchmarking).
SMALL_TIMEOUT = 120


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False

    @property
    def document(self) -> dict:
        return json.loads(self.stdout)

    @property
    def findings(self) -> list[dict]:
        return self.document["findings"]

    def describe(self) -> str:
        return f"rc={self.returncode} timed_out={self.timed_out} ({self.seconds:.1f}s)\n--- stdout ---\n{self.stdout[-3000:]}\n--- stderr ---\n{self.stderr[-3000:]}"


def run_cli(args: Sequence[str], cwd: Path, timeout: float = SMALL_TIMEOUT, env: dict | None = None) -> CliResult:
    """``python -m compile_ad_lint ARGS`` in ``cwd``; a hang becomes ``timed_out`` (rc -9)."""
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "compile_ad_lint", *args],
            cwd=cwd,
            capture_output=True,
            timeout=timeout,
            env={**os.environ, **(env or {})},
        )
    except subprocess.TimeoutExpired as expired:
        return CliResult(
            -9, _text(expired.stdout), _text(expired.stderr), time.perf_counter() - started, timed_out=True
        )
    return CliResult(done.returncode, _text(done.stdout), _text(done.stderr), time.perf_counter() - started)


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    return data if isinstance(data, str) else data.decode("utf-8", errors="backslashreplace")


def check_json(paths: Sequence[str], cwd: Path, *extra: str, timeout: float = SMALL_TIMEOUT) -> CliResult:
    return run_cli(["check", *paths, "--no-cache", "--format", "json", *extra], cwd, timeout=timeout)


def assert_contract(result: CliResult, allowed: Iterable[int] = (0, 1)) -> None:
    """The run finished (no hang, no signal, no traceback) with an allowed exit code."""
    assert not result.timed_out, f"hang: {result.describe()}"
    assert result.returncode >= 0, f"killed by signal {-result.returncode}: {result.describe()}"
    assert "Traceback (most recent call last)" not in result.stderr, result.describe()
    assert result.returncode in tuple(allowed), result.describe()


def brief(findings: Iterable[dict]) -> set[tuple[str, int, int, str]]:
    return {(Path(f["path"]).name, f["line"], f["column"], f["code"]) for f in findings}


def by_file(findings: Iterable[dict], name: str) -> list[dict]:
    return [f for f in findings if Path(f["path"]).name == name]


def analyze(paths: Sequence[str | Path], *, jobs: int = 1, use_cache: bool = False, config: Config | None = None):
    return Analyzer(config or Config(), use_cache=use_cache, jobs=jobs).check([str(p) for p in paths])


def finding_keys(report) -> tuple:
    """Everything user-visible about the findings, in a comparable form."""
    return tuple(
        (
            f.code,
            f.location.path,
            f.location.line,
            f.location.column,
            f.location.end_line,
            f.location.end_column,
            f.message,
            tuple((r.location, r.message) for r in f.related),
        )
        for f in report.findings
    )


def tree_digest(root: Path, skip_cache: bool = True) -> dict[str, str]:
    """sha256 (plus mode) of every file under ``root``, optionally outside the cache directory."""
    digests: dict[str, str] = {}
    for directory, subdirs, names in os.walk(root):
        rel = Path(directory).relative_to(root)
        if skip_cache:
            subdirs[:] = [d for d in subdirs if d != CACHE_DIRECTORY]
        for name in names:
            path = Path(directory) / name
            if path.is_symlink():
                digests[str(rel / name)] = "symlink->" + os.readlink(path)
                continue
            stat = path.stat()
            digests[str(rel / name)] = f"{stat.st_mode:o}:{hashlib.sha256(path.read_bytes()).hexdigest()}"
        for name in subdirs:
            digests[str(rel / name) + "/"] = "dir"
    return digests


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    return write_files(root, files)


def count_analyses(monkeypatch) -> list[tuple[str, frozenset[str]]]:
    """Record (file name, mentions) of every root this process analyzes (``jobs=1`` checks)."""
    from compile_ad_lint.pipeline.workspace import Workspace

    seen: list[tuple[str, frozenset[str]]] = []
    original = Workspace._analyze

    def counting(self, path, mentions, *rest):
        seen.append((path.name, mentions))
        return original(self, path, mentions, *rest)

    monkeypatch.setattr(Workspace, "_analyze", counting)
    return seen
