"""A repository's configuration and the baseline it names are input: hostile ones are a usage error
naming the file (exit 2), never a traceback, a hang or a read without end, in the CLI and in the
flake8 plugin (the language server: tests/frontends/test_lsp_reliability.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from robustness_helpers import HAZARD, SMALL_TIMEOUT, run_cli, write

BIN = Path(sys.executable).parent


def _deep_toml(project: Path) -> str:
    (project / "pyproject.toml").write_text("[tool.compile-ad-lint]\nselect = " + "[" * 3000 + "]" * 3000 + "\n")
    return "nested too deeply"


def _huge_toml(project: Path) -> str:
    with open(project / "pyproject.toml", "wb") as handle:
        handle.write(b"[tool.compile-ad-lint]\n")
        handle.truncate(5 * 1024 * 1024)  # sparse: cheap to make
    return "larger than 4 MiB"


def _baseline(project: Path, name: str) -> None:
    (project / "pyproject.toml").write_text(f'[tool.compile-ad-lint]\nbaseline = "{name}"\n')


def _deep_json(project: Path) -> str:
    _baseline(project, "baseline.json")
    (project / "baseline.json").write_text("[" * 100_000 + "]" * 100_000)
    return "nested too deeply"


def _dev_zero(project: Path) -> str:
    _baseline(project, "baseline.json")
    (project / "baseline.json").symlink_to("/dev/zero")
    return "not a regular file (a character device)"


def _fifo(project: Path) -> str:
    _baseline(project, "baseline.json")
    os.mkfifo(project / "baseline.json")
    return "not a regular file (a named pipe)"


HOSTILE: dict[str, Callable[[Path], str]] = {
    "3,000-deep TOML array": _deep_toml,
    "5 MiB pyproject.toml": _huge_toml,
    "100,000-deep JSON baseline": _deep_json,
    "baseline is /dev/zero": _dev_zero,
    "baseline is a named pipe": _fifo,
}


def _project(tmp_path: Path, case: str) -> tuple[Path, str, str]:
    project = write(tmp_path / "project", {"hazard.py": HAZARD})
    expected = HOSTILE[case](project)
    named = "baseline.json" if "baseline" in case else "pyproject.toml"
    return project, str(project / named), expected


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_the_cli_reports_a_hostile_configuration_as_a_usage_error(tmp_path: Path, case: str) -> None:
    project, named, expected = _project(tmp_path, case)
    result = run_cli(["check", "hazard.py"], project, timeout=60)
    assert not result.timed_out, result.describe()
    assert result.returncode == 2, result.describe()
    assert "Traceback" not in result.stderr
    assert named in result.stderr and expected in result.stderr, result.describe()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_flake8_reports_a_hostile_configuration_as_a_usage_error(tmp_path: Path, case: str) -> None:
    project, named, expected = _project(tmp_path, case)
    try:
        completed = subprocess.run(
            [str(BIN / "flake8"), "--select", "CAL", "hazard.py"],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=SMALL_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("flake8 hung")
    output = completed.stdout + completed.stderr
    assert completed.returncode == 2, output
    assert "Traceback" not in output
    assert named in output and expected in output, output
