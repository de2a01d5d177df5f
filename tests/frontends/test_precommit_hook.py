"""The pre-commit hook (``.pre-commit-hooks.yaml``), run by the real ``pre-commit`` tool.

The hook runs ``compile-ad-lint check --dependents`` on the staged files: a staged change can create
a hazard in a file that was not staged, and the hook must report it there.

The hook source is a git repository made from this working tree (the files pip needs plus the hook
manifest, committed in a temporary folder), so the test sees uncommitted edits and never touches
this checkout's git state. pre-commit builds the hook's virtualenv and pip-installs the package from
that repository, which needs the package index (as any pre-commit user does).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
HOOK_FILES = ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "src")


def _env(pre_commit_home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "PRE_COMMIT"}
    env.update(
        PRE_COMMIT_HOME=str(pre_commit_home),
        PRE_COMMIT_COLOR="never",
        GIT_AUTHOR_NAME="test",
        GIT_AUTHOR_EMAIL="test@example.invalid",
        GIT_COMMITTER_NAME="test",
        GIT_COMMITTER_EMAIL="test@example.invalid",
        GIT_CONFIG_NOSYSTEM="1",
    )
    return env


def _git(cwd: Path, env: dict[str, str], *args: str) -> str:
    completed = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.strip()


def _pre_commit(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "pre-commit"), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict[str, str]]:
    base = tmp_path_factory.mktemp("precommit")
    env = _env(base / "home")
    source = base / "hook-source"
    source.mkdir()
    for name in HOOK_FILES:
        origin = REPO_ROOT / name
        if origin.is_dir():
            shutil.copytree(origin, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc"))
        else:
            shutil.copy2(origin, source / name)
    _git(source, env, "init", "-q")
    _git(source, env, "add", "-A")
    _git(source, env, "commit", "-q", "-m", "hook source")
    return source, _git(source, env, "rev-parse", "HEAD"), env


def _consumer(tmp_path: Path, hook: tuple[Path, str, dict[str, str]]) -> tuple[Path, dict[str, str]]:
    source, rev, env = hook
    repo = tmp_path / "consumer"
    (repo / "pkg").mkdir(parents=True)
    files = {
        ".pre-commit-config.yaml": f"""
            repos:
              - repo: {source}
                rev: {rev}
                hooks:
                  - id: compile-ad-lint
        """,
        "README.md": "# consumer\n",
        # The hook's own environment has no torch: the target torch comes from the project's pins.
        "requirements.txt": "torch==2.13.0\n",
        "pkg/__init__.py": "",
        "pkg/models.py": """
            import torch

            fast = torch.compile(lambda x: torch.sin(x) * x)
        """,
    }
    for relative, text in files.items():
        (repo / relative).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    _git(repo, env, "init", "-q")
    _git(repo, env, "add", "-A")
    _git(repo, env, "commit", "-q", "--no-verify", "-m", "base")
    return repo, env


CLEAN = """
import torch

from pkg.models import fast


def predict(x):
    return fast(x)
"""

HAZARD = """
import torch.autograd.forward_ad as fwAD

from pkg.models import fast


def jvp(x, t):
    with fwAD.dual_level():
        return fwAD.unpack_dual(fast(fwAD.make_dual(x, t))).tangent
"""


def test_manifest_is_valid_for_pre_commit():
    from pre_commit.clientlib import load_manifest

    (hook,) = load_manifest(str(REPO_ROOT / ".pre-commit-hooks.yaml"))
    assert hook["id"] == "compile-ad-lint"
    assert hook["entry"] == "compile-ad-lint check --force-exclude --dependents"
    assert hook["language"] == "python"
    assert hook["types_or"] == ["python", "jupyter"]
    assert hook["require_serial"] is True
    assert not hook["additional_dependencies"]  # torch is not needed to analyze


def test_hook_passes_on_clean_and_fails_on_hazard(tmp_path: Path, hook_repo):
    repo, env = _consumer(tmp_path, hook_repo)

    # Nothing python staged: the hook is skipped and the run passes quietly.
    (repo / "README.md").write_text("# consumer\n\nmore\n")
    _git(repo, env, "add", "README.md")
    completed = _pre_commit(repo, env, "run")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "(no files to check)Skipped" in completed.stdout

    # A clean python file passes (the hook environment is built here, once for the module).
    (repo / "pkg" / "serve.py").write_text(CLEAN.lstrip("\n"))
    _git(repo, env, "add", "pkg/serve.py")
    completed = _pre_commit(repo, env, "run")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "compile-ad-lint" in completed.stdout and "Passed" in completed.stdout

    # A hazard fails, with the finding printed; the compiled callable lives in another (unstaged) module.
    _git(repo, env, "commit", "-q", "--no-verify", "-m", "clean")
    (repo / "pkg" / "train.py").write_text(HAZARD.lstrip("\n"))
    _git(repo, env, "add", "pkg/train.py")
    completed = _pre_commit(repo, env, "run")
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "Failed" in completed.stdout
    assert "pkg/train.py:8:" in completed.stdout and "CAL001" in completed.stdout


def test_installed_hook_blocks_the_commit(tmp_path: Path, hook_repo):
    repo, env = _consumer(tmp_path, hook_repo)
    completed = _pre_commit(repo, env, "install")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    (repo / "pkg" / "train.py").write_text(HAZARD.lstrip("\n"))
    _git(repo, env, "add", "pkg/train.py")
    commit = subprocess.run(
        ["git", "commit", "-m", "hazard"], cwd=repo, env=env, capture_output=True, text=True, timeout=900
    )
    assert commit.returncode != 0
    assert "CAL001" in commit.stdout + commit.stderr
    assert _git(repo, env, "log", "--format=%s") == "base"


def test_try_repo(tmp_path: Path, hook_repo):
    source, _, env = hook_repo
    repo, env = _consumer(tmp_path, hook_repo)
    (repo / "pkg" / "train.py").write_text(HAZARD.lstrip("\n"))
    completed = _pre_commit(repo, env, "try-repo", str(source), "compile-ad-lint", "--files", "pkg/train.py")
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "pkg/train.py:8:" in completed.stdout and "CAL001" in completed.stdout
    assert "for torch 2.13 (==2.13.0, project pins: requirements.txt)." in completed.stdout
    # models.py holds the compile site of train.py's finding: checking it reports the dependent.
    completed = _pre_commit(repo, env, "try-repo", str(source), "compile-ad-lint", "--files", "pkg/models.py")
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "pkg/train.py:8:" in completed.stdout and "    pkg/models.py:3:8: compiled here" in completed.stdout
    (repo / "pkg" / "serve.py").write_text(CLEAN.lstrip("\n"))
    completed = _pre_commit(repo, env, "try-repo", str(source), "compile-ad-lint", "--files", "pkg/serve.py")
    assert completed.returncode == 0, completed.stdout + completed.stderr


MODEL = """
import torch


def f(x):
    return torch.sin(x)
"""

JVP = """
import torch.autograd.forward_ad as fwAD

from pkg.model import f


def jvp(x, t):
    with fwAD.dual_level():
        return fwAD.unpack_dual(f(fwAD.make_dual(x, t))).tangent
"""


def test_hook_reports_a_hazard_in_an_unstaged_dependent(tmp_path: Path, hook_repo):
    """Staging only ``model.py`` after adding ``@torch.compile`` to ``f`` fails the hook with the
    finding in ``jvp.py``, which calls ``f`` inside ``dual_level`` and was not staged."""
    repo, env = _consumer(tmp_path, hook_repo)
    (repo / "pkg" / "model.py").write_text(MODEL.lstrip("\n"))
    (repo / "pkg" / "jvp.py").write_text(JVP.lstrip("\n"))
    (repo / "pkg" / "other.py").write_text("x = 1\n")
    _git(repo, env, "add", "-A")
    _git(repo, env, "commit", "-q", "--no-verify", "-m", "jvp over an eager f")

    compiled = MODEL.lstrip("\n").replace("def f(x):", "@torch.compile\ndef f(x):")
    (repo / "pkg" / "model.py").write_text(compiled)
    (repo / "pkg" / "other.py").write_text("x = 2\n")  # changed, not staged: stashed by pre-commit
    _git(repo, env, "add", "pkg/model.py")
    completed = _pre_commit(repo, env, "run")
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "Failed" in completed.stdout
    assert "pkg/jvp.py:8:33: CAL001" in completed.stdout, completed.stdout
    assert "    pkg/model.py:5:5: compiled here (@torch.compile" in completed.stdout, completed.stdout
    assert "Found 1 finding in 2 files" in completed.stdout, completed.stdout  # model.py and jvp.py

    # The hazard is committed; a staged file its evidence does not touch passes.
    _git(repo, env, "commit", "-q", "--no-verify", "-m", "compiled f")
    _git(repo, env, "add", "pkg/other.py")
    completed = _pre_commit(repo, env, "run")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    # Staging the dependent itself reports it too.
    (repo / "pkg" / "jvp.py").write_text(JVP.lstrip("\n") + "\n# touched\n")
    _git(repo, env, "add", "pkg/jvp.py")
    completed = _pre_commit(repo, env, "run")
    assert completed.returncode == 1 and "pkg/jvp.py:8:33: CAL001" in completed.stdout, completed.stdout


def test_hook_skips_staged_files_the_config_excludes(tmp_path: Path, hook_repo):
    repo, env = _consumer(tmp_path, hook_repo)
    (repo / "pyproject.toml").write_text('[tool.compile-ad-lint]\nextend-exclude = ["pkg/legacy"]\n')
    (repo / "pkg" / "legacy").mkdir()
    (repo / "pkg" / "legacy" / "train.py").write_text(HAZARD.lstrip("\n"))
    _git(repo, env, "add", "pyproject.toml", "pkg/legacy/train.py")
    completed = _pre_commit(repo, env, "run")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "CAL001" not in completed.stdout
    # The same hazard in a file the configuration does not exclude fails the hook.
    (repo / "pkg" / "train.py").write_text(HAZARD.lstrip("\n"))
    _git(repo, env, "add", "pkg/train.py")
    completed = _pre_commit(repo, env, "run")
    assert completed.returncode == 1 and "pkg/train.py:8:" in completed.stdout, completed.stdout
    assert "pkg/legacy" not in completed.stdout


def test_hook_checks_staged_notebooks(tmp_path: Path, hook_repo):
    import json

    repo, env = _consumer(tmp_path, hook_repo)
    cell = {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {},
        "outputs": [],
        "source": ["%load_ext autoreload\n", HAZARD.strip("\n") + "\n", "jvp(1, 2)\n"],
    }
    document = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (repo / "explore.ipynb").write_text(json.dumps(document, indent=1))
    _git(repo, env, "add", "explore.ipynb")
    completed = _pre_commit(repo, env, "run")
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "explore.ipynb:cell 1:9:" in completed.stdout and "CAL001" in completed.stdout, completed.stdout
