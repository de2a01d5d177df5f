"""The per-version knowledge rows against the facts recorded on each torch version.

``facts/recorded/torch-<release>.json`` holds what each case of each facts script gave on one release
per known series (``knowledge.versions.RECORDED``). Every row and claim of ``knowledge.behaviour``
that holds for a series must agree with that series' record, and every recorded case of the
version-sensitive scripts must be claimed by some row, so a new version's record that changes an
outcome fails here until the tables say so.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from compile_ad_lint.knowledge import behaviour
from compile_ad_lint.knowledge.behaviour import CallOrder, CompiledKind, forward_ad_row
from compile_ad_lint.knowledge.versions import KNOWN_SERIES, RECORDED, Series

ROOT = Path(__file__).resolve().parents[2]
FACTS = ROOT / "facts"
#: Scripts whose every case must be claimed by a row (the ones the analysis reads per version).
CLAIMED_SCRIPTS = ("forward_ad", "compile_scope", "backward_autocast", "double_backward_and_unused_outputs")
SCRIPTS = CLAIMED_SCRIPTS


def _record(series: Series) -> dict:
    return json.loads((FACTS / "recorded" / f"torch-{RECORDED[series]}.json").read_text())


def _cases(script: str) -> tuple[str, ...]:
    spec = importlib.util.spec_from_file_location(f"facts_{script}", FACTS / f"{script}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # the scripts import torch only inside their cases
    return tuple(module.CASES)


@pytest.mark.parametrize("series", KNOWN_SERIES, ids=str)
def test_each_known_series_has_a_complete_record(series):
    record = _record(series)
    assert record["torch"] == RECORDED[series]
    for script in SCRIPTS:
        assert set(record["facts"][script]) == set(_cases(script)), f"{script}: record and cases differ"


@pytest.mark.parametrize("series", KNOWN_SERIES, ids=str)
def test_rows_agree_with_the_record(series):
    facts = _record(series)["facts"]
    wrong = [
        f"{name}: {fact.script} / {fact.case!r} recorded {facts[fact.script][fact.case]!r}, row says {sorted(fact.outcomes)}"
        for name, fact in behaviour.claimed(series)
        if facts[fact.script][fact.case] not in fact.outcomes
    ]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("series", KNOWN_SERIES, ids=str)
def test_every_recorded_case_is_claimed(series):
    facts = _record(series)["facts"]
    claimed = {(fact.script, fact.case) for _, fact in behaviour.claimed(series)}
    unclaimed = [
        (script, case) for script in CLAIMED_SCRIPTS for case in facts[script] if (script, case) not in claimed
    ]
    assert not unclaimed, f"recorded on torch {series} but claimed by no row: {unclaimed}"


@pytest.mark.parametrize("series", KNOWN_SERIES, ids=str)
@pytest.mark.parametrize("kind", list(CompiledKind), ids=lambda k: k.name)
def test_exactly_one_forward_ad_row_per_question(series, kind):
    for order in CallOrder:
        for fullgraph in (False, True):
            rows = [
                row
                for row in behaviour.FORWARD_AD_ROWS
                if row.kind is kind
                and row.order is order
                and row.fullgraph in (None, fullgraph)
                and row.versions.holds_for(series)
            ]
            assert len(rows) == 1, (kind, order, fullgraph, series, rows)
            assert forward_ad_row(kind, order, fullgraph, series) is rows[0]


def test_every_row_rests_on_a_recorded_fact():
    for row in behaviour.FORWARD_AD_ROWS:
        assert row.facts, row
    for scope in behaviour.IN_PLACE_COMPILE_ROWS:
        assert scope.facts, scope


@pytest.mark.slow
def test_the_installed_torch_agrees_with_its_record():
    """CI's torch (the test pin) gives what was recorded for it, on the cases whose outcome changed
    between versions (each runs in its own process and compiles once)."""
    pytest.importorskip("torch")
    from importlib.metadata import version

    installed = version("torch").split("+", 1)[0]
    if installed not in RECORDED.values():
        pytest.skip(f"no record for torch {installed}")
    runs = {
        "forward_ad": [
            "function, first call dual",
            "function, first call dual, fullgraph=True",
            "function, plain first",
            "torch.compile(module with parameters), first call dual",
            "forward-mode jacobian, plain first, sin(x**3) on 4",
        ],
        "compile_scope": ["built-in nn.Linear .compile() in place", "project module .compile() in place"],
    }
    for script, cases in runs.items():
        done = subprocess.run(
            [sys.executable, str(FACTS / f"{script}.py"), "--check", "--jobs", "2", *cases],
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0, done.stdout + done.stderr
