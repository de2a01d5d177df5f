"""A check served from its record (a warm run: nothing changed since the last check) loads none of
the engine's analysis: importing it was a third of a warm run of the torch tree (docs/performance.md,
"warm path"). Only a finding's evidence needs the rules (and the facts they hold) to be decoded.
Checked in a fresh interpreter, on what it imported and what it printed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

#: What analyzing loads and a check served from its record never needs.
ANALYSIS = (
    "compile_ad_lint.linking.incremental",
    "compile_ad_lint.linking.interpreter",
    "compile_ad_lint.pipeline.workspace",
    "compile_ad_lint.pipeline.root_results",
    "compile_ad_lint.summary.view",
    "compile_ad_lint.summary.extract",
    # The JSON report's fix edits come from the cache: none is built with LibCST.
    "compile_ad_lint.fixes.parsed",
    "compile_ad_lint.fixes.transform",
    "libcst",
)
#: What decoding a finding's evidence loads: a record without findings needs none of it either.
EVIDENCE = (
    "compile_ad_lint.rules",
    "compile_ad_lint.facts",
    "compile_ad_lint.linking.events",
    "compile_ad_lint.linking.values",
    "compile_ad_lint.linking.contexts",
    "compile_ad_lint.summary",
)

_PROBE = """
import json, sys
from compile_ad_lint.cli import main
main(sys.argv[1:])
sys.__stdout__.write("\\n" + json.dumps(sorted(sys.modules)))
"""


def _check(project: Path, *arguments: str) -> tuple[str, list[str]]:
    """What ``check`` printed, and the modules it imported."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, "check", ".", *arguments],
        capture_output=True,
        text=True,
        cwd=project,
        timeout=300,
    )
    printed, modules = done.stdout.rsplit("\n", 1)
    return printed, json.loads(modules)


def _untimed(report: str) -> str:
    return re.sub(r" in [0-9.]+s,", " in ...,", report)


def _under(modules: list[str], packages: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules for p in packages if m == p or m.startswith(p + "."))


def _project(tmp_path: Path, source: str) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.compile-ad-lint]\n")
    (tmp_path / "train.py").write_text(source)
    return tmp_path


FOUND = (
    "import torch\n\n"
    "model = torch.compile(torch.nn.Linear(2, 2))\n"
    "with torch.autocast('cpu'):\n"
    "    loss = model(torch.ones(2)).sum()\n"
    "loss.backward()\n"
)
CLEAN = "import torch\n\nmodel = torch.compile(torch.nn.Linear(2, 2))\nmodel(torch.ones(2)).sum().backward()\n"


def test_a_warm_check_without_findings_loads_no_analysis(tmp_path: Path) -> None:
    project = _project(tmp_path, CLEAN)
    cold_report, cold = _check(project)
    assert _under(cold, ANALYSIS), "the probe must see a cold check analyze"
    warm_report, warm = _check(project)
    # The same summary line but for the timing and where the files came from.
    assert _untimed(warm_report) == _untimed(cold_report).replace("1 parsed, 0 cached", "0 parsed, 1 cached")
    assert _under(warm, ANALYSIS + EVIDENCE) == []


def test_a_warm_check_with_findings_loads_only_their_evidence(tmp_path: Path) -> None:
    project = _project(tmp_path, FOUND)
    for output_format in ("json", "text", "sarif", "github", "gitlab", "junit"):
        cold_report, cold = _check(project, "--no-cache", "--format", output_format)
        assert "CAL002" in cold_report and _under(cold, ANALYSIS)
        _check(project, "--format", output_format)  # stores the record
        warm_report, warm = _check(project, "--format", output_format)
        assert _under(warm, ANALYSIS) == [], output_format
        if output_format == "json":  # the same findings, every field, as the cold run's
            assert json.loads(warm_report)["findings"] == json.loads(cold_report)["findings"]
