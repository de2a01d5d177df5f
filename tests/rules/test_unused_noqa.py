"""CAL901 unused-noqa (Ruff's RUF100 for this tool's codes), through the real CLI and flake8: a
suppression that silences nothing is reported when the check covers the whole project, and its
fix removes it (or only its unused codes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from frontends.test_cli_contract import cli

from compile_ad_lint.testing import write_files

TRAIN = """\
import torch

model = torch.compile(torch.nn.Linear(4, 4))


def step(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x).sum()
    loss.backward()  # noqa: CAL002, CAL005


x = torch.ones(2)  # noqa: E501, CAL004  # keep this comment
y = torch.ones(2)  # compile-ad-lint: ignore
z = torch.ones(2)  # noqa: CAL999
w = torch.ones(2)  # noqa
v = torch.ones(2)  # noqa: CAL004, CAL901
s = "# noqa: CAL002 in a string is text"
"""

FIXED = """\
import torch

model = torch.compile(torch.nn.Linear(4, 4))


def step(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x).sum()
    loss.backward()  # noqa: CAL002


x = torch.ones(2)  # noqa: E501  # keep this comment
y = torch.ones(2)
z = torch.ones(2)
w = torch.ones(2)  # noqa
v = torch.ones(2)  # noqa: CAL004, CAL901
s = "# noqa: CAL002 in a string is text"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_files(tmp_path / "proj", {"pyproject.toml": "[tool.compile-ad-lint]\n", "train.py": TRAIN})


def _findings(completed) -> list[str]:  # type: ignore[no-untyped-def]
    return [line for line in completed.stdout.splitlines() if ": CAL" in line]


def test_unused_suppressions_are_reported_and_fixed(project: Path):
    completed = cli(project, "check", ".", "--no-cache", "--concise")
    assert completed.returncode == 1
    assert _findings(completed) == [
        "train.py:9:22: CAL901 [*] Unused `noqa` directive (unused: `CAL005`)",
        "train.py:12:20: CAL901 [*] Unused `noqa` directive (unused: `CAL004`)",
        "train.py:13:20: CAL901 [*] Unused blanket `compile-ad-lint: ignore` directive",
        "train.py:14:20: CAL901 [*] Unused `noqa` directive (unknown: `CAL999`)",
    ]
    fixed = cli(project, "check", ".", "--no-cache", "--fix")
    assert fixed.returncode == 0, fixed.stdout
    assert "Fixed 4 findings in 1 file." in fixed.stdout
    assert (project / "train.py").read_text() == FIXED
    assert cli(project, "check", ".", "--no-cache").returncode == 0


def test_only_a_check_of_the_whole_project_judges_suppressions(tmp_path: Path):
    """A finding in one file can come from another file's code: checked alone, a file's noqa is not
    judged (it may silence what the rest of the project produces there)."""
    project = write_files(
        tmp_path / "proj",
        {
            "pyproject.toml": "[tool.compile-ad-lint]\n",
            "helpers.py": "def backward_of(loss):\n    loss.backward()  # noqa: CAL002\n",
            "stale.py": "import torch\n\nx = torch.ones(2)  # noqa: CAL002\n",
            "train.py": (
                "import torch\nfrom helpers import backward_of\n\nmodel = torch.compile(torch.nn.Linear(4, 4))\n\n\n"
                "def step(x):\n    with torch.autocast('cpu', dtype=torch.bfloat16):\n        loss = model(x).sum()\n"
                "    backward_of(loss)\n"
            ),
        },
    )
    whole = cli(project, "check", ".", "--no-cache", "--concise")
    assert _findings(whole) == ["stale.py:3:20: CAL901 [*] Unused `noqa` directive (unused: `CAL002`)"]
    alone = cli(project, "check", "helpers.py", "stale.py", "--no-cache")
    assert alone.returncode == 0, alone.stdout  # not judged: neither is reported
    dependents = cli(project, "check", "--dependents", "stale.py", "helpers.py", "--no-cache", "--concise")
    assert _findings(dependents) == _findings(whole)


def test_codes_of_rules_that_did_not_run_are_not_judged(project: Path):
    selected = cli(project, "check", ".", "--no-cache", "--concise", "--select", "CAL001,CAL9")
    assert _findings(selected) == [
        "train.py:13:20: CAL901 [*] Unused blanket `compile-ad-lint: ignore` directive",
        "train.py:14:20: CAL901 [*] Unused `noqa` directive (unknown: `CAL999`)",
    ]
    ignored = cli(project, "check", ".", "--no-cache", "--concise", "--per-file-ignores", "train.py:CAL901")
    assert not any("CAL901" in line for line in _findings(ignored))
    off = cli(project, "check", ".", "--no-cache", "--ignore", "CAL901")
    assert off.returncode == 0


def test_flake8_reports_them_too(project: Path):
    flake8 = subprocess.run(
        [str(Path(sys.executable).parent / "flake8"), "--select", "CAL", "train.py"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert flake8.returncode == 1, flake8.stderr
    assert "train.py:12:20: CAL901 Unused `noqa` directive (unused: `CAL004`)" in flake8.stdout


def test_a_file_the_analysis_could_not_read_is_not_judged(project: Path):
    (project / "broken.py").write_text("x = 1  # noqa: CAL002\nloss.backward()\ndef f(:\n    pass\n")
    completed = cli(project, "check", ".", "--no-cache", "--concise")
    assert not any(line.startswith("broken.py") and "CAL901" in line for line in _findings(completed))
    assert any(line.startswith("broken.py:3:") and "CAL900" in line for line in _findings(completed))


def test_in_a_notebook_it_is_reported_in_its_cell_without_a_fix(project: Path):
    cell = {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {},
        "outputs": [],
        "source": ["x = 1  # noqa: CAL002\n"],
    }
    markdown = {"cell_type": "markdown", "metadata": {}, "source": ["# notes\n"]}
    document = {"cells": [markdown, cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (project / "explore.ipynb").write_text(json.dumps(document))
    completed = cli(project, "check", "explore.ipynb", ".", "--no-cache", "--format", "json")
    [finding] = [f for f in json.loads(completed.stdout)["findings"] if f["path"] == "explore.ipynb"]
    assert (finding["code"], finding["cell"], finding["line"], finding["column"]) == ("CAL901", 2, 1, 8)
    assert finding["fix"] is None
