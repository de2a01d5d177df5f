"""``exclude`` globs match paths relative to the project root, never the folders above it.

Regression for a project checked out under ``.../experiments/proj`` with ``exclude = ["experiments/*"]``:
``check $PWD`` (and flake8, which names the project root absolutely) matched the glob against the
absolute path, excluded every file and exited 0. Every spelling must analyze the same files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path, PurePath

import pytest

from compile_ad_lint import Config
from compile_ad_lint.core.settings import matches_any
from compile_ad_lint.project import discover
from compile_ad_lint.testing import write_files

from .test_flake8_plugin import run_cli, run_flake8

HAZARD = """\
import torch
import torch.autograd.forward_ad as fwAD

f = torch.compile(torch.sin)


def run(x, t):
    with fwAD.dual_level():
        return f(fwAD.make_dual(x, t))
"""

PROJECT = {
    "pyproject.toml": '[project]\nname = "proj"\n\n[tool.compile-ad-lint]\nexclude = ["experiments/*", "legacy"]\n',
    "pkg/__init__.py": "",
    "pkg/train.py": HAZARD,
    "scripts/run.py": HAZARD,
    # Excluded inside the project: the project's own experiments/ folder and a legacy/ folder.
    "experiments/trial.py": HAZARD,
    "pkg/legacy/old.py": HAZARD,
}
#: What every spelling must analyze (relative to the project root) and report findings for.
ANALYZED = {"pkg/__init__.py", "pkg/train.py", "scripts/run.py"}
REPORTED = {"pkg/train.py", "scripts/run.py"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The project, placed under a folder named ``experiments`` (and one named ``build``, a default exclude)."""
    return write_files(tmp_path / "build" / "experiments" / "proj", PROJECT)


def _check_json(cwd: Path, target: str) -> dict:
    completed = subprocess.run(
        [sys.executable, "-m", "compile_ad_lint", "check", "--no-cache", "--format", "json", target],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 1, completed.stdout + completed.stderr
    return json.loads(completed.stdout)


def _relative(project: Path, cwd: Path, path: str) -> str:
    return (cwd / path).resolve().relative_to(project.resolve()).as_posix()


@pytest.mark.parametrize(
    ("cwd", "target"),
    [
        pytest.param(".", ".", id="dot"),
        pytest.param(".", "<absolute>", id="absolute"),
        pytest.param(".", "../proj", id="via-parent"),
        pytest.param("..", "proj", id="from-parent"),
        pytest.param("../../..", "build/experiments/proj", id="from-above"),
    ],
)
def test_cli_analyzes_the_same_files_however_the_project_is_named(project: Path, cwd: str, target: str):
    directory = (project / cwd).resolve()
    document = _check_json(directory, str(project.resolve()) if target == "<absolute>" else target)
    assert document["stats"]["files"] == len(ANALYZED)
    assert {_relative(project, directory, f["path"]) for f in document["findings"]} == REPORTED


def test_flake8_reports_the_files_the_cli_reports(project: Path):
    expected = run_cli(project, ".")
    assert {PurePath(path).as_posix() for path, *_ in expected} == REPORTED
    for target in (".", str(project)):
        rc, found, output = run_flake8(project, target)
        assert rc == 1, output
        assert {(_relative(project, project, path), *rest) for path, *rest in found} == {
            (PurePath(path).as_posix(), *rest) for path, *rest in expected
        }, output


def _discovered(paths: list[str], config: Config) -> set[str]:
    files, problems = discover(paths, config)
    assert not problems
    return {Path(f.display).as_posix() for f in files}


def test_paths_outside_the_root_match_relative_to_the_path_as_given(tmp_path: Path):
    root = write_files(tmp_path / "experiments" / "proj", {"a.py": "", "experiments/b.py": ""})
    elsewhere = write_files(
        tmp_path / "experiments" / "other", {"c.py": "", "experiments/d.py": "", "sub/experiments/e.py": ""}
    )
    config = Config(exclude=("experiments/*",), root=root)
    # Neither path's own parents (both lie under experiments/) exclude anything.
    assert _discovered([str(root), str(elsewhere)], config) == {
        (root / "a.py").as_posix(),
        (elsewhere / "c.py").as_posix(),
    }
    # Without a project root, every path is matched relative to itself as given.
    assert _discovered([str(elsewhere)], Config(exclude=("experiments/*",))) == {(elsewhere / "c.py").as_posix()}


def test_a_walk_above_the_root_matches_inside_the_root_relative_to_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    write_files(tmp_path, {"top.py": "", "proj/experiments/x.py": "", "proj/keep.py": "", "lib/experiments/y.py": ""})
    monkeypatch.chdir(tmp_path)
    config = Config(exclude=("proj/keep.py", "experiments/*"), root=tmp_path / "proj")
    # "proj/keep.py" would name keep.py relative to the walk, but the project root is proj/ itself.
    assert _discovered(["."], config) == {"top.py", "proj/keep.py"}


@pytest.mark.parametrize(
    ("relative", "excluded"),
    [
        ("experiments", True),
        ("experiments/x.py", True),
        ("pkg/experiments/x.py", True),  # a tail starting at a folder matches too
        ("myexperiments/x.py", False),
        ("pkg/legacy", True),  # a name pattern matches the last component
        ("legacy.py", False),
        ("pkg/x.egg-info", True),
        ("gen/out", True),  # trailing "/" ignored
    ],
)
def test_matches_any(relative: str, excluded: bool):
    assert (
        matches_any(PurePath(relative), ("experiments/*", "experiments", "legacy", "*.egg-info", "gen/out/"))
        is excluded
    )


@pytest.mark.skipif(os.name == "nt", reason="POSIX symlinks")
def test_a_symlinked_project_is_matched_after_resolving(tmp_path: Path):
    real = write_files(tmp_path / "real", {"a.py": "", "experiments/b.py": ""})
    (tmp_path / "experiments").mkdir()
    link = tmp_path / "experiments" / "link"
    link.symlink_to(real, target_is_directory=True)
    config = Config(exclude=("experiments/*",), root=real)
    assert _discovered([str(link)], config) == {(link / "a.py").as_posix()}


# -- --force-exclude (the pre-commit hook names every staged file) ----------------------------------


def test_force_exclude_applies_the_excludes_to_named_files(tmp_path):
    import subprocess
    import sys

    from compile_ad_lint.testing import write_files

    hazard = (
        "import torch\nimport torch.autograd.forward_ad as fwAD\n\nf = torch.compile(torch.sin)\n\n\n"
        "def run(x, t):\n    with fwAD.dual_level():\n        return f(fwAD.make_dual(x, t))\n"
    )
    root = write_files(
        tmp_path / "proj",
        {
            "pyproject.toml": '[tool.compile-ad-lint]\nextend-exclude = ["generated", "legacy_*.py"]\n',
            "generated/model.py": hazard,
            "legacy_train.py": hazard,
            "train.py": hazard,
        },
    )

    def check(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "compile_ad_lint", "check", "--no-cache", "--concise", *args],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=300,
        )

    # Named directly, an excluded file is checked (as Ruff does) ...
    assert check("generated/model.py").returncode == 1
    # ... unless --force-exclude: the folder above it or the file itself is excluded.
    for named in (["generated/model.py"], ["legacy_train.py"], ["generated/model.py", "legacy_train.py"]):
        forced = check("--force-exclude", *named)
        assert forced.returncode == 0, forced.stdout
        assert forced.stdout == "" and "every path given is excluded" in forced.stderr
    mixed = check("--force-exclude", "generated/model.py", "train.py")
    findings = [line for line in mixed.stdout.splitlines() if ": CAL" in line]
    assert mixed.returncode == 1 and [line.split(":")[0] for line in findings] == ["train.py"]
    assert "Found 1 finding in 1 file" in mixed.stdout
    # With --dependents too (the hook's command line).
    assert check("--force-exclude", "--dependents", "generated/model.py").returncode == 0
    # The same from the configuration.
    (root / "pyproject.toml").write_text(
        '[tool.compile-ad-lint]\nextend-exclude = ["generated", "legacy_*.py"]\nforce-exclude = true\n'
    )
    assert check("generated/model.py").returncode == 0
