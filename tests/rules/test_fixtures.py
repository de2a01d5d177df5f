"""The realistic example programs under ``fixtures/``, checked against their inline markers.

Conventions (flake8-bugbear ``eval_files`` style):

* A line that must be reported ends with ``# expect: CAL001`` (several codes:
  ``# expect: CAL001, CAL002``). The finding's primary location must be on that line.
* A line without an ``# expect:`` marker must not be reported.
* A line that deliberately shows a *negative* situation (something that looks like a hazard but is
  safe: a safe backend, ``torch.func.jvp``, ``re.compile``, a call after the region, a matching
  config, ...) carries ``# ok: <why>``. The marker is documentation plus a count: the suite keeps at
  least as many marked negatives as expected findings, so the fixtures keep testing precision and not
  only recall. ``# ok:`` lines are checked like every other unmarked line: nothing may be reported there.

The whole ``fixtures/`` directory is analyzed once per torch series the knowledge has facts for
(``--target-torch 2.13``, ``2.14``, ...), as one project (cross-module chains and script-sibling
imports resolve the way ``python script.py`` would), and each fixture file is compared on its own
with the markers that hold on that series (``# expect[>=2.14]: CAL006``), so a failure names the
series, the file and the lines that differ.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from compile_ad_lint.api import Analyzer
from compile_ad_lint.knowledge.versions import KNOWN_SERIES
from compile_ad_lint.testing import EXPECT, config_for, expected_in, reported

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
OK = re.compile(r"#\s*ok:")

MIN_EXPECTED = 40


def _display(path: Path) -> str:
    """How the analyzer shows ``path`` (it keeps paths as the user named them: here absolute)."""
    return str(path)


FIXTURE_FILES = sorted(FIXTURES.rglob("*.py"))


@pytest.fixture(scope="module", params=KNOWN_SERIES, ids=lambda s: f"torch{s}")
def findings_by_file(request):
    """Run the analyzer once per torch series over the whole fixtures directory; findings grouped by
    display path, their messages, and the series."""
    series = request.param
    report = Analyzer(config_for(series), use_cache=False, jobs=1).check([str(FIXTURES)])
    grouped: dict[str, set[tuple[str, int, str]]] = {}
    for key in reported(report.findings):
        grouped.setdefault(os.path.normpath(key[0]), set()).add(key)
    messages = {(os.path.normpath(f.location.path), f.location.line, f.code): f.message for f in report.findings}
    return grouped, messages, series


def _normalized(entries: set[tuple[str, int, str]]) -> set[tuple[str, int, str]]:
    return {(os.path.normpath(path), line, code) for path, line, code in entries}


def _source_line(path: Path, number: int) -> str:
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return lines[number - 1].strip() if 0 < number <= len(lines) else "<no such line>"


def test_fixture_files_exist():
    assert FIXTURE_FILES, f"no fixtures found under {FIXTURES}"


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_fixture_matches_markers(path: Path, findings_by_file):
    grouped, messages, series = findings_by_file
    display = os.path.normpath(_display(path))
    expected = _normalized(expected_in(path, display, series=series))
    got = grouped.get(display, set())
    if got == expected:
        return
    missing = sorted(expected - got, key=lambda k: (k[1], k[2]))
    unexpected = sorted(got - expected, key=lambda k: (k[1], k[2]))
    report = [f"{display}: on torch {series} reported findings differ from the # expect: markers"]
    for _, line, code in missing:
        report.append(f"  missing    {line:4d} {code}  | {_source_line(path, line)}")
    for _, line, code in unexpected:
        report.append(f"  unexpected {line:4d} {code}  | {_source_line(path, line)}")
        report.append(f"             message: {messages.get((display, line, code), '?')}")
    pytest.fail("\n".join(report), pytrace=False)


def test_no_findings_outside_fixture_files(findings_by_file):
    grouped, _, _ = findings_by_file
    known = {os.path.normpath(_display(p)) for p in FIXTURE_FILES}
    assert set(grouped) <= known, f"findings reported for unknown paths: {sorted(set(grouped) - known)}"


def test_fixtures_are_substantial():
    expected = max(sum(len(expected_in(p, series=s)) for p in FIXTURE_FILES) for s in KNOWN_SERIES)
    negatives = sum(
        1
        for p in FIXTURE_FILES
        for line in p.read_text(encoding="utf-8", errors="replace").splitlines()
        if OK.search(line)
    )
    codes = {code for s in KNOWN_SERIES for p in FIXTURE_FILES for _, _, code in expected_in(p, series=s)}
    assert expected >= MIN_EXPECTED, f"only {expected} expected findings in fixtures/ (want at least {MIN_EXPECTED})"
    assert negatives >= expected, (
        f"{negatives} '# ok:' negatives for {expected} expected findings (want at least as many)"
    )
    assert {"CAL001", "CAL002", "CAL003", "CAL900"} <= codes, f"fixtures cover only {sorted(codes)}"


def test_no_line_is_both_expected_and_ok():
    for path in FIXTURE_FILES:
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
            assert not (EXPECT.search(line) and OK.search(line)), f"{path}:{number} carries both markers"
