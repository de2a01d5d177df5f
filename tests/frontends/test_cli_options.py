"""Ruff's configuration flags on the command line, through the real CLI: ``--extend-select``,
``--per-file-ignores``, ``--exclude``/``--extend-exclude``, ``--show-files``, ``--show-settings``, ``--output-format``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from compile_ad_lint.testing import write_files

from .test_cli_contract import BAD_CONFIG, HAZARD, cli

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_files(
        tmp_path / "proj",
        {
            "pyproject.toml": '[tool.compile-ad-lint]\nselect = ["CAL001"]\nexclude = ["old.py"]\n',
            "hazard.py": HAZARD,
            "config.py": BAD_CONFIG,
            "old.py": HAZARD,
            "tests/test_x.py": HAZARD,
        },
    )


def _codes_by_file(completed) -> set[tuple[str, str]]:  # type: ignore[no-untyped-def]
    findings = [line for line in completed.stdout.splitlines() if ": CAL" in line]
    return {(line.split(":")[0], line.split(": ")[1].split()[0]) for line in findings}


def test_extend_select_adds_to_the_selection(project: Path):
    assert _codes_by_file(cli(project, "check", ".", "--no-cache", "--concise")) == {
        ("hazard.py", "CAL001"),
        ("tests/test_x.py", "CAL001"),
    }
    extended = cli(project, "check", ".", "--no-cache", "--concise", "--extend-select", "CAL003")
    assert ("config.py", "CAL003") in _codes_by_file(extended) and ("hazard.py", "CAL001") in _codes_by_file(extended)
    # The more specific selector wins over a broader ignore (Ruff's rule).
    ignored = cli(project, "check", ".", "--no-cache", "--concise", "--ignore", "CAL00", "--extend-select", "CAL003")
    assert _codes_by_file(ignored) == {("config.py", "CAL003")}, ignored.stdout
    bad = cli(project, "check", ".", "--extend-select", "CAL03")
    assert bad.returncode == 2 and "--extend-select: 'CAL03' is not a compile-ad-lint rule code" in bad.stderr


def test_per_file_ignores_on_the_command_line(project: Path):
    completed = cli(project, "check", ".", "--no-cache", "--concise", "--per-file-ignores", "tests/*:CAL001,CAL002")
    assert _codes_by_file(completed) == {("hazard.py", "CAL001")}, completed.stdout
    both = cli(project, "check", ".", "--no-cache", "--concise", "--per-file-ignores", "tests/*:CAL001,hazard.py:CAL")
    assert both.returncode == 0, both.stdout
    bad = cli(project, "check", ".", "--per-file-ignores", "CAL001")
    assert bad.returncode == 2 and "--per-file-ignores: expected GLOB:CODES" in bad.stderr


def test_exclude_replaces_and_extend_exclude_adds(project: Path):
    def files(*args: str) -> set[str]:
        completed = cli(project, "check", "--show-files", *args)
        assert completed.returncode == 0, completed.stderr
        return set(completed.stdout.splitlines())

    assert files(".") == {"config.py", "hazard.py", "tests/test_x.py"}
    assert files(".", "--exclude", "tests") == {"config.py", "hazard.py", "old.py"}  # old.py: the config's replaced
    assert files(".", "--extend-exclude", "tests,config.py") == {"hazard.py"}
    checked = cli(project, "check", ".", "--no-cache", "--concise", "--extend-exclude", "tests")
    assert _codes_by_file(checked) == {("hazard.py", "CAL001")}


def test_show_settings_prints_the_effective_table(project: Path):
    completed = cli(
        project, "check", "hazard.py", "--show-settings", "--extend-select", "CAL003", "--max-call-depth", "3"
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.startswith("# Settings for hazard.py\n# From ")
    settings = tomllib.loads(completed.stdout)["tool"]["compile-ad-lint"]
    assert settings["select"] == ["CAL001"] and settings["extend-select"] == ["CAL003"]
    assert settings["max-call-depth"] == 3 and settings["respect-gitignore"] is True
    assert "old.py" in settings["exclude"] and ".git" in settings["exclude"]
    assert "per-file-ignores" in settings and "max-function-walks" in settings


# -- environment variables (Ruff's RUFF_CACHE_DIR and RUFF_NO_CACHE) --------------------------------


def _summary(completed) -> str:  # type: ignore[no-untyped-def]
    return completed.stdout.splitlines()[-1]


def test_cache_dir_from_the_environment(project: Path, tmp_path: Path):
    elsewhere = tmp_path / "caches" / "cal"
    env = {"COMPILE_AD_LINT_CACHE_DIR": str(elsewhere)}
    cold = cli(project, "check", ".", env=env)
    assert cold.returncode == 1 and "0 cached" in _summary(cold), cold.stdout
    assert (elsewhere / "compile-ad-lint-cache.json").is_file()
    assert not (project / ".compile_ad_lint_cache").exists()
    warm = cli(project, "check", ".", env=env)
    assert "0 parsed" in _summary(warm) and warm.stdout.splitlines()[:-1] == cold.stdout.splitlines()[:-1]
    cleaned = cli(project, "cache", "clean", ".", env=env)
    assert cleaned.returncode == 0 and cleaned.stdout.strip() == f"removed {elsewhere}"
    assert not elsewhere.exists()


@pytest.mark.parametrize("value", ["1", "true"])
def test_no_cache_from_the_environment(project: Path, value: str):
    env = {"COMPILE_AD_LINT_NO_CACHE": value}
    for _ in range(2):
        completed = cli(project, "check", ".", env=env)
        assert completed.returncode == 1 and "0 cached" in _summary(completed), completed.stdout
    assert not (project / ".compile_ad_lint_cache").exists()
    cli(project, "check", ".", env={"COMPILE_AD_LINT_NO_CACHE": "0"})
    assert (project / ".compile_ad_lint_cache").is_dir()


def test_output_format_is_rufs_spelling_of_format(project: Path):
    """``--output-format`` takes every ``--format`` and Ruff's two text reports: ``concise`` (one
    line per finding) and ``full`` (the chain under each)."""
    import json

    as_json = cli(project, "check", "hazard.py", "--output-format", "json")
    assert [f["code"] for f in json.loads(as_json.stdout)["findings"]] == ["CAL001"]
    concise = cli(project, "check", "hazard.py", "--output-format", "concise")
    full = cli(project, "check", "hazard.py", "--output-format", "full")
    findings = lambda completed: completed.stdout.splitlines()[:-1]
    assert findings(concise) == findings(cli(project, "check", "hazard.py", "--concise"))
    assert findings(full) == findings(cli(project, "check", "hazard.py"))
    assert len(findings(full)) > len(findings(concise)) > 0
    bad = cli(project, "check", "hazard.py", "--output-format", "jsn")
    assert bad.returncode == 2 and "--output-format: invalid choice: 'jsn'" in bad.stderr
    # The last of --format and --output-format wins; an explicit --concise stays.
    last = cli(project, "check", "hazard.py", "--output-format", "concise", "--format", "json")
    assert json.loads(last.stdout)["findings"], last.stderr
    assert findings(cli(project, "check", "hazard.py", "--format", "json", "--output-format", "concise")) == findings(
        concise
    )
    assert findings(cli(project, "check", "hazard.py", "--concise", "--output-format", "full")) == findings(concise)
    refused = cli(project, "check", "hazard.py", "--output-format", "json", "--concise")
    assert refused.returncode == 2 and "--concise applies to --format text, not json" in refused.stderr
