"""Verdicts from the measurements the user's own run made (``confirm -- COMMAND``): pure Python, no torch.

``_live.py`` and ``_replay.py`` measure in the user's process (relative differences, tangents that
are None, exceptions); this module judges them with the same rules and tolerances as
``check --confirm`` (``compare``), so both paths agree on what "confirmed" means.
"""

from __future__ import annotations

import math
from typing import Any

from ..core.findings import ConfirmResult, Verdict
from . import compare

Measurement = dict[str, Any]


def number(value: object) -> float:
    """A measured number as the run wrote it (infinity and NaN arrive as strings)."""
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return math.inf


def decide(code: str, measurement: Measurement) -> ConfirmResult:
    """The verdict on one flagged site from its measurement (not yet finalized: see ``verdicts``)."""
    kind = measurement.get("kind")
    if kind == "error":
        return ConfirmResult(Verdict.ERROR, f"the replay at this site failed: {measurement.get('reason', '?')}")
    if code == "CAL001":
        return _cal001(measurement)
    if code == "CAL002":
        return _cal002(measurement)
    if code == "CAL004":
        return _cal004(measurement)
    if code == "CAL005":
        return _cal005(measurement)
    return ConfirmResult(Verdict.SKIPPED, f"confirm mode does not run {code}")


def _no_region(measurement: Measurement) -> ConfirmResult | None:
    outcome = measurement.get("outcome")
    if outcome in ("no-region", "no-upstream"):
        return ConfirmResult(
            Verdict.NOT_REPRODUCED,
            "the flagged backward ran, but no output of a torch.compile result called from the flagged compiled call "
            "received a gradient in it, so there was no compiled region to compare",
        )
    if outcome == "inputs-changed":
        return ConfirmResult(
            Verdict.ERROR,
            f"{measurement.get('changed')} input tensor(s) of the compiled call were modified in place before the backward: "
            "the region cannot be replayed with the inputs it ran on",
        )
    if outcome == "no-leaves":
        return ConfirmResult(
            Verdict.ERROR,
            "the compiled region has no parameter or input that needs a gradient here (a function that reads its "
            "parameters from a closure cannot be replayed with them)",
        )
    return None


def _cal002(m: Measurement) -> ConfirmResult:
    early = _no_region(m)
    if early is not None:
        return early
    device = str(m.get("device", "cpu"))
    if m.get("outcome") == "same":
        return ConfirmResult(
            Verdict.NOT_REPRODUCED,
            f"no mismatch in this run: the region's compiled backward assumed {m['assumed']} "
            f"(backward_pass_autocast={m['written_text']}, forward under {m['forward']}) and the backward ran under "
            f"{m['backward']}",
            compared="the autocast state the compiled backward assumed vs the one the backward ran under",
        )
    dtypes = list(m.get("dtypes") or ["float32"])
    measure = compare.Cal002Measure(
        differential=number(m["differential"]),
        tol=compare.tolerance(compare.DIFFERENTIAL_TOLERANCE, dtypes, device),
        vs_eager_written=number(m["vs_eager_written"]),
        vs_eager_matching=number(m["vs_eager_matching"]),
        size=int(m.get("size", 0)),
        eager_differential=number(m["eager_differential"]),
    )
    configs = (
        f"backward_pass_autocast={m['written_text']} (as traced) vs {m['matching_text']} (matching the backward's "
        f"{m['backward']}), both backend={m.get('backend', 'inductor')!r}, forward under {m['forward']}"
    )
    witness = compare.eager_differential_text(measure, str(m.get("assumed", "?")), "")
    result = compare.decide_cal002(measure, configs, witness)
    replayed = f"the region replayed with the inputs and upstream gradient of your run ({m.get('seconds', '?')} s)"
    return ConfirmResult(
        result.verdict,
        f"{result.detail}; {replayed}",
        compared=result.compared,
        difference=result.difference,
        tolerance=result.tolerance,
    )


def _cal001(m: Measurement) -> ConfirmResult:
    device = str(m.get("device", "cpu"))
    if m.get("outcome") == "raised":
        written, eager = m.get("written_raised"), m.get("eager_raised")
        if written and not eager:
            return compare.compiled_raise(dict(written, frames=[]), "the flagged call")
        if written and eager:
            return ConfirmResult(
                Verdict.NOT_REPRODUCED,
                f"the flagged call raises eagerly too ({compare.exception_text(dict(eager, frames=[]))})",
            )
        return ConfirmResult(
            Verdict.ERROR,
            f"the eager replay of the flagged call failed ({compare.exception_text(dict(eager or {}, frames=[]))}) "
            "where your compiled call returned",
        )
    pairs = [
        compare.TangentPair(
            eager_none=bool(p["eager_none"]),
            compiled_none=bool(p["compiled_none"]),
            difference=None if p.get("rel") is None else number(p["rel"]),
            dtype=str(p.get("dtype") or "float32"),
        )
        for p in m.get("pairs", [])
    ]
    if not pairs:
        return ConfirmResult(Verdict.NOT_REPRODUCED, "the flagged call returned no tensor to compare")
    return compare.tangent_verdict(
        pairs, device, "output tangent(s) of the compiled call at the flagged line in your run"
    )


def _cal005(m: Measurement) -> ConfirmResult:
    early = _no_region(m)
    if early is not None:
        return early
    rows = m.get("leaves", [])
    zeroed = [row for row in rows if row["compiled"] == "zeros" and row["eager"] == "none"]
    compared = "each leaf's gradient through the compiled call as written vs eager, with the outputs your backward used"
    if zeroed:
        shown = ", ".join(
            f"{row['name']} {tuple(row['shape'])}" + (f" (your run's .grad: {row['real']})" if row["real"] else "")
            for row in zeroed[:6]
        )
        more = f" and {len(zeroed) - 6} more" if len(zeroed) > 6 else ""
        return ConfirmResult(
            Verdict.CONFIRMED,
            f"{len(zeroed)} gradient(s) are all zeros compiled where eager has None: {shown}{more} "
            f"({m.get('unused', '?')} output(s) of the compiled call got no gradient from your backward)",
            compared=compared,
        )
    return ConfirmResult(
        Verdict.NOT_REPRODUCED,
        f"compared {len(rows)} leaf gradient(s): none is zeros compiled and None eager",
        compared=compared,
    )


def _cal004(m: Measurement) -> ConfirmResult:
    outcome = m.get("outcome")
    raised = m.get("raised")
    witness = m.get("eager")
    if witness is None:
        eager = "no region to replay eagerly"
    elif witness.get("ok"):
        eager = "the region replayed eagerly is differentiated twice without error"
    else:
        error = witness.get("error")
        eager = (
            f"the eager replay failed too ({compare.exception_text(dict(error, frames=[]))})"
            if error
            else witness.get("reason", "")
        )
    compared = "the second-order backward in your run vs the region's double backward replayed eagerly"
    if outcome in ("raised", "later-raised") and raised:
        error_text = compare.exception_text(dict(raised, frames=[]))
        where = (
            "the flagged call"
            if outcome == "raised"
            else f"the backward at line {(m.get('later') or ['?', '?'])[1]} after it"
        )
        if compare.is_double_backward(raised) and not (witness and witness.get("error")):
            return ConfirmResult(
                Verdict.CONFIRMED, f"{where} raises {error_text} in your run; {eager}", compared=compared
            )
        return ConfirmResult(
            Verdict.ERROR,
            f"{where} raises {error_text} in your run, which is not the double-backward error; {eager}",
        )
    reasons = {
        "later-ran": "the create_graph=True call and the backward after it ran without the double-backward error",
        "no-later-backward": "the create_graph=True call ran without error and nothing differentiated its gradients again before the run ended",
        "no-create-graph": "the flagged call ran without create_graph and without error",
    }
    return ConfirmResult(
        Verdict.NOT_REPRODUCED, f"{reasons.get(str(outcome), str(outcome))}; {eager}", compared=compared
    )
