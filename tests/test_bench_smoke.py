"""Smoke test of bench/run_bench.py on the small fixtures corpus: the harness works, no timing asserted."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "run_bench.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("run_bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["run_bench"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("run_bench", None)


def test_fixtures_corpus_cold_warm_touched(bench, tmp_path):
    corpus = bench.prepare_fixtures_corpus(tmp_path, copies=2)
    assert {p.name for p in corpus.directory.iterdir()} == {"proj_1", "proj_2"}
    assert len(corpus.files) == 2 * len(list(bench.FIXTURES.rglob("*.py")))
    assert corpus.lines > 0 and corpus.bytes > 0
    assert corpus.anchor_file is not None and b".backward(" in corpus.anchor_file.read_bytes()
    # The copies differ by a trailing comment, so the content-keyed cache cannot share them.
    first, second = (corpus.directory / f"proj_{k}" / "cal002_amp_training.py" for k in (1, 2))
    assert first.read_bytes() != second.read_bytes()

    original = corpus.anchor_file.read_bytes()
    result = bench.measure_corpus(corpus, repeat=1, torchfix=None, parse_only=True, parse_two=False)
    assert corpus.anchor_file.read_bytes() == original  # the touched file is restored
    names = [row.name for row in result.rows]
    assert names == [bench.OURS_COLD, bench.OURS_WARM, bench.OURS_TOUCHED, bench.OURS_COLD_J1, bench.PARSE_1]
    assert result.consistent, result.mismatches

    rows = {row.name: row for row in result.rows}
    cold, warm, touched = (rows[n].runs[0].stats for n in (bench.OURS_COLD, bench.OURS_WARM, bench.OURS_TOUCHED))
    assert cold["files"] == len(corpus.files) and cold["parsed"] > 0
    assert warm["parsed"] == 0 and warm["cached"] > 0
    assert touched["parsed"] <= 1  # a trailing comment may leave every cached block valid
    assert rows[bench.OURS_COLD].runs[0].findings  # the fixtures have findings to compare
    for row in result.rows:
        m = row.runs[0].measurement
        assert m.wall_s > 0 and m.cpu_s > 0 and m.peak_mb > 0

    table = bench.format_table(result.rows, "fixtures")
    for name in names:
        assert name in table
    assert f"{bench.OURS_COLD} / {bench.PARSE_1}" in bench.ratios(result.rows)


def test_compare_findings_reports_a_difference(bench):
    a = [{"code": "CAL001", "path": "x.py", "line": 1}]
    b = [{"code": "CAL002", "path": "x.py", "line": 2}]
    assert bench.compare_findings([("cold", a), ("warm", a)]) == []
    problems = bench.compare_findings([("cold", a), ("warm", b)])
    assert len(problems) == 1 and problems[0].startswith("warm:")


def test_measure_sums_a_process_tree(bench, tmp_path):
    code = "import subprocess, sys; subprocess.run([sys.executable, '-c', 'x = bytearray(60 * 2**20); import time; time.sleep(0.5)'])"
    m = bench.measure([sys.executable, "-c", code], tmp_path, interval=0.05)
    assert m.returncode == 0
    assert m.max_process_rss_mb >= 60  # the grandchild, through wait4
    assert m.peak_mb >= 60
