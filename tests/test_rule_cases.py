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
