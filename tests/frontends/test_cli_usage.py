"""Usage errors as Ruff prints them, through the real CLI process: the reason first (with a
did-you-mean for a mistyped option, command or choice), then a short usage line; options are never
abbreviated (``--selec`` is an error, not ``--select``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compile_ad_lint.testing import write_files

from .test_cli_contract import HAZARD, cli


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_files(tmp_path / "proj", {"pyproject.toml": "[tool.compile-ad-lint]\n", "hazard.py": HAZARD})


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["check", "--selec", "CAL001", "."], "unexpected argument '--selec'; did you mean '--select'?"),
        (["check", "--no-cach", "."], "unexpected argument '--no-cach'; did you mean '--no-cache'?"),
        (["check", "--show-src", "."], "unexpected argument '--show-src'; did you mean '--show-source'?"),
        (["check", "--format", "jsn", "."], "--format: invalid choice: 'jsn'"),
        (["chek", "."], "invalid choice: 'chek'"),
        (["explain", "CAL001", "CAL002"], "unexpected argument 'CAL002'"),
    ],
)
def test_usage_error_prints_the_reason_first(project, args, reason):
    completed = cli(project, *args)
    assert completed.returncode == 2
    lines = completed.stderr.splitlines()
    assert lines[0].startswith(f"compile-ad-lint: error: {reason}"), completed.stderr
    assert len(lines) <= 3, completed.stderr  # the reason, one usage line, where the help is
    assert lines[1].startswith("usage: compile-ad-lint"), completed.stderr
    assert completed.stdout == ""


@pytest.mark.parametrize(
    ("args", "suggested"),
    [(["check", "--format", "jsn", "."], "json"), (["chek", "."], "check"), (["cache", "clan"], "clean")],
)
def test_invalid_choice_suggests_the_closest(project, args, suggested):
    completed = cli(project, *args)
    assert completed.returncode == 2
    assert completed.stderr.splitlines()[0].endswith(f"did you mean '{suggested}'?"), completed.stderr


@pytest.mark.parametrize("prefix", ["--selec", "--sel", "--stat", "--exit-z", "--max-call"])
def test_option_prefixes_are_not_accepted(project, prefix):
    value = ["CAL001"] if prefix.startswith("--sel") else ["3"] if prefix.startswith("--max") else []
    completed = cli(project, "check", prefix, *value, ".")
    assert completed.returncode == 2, completed.stdout
    assert f"unexpected argument '{prefix}'" in completed.stderr


def test_the_short_usage_names_the_subcommand(project):
    completed = cli(project, "check", "--jobs", "x", ".")
    assert completed.returncode == 2
    assert completed.stderr.splitlines() == [
        "compile-ad-lint: error: --jobs: expected a positive integer, got 'x'",
        "usage: compile-ad-lint check [OPTIONS] [PATH ...]",
        "For more information, try 'compile-ad-lint check --help'.",
    ]
