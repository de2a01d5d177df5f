"""Every rule's VALID and INVALID cases, as tests (Fixit style)."""

from __future__ import annotations

import pytest

from compile_ad_lint.core.torch_versions import Series
from compile_ad_lint.knowledge.versions import KNOWN_SERIES
from compile_ad_lint.rules import ALL_RULES
from compile_ad_lint.testing import config_for, run_case

VALID = [
    pytest.param(rule, case, id=f"{rule.code}-valid-{i}") for rule in ALL_RULES for i, case in enumerate(rule.VALID)
]
INVALID = [
    pytest.param(rule, case, id=f"{rule.code}-invalid-{i}") for rule in ALL_RULES for i, case in enumerate(rule.INVALID)
]


@pytest.mark.parametrize(("rule", "case"), VALID)
@pytest.mark.parametrize("series", KNOWN_SERIES, ids=lambda s: f"torch{s}")
def test_valid_case_has_no_finding(rule, case, series, tmp_path):
    expected, reported = run_case(case, tmp_path, series=series)
    assert expected == set(), "valid cases carry no # expect: markers"
    assert reported == set(), case.note or case.code


@pytest.mark.parametrize(("rule", "case"), INVALID)
def test_invalid_case_is_reported_exactly(rule, case, tmp_path):
    """On every torch series the knowledge has facts for: exactly the markers that hold there, and
    the case's own rule on at least one of them."""
    own = False
    for series in KNOWN_SERIES:
        expected, reported = run_case(case, tmp_path / str(series), series=series)
        own = own or any(code == rule.code for _, _, code in expected)
        assert reported == expected, f"torch {series}: {case.note or case.code}"
    assert own, "an invalid case must expect its own rule on some torch version"


def test_every_rule_has_cases():
    for rule in ALL_RULES:
        assert rule.VALID and rule.INVALID, rule.code


def test_rules_take_the_files_whose_findings_are_kept_as_a_hint():
    """``reported_in`` names the files whose findings a check keeps (the language server checks one
    open file whose analysis reaches hundreds of forward-AD chains ending in other files): a rule
    may skip the others, and keeps every finding in the files named."""
    from compile_ad_lint import Config, Location
    from compile_ad_lint.facts import CompiledCallInDualRegion, Facts, Hop
    from compile_ad_lint.linking.values import Compiled
    from compile_ad_lint.rules.compiled_callable_in_dual_level import CompiledCallableInDualLevel

    compiled = Compiled(None, "inductor", Location.point("model.py", 3), "torch.compile")

    def through(path: str) -> CompiledCallInDualRegion:
        call = Location.point(path, 5, 9)
        return CompiledCallInDualRegion(Location.point(path, 4), (Hop(call, "step", "calls step"),), compiled, True)

    facts = Facts([through("probe.py"), through("train.py")], Config())
    rule = CompiledCallableInDualLevel(config_for(Series(2, 13)))  # 2.13: every dual call drops the tangent
    everywhere = list(rule.findings(facts))
    assert [f.location.path for f in everywhere] == ["probe.py", "train.py"]
    assert list(rule.findings(facts, reported_in={"train.py"})) == everywhere[1:]
    for other in ALL_RULES:  # every rule takes the hint
        assert list(other(Config()).findings(facts, reported_in=set())) in ([], list(other(Config()).findings(facts)))
