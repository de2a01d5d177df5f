"""Every fix compile-ad-lint offers, verified at run time (CPU, small): the hazard is gone.

For each program in ``tests/data/fix_programs/`` (one hazard shape each), every kind of fix offered
for it is applied to a copy; the original, every fixed copy and, for CAL002/CAL003, the
matching-config run are executed in one process (``_driver.py``: torch is imported and warmed up
once; about 20 small inductor compiles in all). Then:

- CAL001: the original drops the tangent (or raises, or the Jacobian is wrong); every fixed copy
  gives the tangent (Jacobian) eager gives.
- CAL002: the original's gradients differ from the matching-config run (the same program under the
  config that matches the real backward, set globally, the finding's ``matching_config`` fact);
  every fixed copy's equal that run's, and eager's.
- CAL003: the original fails when the backward is traced; every fixed copy writes the valid value
  meant and runs, with eager's gradients (``aot_eager``: no kernel noise).
- A second analysis of each fixed copy no longer reports the findings the fix was for, a second
  ``--fix`` changes nothing, and ``check --fix --unsafe-fixes`` writes what the API's fixes do.
- Every plan kind of ``core.plans`` (and every compile spelling and value shape the fixes edit) is
  among those verified here: a fix this test does not verify cannot be offered unnoticed.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from compile_ad_lint import Config, Finding
from compile_ad_lint.api import Analyzer
from compile_ad_lint.cli import main
from compile_ad_lint.core.plans import (
    PLAN_KINDS,
    BackendEdit,
    CompileWithBackend,
    ReplaceConfigValue,
    WrapInConfigPatch,
)
from compile_ad_lint.fixes import Changes, Sources, ops_for, resolve

#: Every way of compiling whose backend the fix edits (``knowledge.torch_api.BACKEND_EDITS``), as findings spell it.
_EDITABLE_SPELLINGS = (
    "torch.compile",
    "@torch.compile",
    "torch._dynamo.optimize",
    "functools.partial(torch.compile)",
    "nn.Module.compile()",
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch"),
]

PROGRAMS = Path(__file__).resolve().parents[1] / "data" / "fix_programs"
DRIVER = PROGRAMS / "_driver.py"

#: program -> (code, findings expected, for CAL003 the valid value the fix should write)
EXPECTED: dict[str, tuple[str, int, object]] = {
    "cal001_function": ("CAL001", 1, None),
    "cal001_decorators": ("CAL001", 2, None),
    "cal001_module": ("CAL001", 1, None),
    "cal001_in_place": ("CAL001", 1, None),
    "cal001_through_calls": ("CAL001", 2, None),
    "cal001_inline": ("CAL001", 1, None),
    "cal001_jacobian": ("CAL001", 1, None),
    "cal002_backward_outside": ("CAL002", 1, None),
    "cal002_other_module": ("CAL002", 1, None),
    "cal002_backward_inside": ("CAL002", 1, None),
    "cal002_config_off": ("CAL002", 1, None),
    "cal003_dict": ("CAL003", 1, [["cpu", "bfloat16"]]),
    "cal003_tuple": ("CAL003", 1, [["cpu", "bfloat16"]]),
    "cal003_misspelled": ("CAL003", 1, "off"),
}


@dataclass
class Program:
    name: str
    code: str
    directory: Path
    findings: tuple[Finding, ...]
    #: plan kind name -> the directory of the copy fixed with that kind
    variants: dict[str, Path] = field(default_factory=dict)
    #: plan kind name -> the plans applied
    applied: dict[str, list[object]] = field(default_factory=dict)
    #: plan kind name -> findings of the program's code left in the fixed copy
    left: dict[str, int] = field(default_factory=dict)


def _analyze(directory: Path, sources: dict | None = None):  # type: ignore[no-untyped-def]
    report = Analyzer(Config(), use_cache=False, jobs=1).check([str(directory)], sources=sources)
    return report, resolve(report.findings, Sources(sources, dict(report.digests)))


def _apply(directory: Path, kind: type) -> list[object]:
    """Apply, to the copy in ``directory``, each finding's fix of ``kind``; the plans applied."""
    report, findings = _analyze(directory)
    sources = Sources(digests=dict(report.digests))
    changes = Changes(sources)
    applied = []
    for finding in findings:
        for fix in finding.fixes:
            if isinstance(fix.plan, kind) and fix.plan not in applied:
                changes.add(ops_for(fix.plan, sources))
                applied.append(fix.plan)
    for display, (parsed, text) in changes.render().items():
        sources.path(display).write_bytes(parsed.encode(text))
    return applied


def _matching(finding: Finding) -> object:
    """The finding's ``matching_config`` fact as the driver takes it."""
    value = ast.literal_eval(finding.facts_dict["matching_config"])
    if isinstance(value, str):
        return value
    return [[entry["device_type"], entry["dtype"].removeprefix("torch.")] for entry in value]


@pytest.fixture(scope="module")
def verified(tmp_path_factory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("fixes")
    programs: dict[str, Program] = {}
    jobs = []
    for name, (code, count, _valid) in EXPECTED.items():
        directory = root / "original" / name
        shutil.copytree(PROGRAMS / name, directory)
        _, findings = _analyze(directory)
        assert [f.code for f in findings] == [code] * count, (name, [(f.code, f.location.line) for f in findings])
        program = programs[name] = Program(name, code, directory, findings)
        jobs.append({"label": f"{name}/original", "dir": str(directory)})
        if code == "CAL002":
            jobs.append({"label": f"{name}/matching", "dir": str(directory), "config": _matching(findings[0])})
        kinds = list(dict.fromkeys(type(fix.plan) for f in findings for fix in f.fixes))
        assert kinds, f"{name}: no fix offered"
        for kind in kinds:
            variant = root / "fixed" / name / kind.__name__
            shutil.copytree(directory, variant)
            program.applied[kind.__name__] = _apply(variant, kind)
            program.variants[kind.__name__] = variant
            _, again = _analyze(variant)
            program.left[kind.__name__] = sum(1 for f in again if f.code == code)
            jobs.append({"label": f"{name}/{kind.__name__}", "dir": str(variant)})
    jobs_file, results_file = root / "jobs.json", root / "results.json"
    jobs_file.write_text(json.dumps(jobs))
    environment = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(root / "inductor"), "PYTHONDONTWRITEBYTECODE": "1"}
    completed = subprocess.run(
        [sys.executable, str(DRIVER), str(jobs_file), str(results_file)],
        env=environment,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return programs, json.loads(results_file.read_text())


def _pairs(values: dict) -> list[tuple[str, str]]:
    if "eager" in values:
        return [(key, "eager") for key in values if key != "eager"]
    return [(key, f"{key}_eager") for key in values if not key.endswith("_eager")]


def _close(a: list[float] | None, b: list[float] | None, tolerance: float = 1e-6) -> bool:
    if a is None or b is None or len(a) != len(b):
        return False
    return all(math.isclose(x, y, rel_tol=tolerance, abs_tol=tolerance) for x, y in zip(a, b))


def _relative(a: list[float], b: list[float]) -> float:
    difference = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))
    return difference / max(math.sqrt(sum(y * y for y in b)), 1e-30)


def _by_code(programs: dict[str, Program], code: str) -> list[Program]:
    return [p for p in programs.values() if p.code == code]


def test_cal001_fixes_restore_the_eager_tangent(verified) -> None:  # type: ignore[no-untyped-def]
    programs, results = verified
    for program in _by_code(programs, "CAL001"):
        original = results[f"{program.name}/original"]
        if "values" in original:  # the hazard: a tangent dropped or a wrong Jacobian, or a raise
            values = original["values"]
            assert any(not _close(values[a], values[b]) for a, b in _pairs(values)), (
                program.name,
                "the original has no hazard",
            )
        else:
            assert original["error"] in {"NotImplementedError", "BackendCompilerFailed"}, (program.name, original)
        for kind in program.variants:
            fixed = results[f"{program.name}/{kind}"]
            assert "values" in fixed, (program.name, kind, fixed)
            for a, b in _pairs(fixed["values"]):
                assert _close(fixed["values"][a], fixed["values"][b]), (program.name, kind, a)


def test_cal002_fixes_give_the_gradients_of_the_matching_config(verified) -> None:  # type: ignore[no-untyped-def]
    programs, results = verified
    for program in _by_code(programs, "CAL002"):
        original = results[f"{program.name}/original"]["values"]
        matching = results[f"{program.name}/matching"]["values"]
        # The hazard is real: the config as written gives other gradients than the matching one.
        assert _relative(original["grad"], matching["grad"]) > 1e-4, program.name
        assert _relative(matching["grad"], matching["eager"]) < 1e-5, program.name
        for kind in program.variants:
            fixed = results[f"{program.name}/{kind}"]
            assert "values" in fixed, (program.name, kind, fixed)
            assert _relative(fixed["values"]["grad"], matching["grad"]) < 1e-6, (program.name, kind)
            assert _relative(fixed["values"]["grad"], fixed["values"]["eager"]) < 1e-5, (program.name, kind)


def valid(program: Program) -> object:
    return EXPECTED[program.name][2]


def test_cal003_fixes_trace_and_match_the_valid_value(verified) -> None:  # type: ignore[no-untyped-def]
    programs, results = verified
    for program in _by_code(programs, "CAL003"):
        original = results[f"{program.name}/original"]
        assert "AssertionError" in original.get("error", "") + original.get("detail", ""), (program.name, original)
        for kind, plans in program.applied.items():
            assert [plan.replacement for plan in plans] == [
                None if isinstance(valid(program), list) else valid(program)
            ], program.name  # type: ignore[attr-defined]
            fixed = results[f"{program.name}/{kind}"]
            assert "values" in fixed, (program.name, kind, fixed)
            assert _relative(fixed["values"]["grad"], fixed["values"]["eager"]) < 1e-5, (program.name, kind)


def test_a_second_analysis_reports_nothing_for_the_fixed_findings(verified) -> None:  # type: ignore[no-untyped-def]
    programs, _ = verified
    for program in programs.values():
        for kind, plans in program.applied.items():
            offered = sum(1 for f in program.findings if any(isinstance(fix.plan, type(plans[0])) for fix in f.fixes))
            assert program.left[kind] == len(program.findings) - offered, (program.name, kind)


def test_every_fix_kind_and_shape_offered_is_verified(verified) -> None:  # type: ignore[no-untyped-def]
    programs, _ = verified
    plans = [plan for program in programs.values() for applied in program.applied.values() for plan in applied]
    assert {type(plan) for plan in plans} == set(PLAN_KINDS)
    compiled = [site for plan in plans if isinstance(plan, CompileWithBackend) for site in plan.sites]
    assert {site.edit for site in compiled} == set(BackendEdit)
    assert {site.spelling for site in compiled} == set(_EDITABLE_SPELLINGS)
    wrapped = {
        plan.value if isinstance(plan.value, str) else "list" for plan in plans if isinstance(plan, WrapInConfigPatch)
    }
    assert wrapped == {"off", "same_as_forward", "list"}
    replaced = {plan.replacement or "list" for plan in plans if isinstance(plan, ReplaceConfigValue)}
    assert replaced == {"list", "off"}


def test_cli_fix_writes_what_the_fixes_do_and_is_idempotent(verified, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    programs, _ = verified
    for program in programs.values():
        copy = tmp_path / program.name
        shutil.copytree(program.directory, copy)
        assert main(["check", str(copy), "--fix", "--unsafe-fixes", "--no-cache", "-q"]) == 0, program.name
        primary = type(program.findings[0].fix.plan).__name__  # type: ignore[union-attr]
        if len({type(f.fix.plan) for f in program.findings if f.fix}) == 1:  # one kind: the same files as that copy
            for path in sorted(copy.rglob("*.py")):
                assert path.read_text() == (program.variants[primary] / path.relative_to(copy)).read_text(), (
                    program.name,
                    path.name,
                )
        before = {path: path.read_bytes() for path in copy.rglob("*.py")}
        assert main(["check", str(copy), "--fix", "--unsafe-fixes", "--no-cache", "-q"]) == 0
        assert {path: path.read_bytes() for path in copy.rglob("*.py")} == before, program.name
    capsys.readouterr()
