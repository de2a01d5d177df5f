"""Rule docs are generated from the rule modules and must be current."""

from __future__ import annotations

from pathlib import Path

import pytest

from compile_ad_lint.cli import main
from compile_ad_lint.docs import rule_pages
from compile_ad_lint.rules import ALL_RULES

DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules"


@pytest.mark.parametrize("name", sorted(rule_pages()))
def test_committed_docs_are_current(name):
    committed = DOCS / name
    assert committed.is_file(), f"missing {committed}; run python -m compile_ad_lint.docs"
    assert committed.read_text(encoding="utf-8") == rule_pages()[name], (
        f"{name} is stale; run python -m compile_ad_lint.docs"
    )


def test_no_orphan_pages():
    assert {p.name for p in DOCS.glob("*.md")} == set(rule_pages())


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_docs_have_the_fixed_headings(rule):
    text = rule.documentation()
    positions = [text.index(h) for h in ("## What it does", "## Why is this bad?", "## Example", "## Use instead")]
    assert positions == sorted(positions)


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_explain_prints_the_docs(rule, capsys):
    assert main(["explain", rule.code]) == 0
    shown = capsys.readouterr().out
    # The page, then where it is online and in the source tree.
    assert (
        shown
        == f"{rule.documentation()}\nThis page: {rule.docs_url()} (docs/rules/{rule.code}.md in the source tree).\n"
    )
    assert main(["explain", rule.name]) == 0


def test_the_code_table_lists_every_rule_in_order() -> None:
    """The settings validate codes against ``core/codes.py`` without importing the rules."""
    from compile_ad_lint.core.codes import CODES

    assert [(rule.code, rule.name, rule.severity) for rule in ALL_RULES] == [
        (row.code, row.name, row.severity) for row in CODES
    ]


def test_a_rule_outside_the_code_table_is_refused() -> None:
    from compile_ad_lint.core.findings import Severity
    from compile_ad_lint.rules import Rule

    with pytest.raises(TypeError, match="CAL777"):
        type("Stray", (Rule,), {"code": "CAL777", "name": "stray", "severity": Severity.ERROR})
