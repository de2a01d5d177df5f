"""Every rule's VALID and INVALID cases, as tests (Fixit style)."""

from __future__ import annotations

import pytest

from compile_ad_lint.rules import ALL_RULES
from compile_ad_lint.testing import run_case

VALID = [
    pytest.param(rule, case, id=f"{rule.code}-valid-{i}") for rule in ALL_RULES for i, case in enumerate(rule.VALID)
]
INVALID = [
    pytest.param(rule, case, id=f"{rule.code}-invalid-{i}") for rule in ALL_RULES for i, case in enumerate(rule.INVALID)
]


@pytest.mark.parametrize(("rule", "case"), VALID)
def test_valid_case_has_no_finding(rule, case, tmp_path):
    expected, reported = run_case(case, tmp_path)
    assert expected == set(), "valid cases carry no # expect: markers"
    assert reported == set(), case.note or case.code


@pytest.mark.parametrize(("rule", "case"), INVALID)
def test_invalid_case_is_reported_exactly(rule, case, tmp_path):
    expected, reported = run_case(case, tmp_path)
    assert any(code == rule.code for _, _, code in expected), "an invalid case must expect its own rule"
    assert reported == expected


def test_every_rule_has_cases():
    for rule in ALL_RULES:
        assert rule.VALID and rule.INVALID, rule.code


def test_rules_take_the_files_whose_findings_are_kept_as_a_hint():
    """``reported_in`` names the files whose findings a check keeps (the language server checks one
    open file whose analysis reaches hundreds of forward-AD chains ending in other files): a rule
    may skip the others, and keeps every finding in the files named."""
    from compile_ad_lint.config import Config
    from compile_ad_lint.findings import Location
    from compile_ad_lint.linking.events import CompiledCallInDualRegion, Hop
    from compile_ad_lint.linking.values import Compiled
    from compile_ad_lint.rules.compiled_callable_in_dual_level import CompiledCallableInDualLevel

    compiled = Compiled(None, "inductor", Location.point("model.py", 3), "torch.compile")

    def through(path: str) -> CompiledCallInDualRegion:
        call = Location.point(path, 5, 9)
        return CompiledCallInDualRegion(Location.point(path, 4), (Hop(call, "step", "calls step"),), compiled, True)

    events = [through("probe.py"), through("train.py")]
    rule = CompiledCallableInDualLevel(Config())
    everywhere = list(rule.findings(events))
    assert [f.location.path for f in everywhere] == ["probe.py", "train.py"]
    assert list(rule.findings(events, reported_in={"train.py"})) == everywhere[1:]
    for other in ALL_RULES:  # every rule takes the hint
        assert list(other(Config()).findings(events, reported_in=set())) in ([], list(other(Config()).findings(events)))
