"""What a Ruff user expects of fixes, through the real CLI: fixable findings marked ``[*]``, the
summary's "N fixable with `--fix`" and the unsafe ones counted apart, ``--unsafe-fixes`` alone,
``--show-fixes``, the fixable column of ``--statistics``, ``--add-noqa``'s one line, ``--fix`` on
stdin, and ``explain``/``rules`` saying whether a rule has a fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compile_ad_lint.testing import write_files

from .test_cli_contract import HAZARD, cli

#: A CAL002 with a safe fix (the wrap at the compiled call).
AMP = """\
import torch

model = torch.compile(torch.nn.Linear(4, 4))


def step(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x).sum()
    loss.backward()
"""
#: A CAL003 with an unsafe fix (a guess at the misspelled value) and one with none.
TYPO = """\
import torch._functorch.config as fc

fc.backward_pass_autocast = "of"
fc.backward_pass_autocast = None
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    # HAZARD is a CAL001, whose fixes are unsafe.
    return write_files(
        tmp_path / "proj",
        {"pyproject.toml": "[tool.compile-ad-lint]\n", "amp.py": AMP, "typo.py": TYPO, "hazard.py": HAZARD},
    )


def _lines(completed) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The finding lines by ``path:line``."""
    return {
        line.split(":")[0] + ":" + line.split(":")[1]: line for line in completed.stdout.splitlines() if ": CAL" in line
    }


def test_fixable_findings_are_marked_and_counted(project: Path):
    completed = cli(project, "check", ".", "--no-cache", "--concise")
    assert completed.returncode == 1
    lines = _lines(completed)
    assert " CAL002 [*] " in lines["amp.py:9"]  # a safe fix
    assert " CAL003 backward_pass_autocast" in lines["typo.py:3"]  # an unsafe fix: not applied by --fix
    assert " CAL003 backward_pass_autocast" in lines["typo.py:4"]  # no fix
    assert " CAL001 " in lines["hazard.py:9"] and "[*]" not in lines["hazard.py:9"]
    assert (
        completed.stdout.splitlines()[-2]  # just above the summary, which stays the last line
        == "[*] 1 fixable with `--fix` (2 unsafe fixes available with `--fix --unsafe-fixes`)."
    )
    # The full report names each fix under its finding (Ruff's help: line).
    full = cli(project, "check", "amp.py", "--no-cache").stdout
    assert (
        '    help: Wrap the compiled call at line 8 in `with torch._functorch.config.patch(backward_pass_autocast="off"):`'
        in full
    )


def test_unsafe_fixes_alone_marks_them_fixable(project: Path):
    completed = cli(project, "check", ".", "--no-cache", "--concise", "--unsafe-fixes")
    assert completed.returncode == 1, completed.stderr  # not a usage error
    lines = _lines(completed)
    assert " CAL003 [*] " in lines["typo.py:3"] and " CAL001 [*] " in lines["hazard.py:9"]
    assert " CAL003 [*] " not in lines["typo.py:4"]
    assert completed.stdout.splitlines()[-2] == "[*] 3 fixable with `--fix --unsafe-fixes`."
    only_unsafe = cli(project, "check", "typo.py", "--no-cache")
    assert only_unsafe.stdout.splitlines()[-2] == "1 unsafe fix available with `--fix --unsafe-fixes`."


def test_statistics_has_a_fixable_column(project: Path):
    completed = cli(project, "check", ".", "--no-cache", "--statistics")
    rows = completed.stdout.splitlines()
    assert rows[:3] == [
        "2  CAL003  [ ] invalid-backward-pass-autocast",
        "1  CAL001  [ ] compiled-callable-in-dual-level",
        "1  CAL002  [*] backward-autocast-mismatch",
    ]
    assert rows[-2].startswith("[*] 1 fixable") and rows[-1].startswith("Found 4 findings")
    unsafe = cli(project, "check", ".", "--no-cache", "--statistics", "--unsafe-fixes").stdout.splitlines()
    assert unsafe[0] == "2  CAL003  [*] invalid-backward-pass-autocast"


def test_show_fixes(project: Path):
    preview = cli(project, "check", "amp.py", "--no-cache", "--show-fixes")
    assert preview.returncode == 1
    assert "      -        loss = model(x).sum()" in preview.stdout
    assert '      +        with torch._functorch.config.patch(backward_pass_autocast="off"):' in preview.stdout
    assert (project / "amp.py").read_text() == AMP  # nothing written without --fix
    fixed = cli(project, "check", "amp.py", "typo.py", "--no-cache", "--fix", "--show-fixes")
    assert "Fixed 1 finding in 1 file:\n- amp.py:\n    1 × CAL002 (backward-autocast-mismatch)\n" in fixed.stdout
    assert (project / "amp.py").read_text() != AMP


def test_add_noqa_says_what_it_added(project: Path):
    completed = cli(project, "check", ".", "--no-cache", "--add-noqa")
    assert completed.returncode == 0
    assert completed.stdout == ""  # not the report of what it silenced
    assert completed.stderr.strip() == "Added 4 noqa directives to 3 files."
    again = cli(project, "check", ".", "--no-cache")
    assert again.returncode == 0, again.stdout


def test_fix_on_stdin_prints_the_fixed_source(project: Path):
    completed = cli(project, "check", "-", "--no-cache", "--fix", stdin=AMP)
    assert completed.returncode == 0, completed.stderr
    assert 'with torch._functorch.config.patch(backward_pass_autocast="off"):' in completed.stdout
    assert completed.stdout.startswith("import torch") and "Found" not in completed.stdout
    assert "Fixed 1 finding in 1 file." in completed.stderr and "No findings" in completed.stderr
    compile(completed.stdout, "fixed.py", "exec")
    # Nothing to fix: the source unchanged; what remains goes to stderr and sets the exit status.
    unchanged = cli(project, "check", "-", "--no-cache", "--fix", stdin=TYPO)
    assert unchanged.returncode == 1 and unchanged.stdout == TYPO
    assert "-:3:1: CAL003 " in unchanged.stderr
    diff = cli(project, "check", "-", "--no-cache", "--diff", stdin=AMP)
    assert diff.returncode == 1 and diff.stdout.startswith("--- -\n+++ -\n")


def test_explain_and_rules_say_whether_a_fix_exists(project: Path):
    rules = {line.split()[0]: line for line in cli(project, "rules").stdout.splitlines()}
    assert " safe/unsafe fix " in rules["CAL002"] and " unsafe fix " in rules["CAL001"]
    assert " no fix " in rules["CAL004"]
    assert (
        "\nFix is sometimes available (safe or unsafe; `--fix`, unsafe ones with `--unsafe-fixes`).\n"
        in cli(project, "explain", "CAL003").stdout
    )
    assert "\nFix is not available.\n" in cli(project, "explain", "CAL005").stdout


def test_declared_fix_availability_matches_the_fixtures():
    """Each rule's declared availability and safety against the fixes its fixture findings carry."""
    from compile_ad_lint.rules import ALL_RULES, FixAvailability

    root = Path(__file__).resolve().parents[2]
    findings = []
    for target in ("2.13", ">=2.14"):  # CAL006 is a finding from torch 2.14 on only
        completed = cli(root, "check", "fixtures", "--no-cache", "--format", "json", "--target-torch", target)
        findings += json.loads(completed.stdout)["findings"]
    for rule in ALL_RULES:
        own = [f for f in findings if f["code"] == rule.code]
        kinds = {fix["applicability"] for f in own for fix in [f["fix"], *f["alternative_fixes"]] if fix}
        if rule.fix_availability is FixAvailability.NEVER:
            assert not kinds, rule.code
        else:
            assert own and kinds == {kind.value for kind in rule.fix_safety}, (rule.code, kinds)
        if rule.fix_availability is FixAvailability.ALWAYS:
            assert all(f["fix"] for f in own), rule.code
