"""Discovery skips what git ignores (``.gitignore`` files at every level, ``.git/info/exclude``), as
Ruff does by default; ``respect-gitignore = false`` and ``--no-respect-gitignore`` turn it off.

The oracle is git itself: ``git ls-files --others --exclude-standard`` lists the untracked files git
does not ignore, and ``compile-ad-lint check --show-files`` must list the same Python files.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from compile_ad_lint.gitignore import parse_line
from compile_ad_lint.testing import write_files

from .test_cli_contract import HAZARD, cli

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git as the oracle")

FILES = [
    "top.py",
    "gen_1.py",
    "debug.log.py",
    "data/d.py",
    "data/deep/e.py",
    "src/data/kept_not_top_level.py",
    "src/pkg/a.py",
    "src/pkg/generated/g.py",
    "src/pkg/sub/generated/h.py",
    "keep/e.py",
    "keep/important.py",
    "build_outputs/x.py",
    "docs/a/b/c/skip.py",
    "docs/a/keep.py",
    "notes/#hash.py",
    "notes/space .py",
    "notes/v1.py",
    "notes/v2.py",
    "logs/x.py",
    "nested/n.py",
    "nested/m.py",
    "excluded_by_info.py",
]

GITIGNORE = """\
# comment line, then a blank one

/data/
gen_*.py
*.log.py
keep/*
!keep/important.py
/logs
build_*/
docs/**/c/
\\#hash.py
space\\ .py
notes/v[2-9].py
"""


def _tree(root: Path) -> Path:
    write_files(root, {path: HAZARD for path in FILES})
    write_files(
        root,
        {
            ".gitignore": GITIGNORE,
            "src/pkg/.gitignore": "generated/\n",
            "src/pkg/sub/.gitignore": "!generated/\n",  # deeper file re-includes
            "nested/.gitignore": "*.py\n!m.py\n",
        },
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    (root / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("excluded_by_info.py\n")
    return root


def _git_visible(root: Path) -> set[str]:
    listed = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    return {path for path in listed if path.endswith(".py")}


def _shown(root: Path, *args: str) -> set[str]:
    completed = cli(root, "check", "--show-files", *args)
    assert completed.returncode == 0, completed.stderr
    return {line for line in completed.stdout.splitlines() if line}


def test_discovery_skips_what_git_ignores(tmp_path: Path):
    root = _tree(tmp_path / "repo")
    visible = _git_visible(root)
    assert "keep/important.py" in visible and "src/pkg/sub/generated/h.py" in visible  # negations work
    assert "data/d.py" not in visible and "src/data/kept_not_top_level.py" in visible  # anchored pattern
    assert _shown(root, ".") == visible
    # What a check reports: the same files (each holds the hazard).
    completed = cli(root, "check", ".", "--no-cache", "--concise")
    reported = {line.split(":")[0] for line in completed.stdout.splitlines() if ": CAL" in line}
    assert reported == visible, completed.stdout
    # A folder named on the command line is walked the same way (the .gitignore files above it apply).
    assert _shown(root, "src") == {path for path in visible if path.startswith("src/")}


def test_respect_gitignore_can_be_turned_off(tmp_path: Path):
    root = _tree(tmp_path / "repo")
    everything = {path for path in FILES}
    assert _shown(root, ".", "--no-respect-gitignore") == everything
    (root / "pyproject.toml").write_text("[tool.compile-ad-lint]\nrespect-gitignore = false\n")
    assert _shown(root, ".") == everything
    assert _shown(root, ".", "--respect-gitignore") == _git_visible(root) - {"pyproject.toml"}


def test_a_gitignore_outside_a_work_tree_means_nothing(tmp_path: Path):
    root = write_files(tmp_path / "plain", {"a.py": HAZARD, "data/d.py": HAZARD, ".gitignore": "data/\n"})
    assert _shown(root, ".") == {"a.py", "data/d.py"}


def test_a_file_named_on_the_command_line_is_checked_even_if_ignored(tmp_path: Path):
    root = _tree(tmp_path / "repo")
    completed = cli(root, "check", "data/d.py", "--no-cache", "--concise")
    assert completed.returncode == 1 and completed.stdout.startswith("data/d.py:"), completed.stdout


@pytest.mark.parametrize(
    ("line", "path", "is_dir", "ignored"),
    [
        ("*.py", "a/b.py", False, True),
        ("/a.py", "sub/a.py", False, None),
        ("a/", "a", False, None),
        ("a/", "a", True, True),
        ("**/x", "p/q/x", False, True),
        ("a/**/b", "a/b", True, True),
        ("a/**/b", "a/p/q/b", True, True),
        ("a/**", "a/p/q", False, True),
        ("a?c", "abc", False, True),
        ("a?c", "a/c", False, None),
        ("[!a]b", "cb", False, True),
        ("[!a]b", "ab", False, None),
        ("\\!x", "!x", False, True),
        ("!x", "x", False, False),
        ("trailing   ", "trailing", False, True),
    ],
)
def test_patterns(line, path, is_dir, ignored):
    from compile_ad_lint.gitignore import IgnoreFile

    pattern = parse_line(line)
    assert pattern is not None
    assert IgnoreFile(Path("/r"), (pattern,)).decide(path, is_dir) is ignored
