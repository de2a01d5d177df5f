"""CAL002 verdicts under kernel noise, from hand-built comparison records (no torch, no subprocess).

Gradients are three-value vectors around eager's ``[1, 0, 0]``: the as-written run is ``[1, a, 0]`` and
the matching run ``[1, 0, b]``, so their relative distances to eager are ``a`` and ``b`` and the fix
differential (as written vs matching, same backend) is about ``sqrt(a^2 + b^2)``.
"""

from __future__ import annotations

import math

import pytest

from compile_ad_lint import Verdict
from compile_ad_lint.confirm import compare

SITE = compare.Site("/p/train.py", (10, 10))
STACK = [["/p/train.py", 10]]
FLAGGED = frozenset({0})


def _run(offset: int, *, forced: bool = False, assumed: str | None = None, nodes: int = 3) -> dict:
    run = {
        "status": "ok",
        "records": [
            {
                "kind": "backward",
                "stack": STACK,
                "tensors": [{"offset": offset, "count": 3, "numel": 3, "dtype": "float32", "shape": [3]}],
            }
        ],
        "forced_hits": [{"handle": 0, "written": "'same_as_forward'", "forced": "'off'"}] if forced else [],
        "assumed_hits": [{"handle": 0, "written": "'same_as_forward'", "assumed": assumed, "nodes": nodes}]
        if assumed
        else [],
    }
    return run


def _verdict(written: list[float], matching: list[float], eager_assumed: list[float] | None = None, **options):
    values = {0: [1.0, 0.0, 0.0], 1: written, 2: matching, 3: eager_assumed}

    def load(entry: dict) -> list[float]:
        return values[entry["offset"]]

    if eager_assumed is not None:
        options.setdefault(
            "eager_assumed",
            _run(3, assumed=options.pop("assumed", "autocast('cpu', bfloat16)"), nodes=options.pop("nodes", 3)),
        )
        options.setdefault("eager_assumed_load", load)
    return compare.verdict_cal002(
        _run(0),
        load,
        _run(1),
        load,
        _run(2, forced=True),
        load,
        SITE,
        "cpu",
        "'same_as_forward'",
        "'off'",
        "inductor",
        FLAGGED,
        **options,
    )


def test_clear_confirm_eager_agrees_with_the_matching_config():
    """An fp32 island under bf16 autocast: the flip moves the gradients by 2.4e-3 and eager sits on the matching run."""
    result = _verdict([1.0, 2.4e-3, 0.0], [1.0, 0.0, 1e-4], eager_assumed=[1.0, 2.4e-3, 0.0])
    assert result.verdict is Verdict.CONFIRMED
    assert "relative difference 2.4e-03 > tolerance 1.0e-05" in result.detail
    assert "eager agrees with the matching config (vs eager: as written 2.4e-03, matching 1.0e-04" in result.detail
    assert "(by less than the noise margin)" not in result.detail
    assert (
        "eager differential (eager as written vs eager with the region's backward under autocast('cpu', bfloat16)"
        in result.detail
    )
    assert "2.4e-03 > tolerance 1.0e-05: the mismatch changes eager's own gradients" in result.detail


def test_noise_dominated_flip_is_confirmed_and_eager_is_inconclusive():
    """The held-out miss: the flip changes the gradients by 1.4e-3, but inductor's bf16 noise against
    eager (about 1e-3 either way) puts eager slightly nearer the as-written run. That was
    ``not-reproduced``; the flip alone confirms, and the eager differential shows the semantic effect."""
    result = _verdict([1.0, 0.9e-3, 0.0], [1.0, 0.0, 1.1e-3], eager_assumed=[1.0, 1.3e-3, 0.0])
    assert result.verdict is Verdict.CONFIRMED, result.detail
    assert "relative difference 1.4e-03 > tolerance 1.0e-05" in result.detail
    assert "vs eager: as written 9.0e-04, matching 1.1e-03" in result.detail  # both distances to eager
    assert "eager is nearer the as-written run, but by 2.0e-04, within the noise margin (2.7e-03" in result.detail
    assert "the eager comparison is inconclusive at this noise level" in result.detail
    assert (
        "1.3e-03 > tolerance 1.0e-05: the mismatch changes eager's own gradients, without kernel noise" in result.detail
    )


def test_noise_dominated_without_the_eager_differential_still_confirms_and_says_why():
    result = _verdict(
        [1.0, 0.9e-3, 0.0],
        [1.0, 0.0, 1.1e-3],
        eager_assumed_problem="the eager run under the assumed autocast timed out after 300s",
    )
    assert result.verdict is Verdict.CONFIRMED
    assert "inconclusive at this noise level" in result.detail
    assert (
        "eager differential not measured: the eager run under the assumed autocast timed out after 300s"
        in result.detail
    )


def test_eager_clearly_on_the_written_side_is_not_reproduced():
    """Eager sits on the as-written run (1e-4 away) and 2.4e-3 from the matching one: a margin far beyond
    the as-written run's own distance to eager, so eager decides against the finding."""
    result = _verdict([1.0, 1e-4, 0.0], [1.0, 0.0, 2.4e-3], eager_assumed=[1.0, 0.0, 0.0])
    assert result.verdict is Verdict.NOT_REPRODUCED
    assert "the config changes the gradients (relative difference 2.4e-03 > tolerance 1.0e-05" in result.detail
    assert (
        "eager sides with the config as written: it is nearer the as-written run by 2.3e-03, beyond the noise margin (3.0e-04"
        in result.detail
    )
    assert "vs eager: as written 1.0e-04, matching 2.4e-03" in result.detail
    assert "0.0e+00 <= tolerance 1.0e-05: eager's own gradients do not show it" in result.detail


@pytest.mark.parametrize(
    ("matching_distance", "verdict"), [(3.9e-4, Verdict.CONFIRMED), (4.1e-4, Verdict.NOT_REPRODUCED)]
)
def test_the_eager_margin_is_a_multiple_of_the_as_written_runs_distance(matching_distance, verdict):
    """As written 1e-4 from eager: eager decides against the finding once the matching run is more than
    (1 + EAGER_MARGIN) x 1e-4 from eager."""
    assert compare.EAGER_MARGIN == 3.0
    result = _verdict([1.0, 1e-4, 0.0], [1.0, 0.0, matching_distance])
    assert result.verdict is verdict, result.detail


def test_a_margin_within_the_tolerance_never_decides():
    """Differences below the run-to-run tolerance neither confirm nor let eager decide against the finding."""
    result = _verdict([1.0, 0.0, 0.0], [1.0, 0.0, 8e-6], eager_assumed=[1.0, 0.0, 0.0])
    assert result.verdict is Verdict.NOT_REPRODUCED and "within noise" in result.detail
    # Differential 1.2e-5 > 1e-5; eager nearer the as-written run by 9e-6: beyond 3 x 2.5e-6 but within the tolerance.
    result = _verdict([1.0, 2.5e-6, 0.0], [1.0, 0.0, 1.15e-5])
    assert result.verdict is Verdict.CONFIRMED and "inconclusive at this noise level" in result.detail


def test_within_noise_is_not_reproduced_and_reports_the_eager_differential():
    result = _verdict([1.0, 4e-3, 0.0], [1.0, 4e-3, 0.0], eager_assumed=[1.0, 0.0, 0.0])
    assert result.verdict is Verdict.NOT_REPRODUCED
    assert "fix differential within noise" in result.detail and "eager differential" in result.detail


def test_eager_differential_needs_the_region_to_build_a_backward():
    result = _verdict([1.0, 2.4e-3, 0.0], [1.0, 0.0, 1e-4], eager_assumed=[1.0, 2.4e-3, 0.0], nodes=0)
    assert result.verdict is Verdict.CONFIRMED
    assert "eager differential not measured: the flagged region built no backward" in result.detail


def test_nan_in_the_as_written_run_is_confirmed_when_eager_agrees_with_the_matching_run():
    result = _verdict([1.0, math.nan, 0.0], [1.0, 0.0, 1e-4])
    assert result.verdict is Verdict.CONFIRMED and "eager agrees with the matching config" in result.detail


def test_eager_that_cannot_be_lined_up_is_still_not_reproduced():
    values = {0: [1.0, 0.0], 1: [1.0, 2.4e-3, 0.0], 2: [1.0, 0.0, 0.0]}
    eager = _run(0)
    eager["records"][0]["tensors"][0]["shape"] = [2]

    def load(entry: dict) -> list[float]:
        return values[entry["offset"]]

    result = compare.verdict_cal002(
        eager,
        load,
        _run(1),
        load,
        _run(2, forced=True),
        load,
        SITE,
        "cpu",
        "'same_as_forward'",
        "'off'",
        "inductor",
        FLAGGED,
    )
    assert result.verdict is Verdict.NOT_REPRODUCED and "could not be compared" in result.detail
