"""Turning observed runs into verdicts (pure Python: no torch here, so it is unit-testable anywhere).

CAL001 compares the compiled run as written with the eager reference: a tangent that is ``None`` where
eager has one, or a compiled run that raises at the flagged site where eager does not.
CAL002 uses the fix differential: the compiled run under the config as written against the compiled run
under the matching config (same backend, so kernel noise cancels). The config flip changing the
gradients beyond run-to-run noise confirms; eager overrules it only when it clearly sides with the
written config (see :func:`verdict_cal002`), and the eager differential (eager as written vs eager with
the region's backward under the autocast its compiled backward assumed) is a noise-free second witness.
Compiled-vs-eager differences alone never confirm CAL002.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..core.findings import ConfirmResult, Verdict

#: Relative-difference tolerance between two compiled runs that differ only in the config (same kernels).
DIFFERENTIAL_TOLERANCE = {"float64": 1e-9, "float32": 1e-5, "float16": 2e-3, "bfloat16": 1e-2}
#: Tolerance between a compiled tangent and the eager one (inductor reorders and fuses).
TANGENT_TOLERANCE = {"float64": 1e-7, "float32": 1e-4, "float16": 1e-2, "bfloat16": 5e-2}
#: Non-deterministic GPU kernels: allow ten times more run-to-run noise on CUDA.
DEVICE_FACTOR = {"cpu": 1.0, "cuda": 10.0}


@dataclass(frozen=True)
class Site:
    """The flagged statement (real path, inclusive line range) and its enclosing function's range."""

    path: str
    lines: tuple[int, int]
    function: tuple[int, int] | None = None

    def on_stack(self, stack: Sequence[Sequence], *, function: bool = False) -> bool:
        low, high = self.function if function and self.function else self.lines
        return any(frame[0] == self.path and low <= frame[1] <= high for frame in stack)


TensorLoader = Callable[[dict], list[float]]


def tolerance(table: dict[str, float], dtypes: Sequence[str], device: str) -> float:
    base = max((table.get(d, table["float32"]) for d in dtypes), default=table["float32"])
    return base * DEVICE_FACTOR.get(device, 1.0)


def relative_difference(a: Sequence[float], b: Sequence[float]) -> float:
    """||a - b|| / ||b|| (inf when shapes differ or a NaN appears; 0 when both are zero)."""
    if len(a) != len(b):
        return math.inf
    diff = math.sqrt(math.fsum((x - y) ** 2 for x, y in zip(a, b)))
    norm = math.sqrt(math.fsum(y * y for y in b))
    if math.isnan(diff) or math.isnan(norm):
        return math.inf  # NaN where the other run has numbers is a difference, never a match
    if norm == 0.0:
        return 0.0 if diff == 0.0 else math.inf
    return diff / norm


def grad_vector(record: dict, load: TensorLoader) -> tuple[list[float], list[str], tuple[tuple[int, ...] | None, ...]]:
    values: list[float] = []
    dtypes: list[str] = []
    layout: list[tuple[int, ...] | None] = []
    for entry in record["tensors"]:
        if entry is None:
            layout.append(None)
            continue
        values.extend(load(entry))
        dtypes.append(entry["dtype"])
        layout.append(tuple(entry["shape"]))
    return values, dtypes, tuple(layout)


def exception_text(exception: dict) -> str:
    where = f" at {_short(exception['frames'][-1])}" if exception.get("frames") else ""
    return f"{exception['type']}: {exception['message']}{where}"


def _short(frame: Sequence) -> str:
    return f"{str(frame[0]).rsplit('/', 1)[-1]}:{frame[1]}"


def _fmt(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.1e}"


# -- CAL001 -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Unusable:
    """The entry point reached the flagged line eagerly, but the compiled run cannot be compared there."""

    reason: str


def verdict_cal001(
    eager: dict, eager_load: TensorLoader, compiled: dict, compiled_load: TensorLoader, site: Site, device: str
) -> ConfirmResult | Unusable:
    """Compare the flagged call's own records (outputs' tangents or exception), else ``unpack_dual`` near it."""
    eager_calls = _site_calls(eager, site)
    compiled_calls = _site_calls(compiled, site)
    if compiled_calls:
        return _compare_calls(eager_calls, eager_load, compiled_calls, compiled_load, device)
    if eager_calls:
        if compiled.get("status") == "exception":
            return Unusable(
                f"its compiled run raised {exception_text(compiled['exception'])} before reaching the flagged call"
            )
        return ConfirmResult(
            Verdict.NOT_REPRODUCED, "in the compiled run the flagged call never received dual tensors (it did eagerly)"
        )
    return _compare_unpacked(eager, eager_load, compiled, compiled_load, site, device)


def _site_calls(run: dict, site: Site) -> list[dict]:
    return [r for r in run.get("records", []) if r.get("kind") == "compiled-call" and site.on_stack(r.get("stack", []))]


def _compare_calls(
    eager_calls: list[dict],
    eager_load: TensorLoader,
    compiled_calls: list[dict],
    compiled_load: TensorLoader,
    device: str,
) -> ConfirmResult:
    raised = next((c for c in compiled_calls if c["raised"]), None)
    if raised is not None and not any(e["raised"] for e in eager_calls):
        return compiled_raise(raised["raised"], "the flagged call")
    pairs = [pair for e, c in zip(eager_calls, compiled_calls) for pair in zip(e["tangents"], c["tangents"])]
    calls = f"{len(compiled_calls)} call(s) of the compiled callable with dual inputs at the flagged line"
    return _tangent_verdict(pairs, eager_load, compiled_load, device, f"output tangent(s) of {calls}")


def _compare_unpacked(
    eager: dict, eager_load: TensorLoader, compiled: dict, compiled_load: TensorLoader, site: Site, device: str
) -> ConfirmResult | Unusable:
    """No compiled callable with dual inputs was seen at the site (e.g. a custom compile wrapper): use ``unpack_dual``."""
    if compiled.get("status") == "exception":
        exception = compiled["exception"]
        if site.on_stack(exception.get("frames", [])):
            return compiled_raise(exception, "the compiled run, through the flagged call,")
    eager_tangents = _tangents(eager, site)
    compiled_tangents = _tangents(compiled, site)
    if eager_tangents and not compiled_tangents and compiled.get("status") == "exception":
        return Unusable(
            f"its compiled run raised {exception_text(compiled['exception'])} before reaching the flagged call"
        )
    if not eager_tangents:
        return ConfirmResult(
            Verdict.NOT_REPRODUCED,
            "the entry point ran the flagged line, but no compiled callable received dual tensors there and no tangent was unpacked in its function",
        )
    pairs = [(e["tangent"], c["tangent"]) for e, c in zip(eager_tangents, compiled_tangents)]
    return _tangent_verdict(pairs, eager_load, compiled_load, device, "unpack_dual result(s) in the flagged function")


def compiled_raise(exception: dict, who: str) -> ConfirmResult:
    """Only forward AD's ``NotImplementedError`` is the hazard; another compiled-only failure is an error."""
    if exception["type"] == "NotImplementedError":
        return ConfirmResult(
            Verdict.CONFIRMED, f"{who} raises {exception_text(exception)} in the compiled run; eager returns normally"
        )
    return ConfirmResult(
        Verdict.ERROR,
        f"{who} fails in the compiled run with {exception_text(exception)}, which is not forward AD's NotImplementedError; eager returns normally",
    )


def _tangent_verdict(
    pairs: list[tuple], eager_load: TensorLoader, compiled_load: TensorLoader, device: str, what: str
) -> ConfirmResult:
    """(eager tangent, compiled tangent) pairs: a tangent dropped to None, or the worst difference against its tolerance."""
    measured = [
        TangentPair(
            eager_none=eager is None,
            compiled_none=compiled is None,
            difference=None
            if eager is None or compiled is None
            else relative_difference(compiled_load(compiled), eager_load(eager)),
            dtype=eager["dtype"] if eager is not None else "float32",
        )
        for eager, compiled in pairs
    ]
    return tangent_verdict(measured, device, what)


@dataclass(frozen=True)
class TangentPair:
    """One output's tangent, compiled as written against eager: None on either side, else their
    relative difference (``difference``) and the eager tangent's dtype."""

    eager_none: bool
    compiled_none: bool
    difference: float | None
    dtype: str


def tangent_verdict(pairs: Sequence[TangentPair], device: str, what: str) -> ConfirmResult:
    """A tangent dropped to None where eager has one, or the worst difference against its tolerance."""
    dropped = 0
    worst = worst_tol = 0.0
    for pair in pairs:
        if pair.eager_none:
            continue
        if pair.compiled_none:
            dropped += 1
            continue
        rel = pair.difference if pair.difference is not None else math.inf
        tol = tolerance(TANGENT_TOLERANCE, [pair.dtype], device)
        if rel / tol > (worst / worst_tol if worst_tol else 0.0):
            worst, worst_tol = rel, tol
    compared = f"{what}, compiled as written vs eager"
    if dropped:
        return ConfirmResult(
            Verdict.CONFIRMED,
            f"tangent dropped to None: {dropped} of {len(pairs)} {what} are None in the compiled run where eager has values",
            compared=compared,
        )
    measured, bound = worst, worst_tol or None
    if worst_tol and worst > worst_tol:
        return ConfirmResult(
            Verdict.CONFIRMED,
            f"compiled tangent differs from eager: relative difference {_fmt(worst)} > tolerance {_fmt(worst_tol)} ({len(pairs)} {what})",
            compared=compared,
            difference=measured,
            tolerance=bound,
        )
    return ConfirmResult(
        Verdict.NOT_REPRODUCED,
        f"compared {len(pairs)} {what}: present and equal to eager within tolerance (max relative difference {_fmt(worst)})",
        compared=compared,
        difference=measured,
        tolerance=bound,
    )


def _tangents(run: dict, site: Site) -> list[dict]:
    """``unpack_dual`` results recorded in the flagged function (or at the flagged statement at module level)."""
    return [
        r
        for r in run.get("records", [])
        if r.get("kind") == "tangent" and site.on_stack(r.get("stack", []), function=True)
    ]


# -- CAL002 -------------------------------------------------------------------------------------


#: Eager decides against a CAL002 finding only when it is nearer the as-written run than the matching
#: one by more than this many times the as-written run's own distance to eager (the kernel noise that
#: compiled-vs-eager comparisons carry; inductor's bf16 noise is often as large as the effect itself).
EAGER_MARGIN = 3.0


@dataclass(frozen=True)
class Cal002Measure:
    """One flagged backward's gradients compared across the runs (relative differences)."""

    differential: float  # as written vs matching config, same backend: the fix differential
    tol: float
    vs_eager_written: float
    vs_eager_matching: float
    size: int
    eager_differential: float | None  # eager as written vs eager under the assumed autocast; None: not measured


def verdict_cal002(
    eager: dict,
    eager_load: TensorLoader,
    written: dict,
    written_load: TensorLoader,
    matching: dict,
    matching_load: TensorLoader,
    site: Site,
    device: str,
    written_config: str,
    matching_config: str,
    backend: str,
    forced_handles: frozenset[int],
    eager_assumed: dict | None = None,
    eager_assumed_load: TensorLoader | None = None,
    eager_assumed_problem: str = "",
) -> ConfirmResult | Unusable:
    """The fix differential decides; eager can only overrule it when it clearly sides with the written config.

    ``forced_handles``: the compiled callables of the flagged call, whose traces the matching run forced.
    ``eager_assumed``: the eager differential's run (eager, the flagged regions' backward under the autocast
    state their compiled backward assumed), reported in the detail; ``eager_assumed_problem`` says why
    there is none. Decision, with D the fix differential and tol the run-to-run tolerance of its dtype:

    * D <= tol: ``not-reproduced`` (the config flip changes nothing; compiled-vs-eager differences are noise).
    * D > tol: ``confirmed``, unless eager is nearer the as-written run than the matching one by a margin
      above both ``EAGER_MARGIN`` times the as-written run's distance to eager and tol: then
      ``not-reproduced``. A smaller margin leaves the eager comparison inconclusive at this noise level;
      the eager differential, free of kernel noise, is what shows the semantic effect then.
    * D > tol but eager's gradients cannot be lined up with the compiled runs' (another layout):
      ``not-reproduced``, since it is not established that the runs computed the same gradients.
    """
    runs = (("as written", written), ("under the matching config", matching))
    for name, run in runs:
        if run.get("status") == "exception" and site.on_stack(run["exception"].get("frames", [])):
            return ConfirmResult(
                Verdict.ERROR,
                f"the compiled run {name} failed at the flagged backward where eager did not: {exception_text(run['exception'])}",
            )
    records = [_backward_records(run, site) for run in (eager, written, matching)]
    if records[0] and not all(records):
        for name, run in runs:
            if run.get("status") == "exception":
                return Unusable(
                    f"its compiled run {name} raised {exception_text(run['exception'])} before reaching the flagged backward"
                )
    if not any(hit.get("handle") in forced_handles for hit in matching.get("forced_hits", [])):
        return ConfirmResult(
            Verdict.NOT_REPRODUCED,
            "the flagged compiled callable was never traced in the matching run (backward_pass_autocast was not read while it ran), so the matching config could not be applied",
        )
    if not all(records):
        return ConfirmResult(
            Verdict.NOT_REPRODUCED,
            "the entry point reached the flagged backward but no gradient was recorded there in every run",
        )
    assumed, assumed_state, unmeasured = _eager_assumed_records(
        eager_assumed, eager_assumed_problem, site, forced_handles
    )
    best: Cal002Measure | None = None
    for index, (e, w, m) in enumerate(zip(*records)):
        ev, _, elay = grad_vector(e, eager_load)
        wv, wdt, wlay = grad_vector(w, written_load)
        mv, _, mlay = grad_vector(m, matching_load)
        if not wv or wlay != mlay:
            continue
        tol = tolerance(DIFFERENTIAL_TOLERANCE, wdt, device)
        eager_differential = None
        if assumed is not None and eager_assumed_load is not None and index < len(assumed):
            av, _, alay = grad_vector(assumed[index], eager_assumed_load)
            if av and alay == elay:
                eager_differential = relative_difference(av, ev)
        candidate = Cal002Measure(
            relative_difference(wv, mv),
            tol,
            relative_difference(wv, ev) if elay == wlay else math.inf,
            relative_difference(mv, ev) if elay == mlay else math.inf,
            len(wv),
            eager_differential,
        )
        if best is None or candidate.differential / candidate.tol > best.differential / best.tol:
            best = candidate
    if best is None:
        return ConfirmResult(Verdict.NOT_REPRODUCED, "no comparable gradients were recorded at the flagged backward")
    configs = f"backward_pass_autocast={written_config} (as written) vs {matching_config} (matching), both backend={backend!r}"
    return decide_cal002(best, configs, eager_differential_text(best, assumed_state, unmeasured))


def decide_cal002(best: Cal002Measure, configs: str, witness: str) -> ConfirmResult:
    """The CAL002 decision on one measured backward (see :func:`verdict_cal002`); ``configs`` names the
    two compiled runs, ``witness`` is the eager differential's text."""
    differential, tol, ew, em = best.differential, best.tol, best.vs_eager_written, best.vs_eager_matching
    eager_part = f"vs eager: as written {_fmt(ew)}, matching {_fmt(em)}"
    compared, measured, bound = f"gradients of the flagged region, {configs}", differential, tol
    if differential <= tol:
        return ConfirmResult(
            Verdict.NOT_REPRODUCED,
            f"fix differential within noise: relative difference {_fmt(differential)} <= tolerance {_fmt(tol)} between {configs} "
            f"({eager_part}; compiled-vs-eager differences alone are backend noise, not the mismatch; {witness})",
            compared=compared,
            difference=measured,
            tolerance=bound,
        )
    changes = f"relative difference {_fmt(differential)} > tolerance {_fmt(tol)} between {configs}"
    if math.isinf(ew) and math.isinf(em):
        return ConfirmResult(
            Verdict.NOT_REPRODUCED,
            f"the config changes the gradients ({changes}) but eager's gradients could not be compared with them ({eager_part}; {witness})",
            compared=compared,
            difference=measured,
            tolerance=bound,
        )
    margin = abs(em - ew)
    floor = max(EAGER_MARGIN * min(ew, em), tol)
    if ew < em and margin > floor:
        return ConfirmResult(
            Verdict.NOT_REPRODUCED,
            f"the config changes the gradients ({changes}) but eager sides with the config as written: it is nearer the as-written run "
            f"by {_fmt(margin)}, beyond the noise margin ({_fmt(floor)}: {EAGER_MARGIN:g}x that run's own distance to eager, at least the tolerance) "
            f"({eager_part}; {witness})",
            compared=compared,
            difference=measured,
            tolerance=bound,
        )
    if em <= ew:
        side = "eager agrees with the matching config" + ("" if margin > floor else " (by less than the noise margin)")
    else:
        side = (
            f"eager is nearer the as-written run, but by {_fmt(margin)}, within the noise margin ({_fmt(floor)}: {EAGER_MARGIN:g}x that run's "
            "own distance to eager): the eager comparison is inconclusive at this noise level"
        )
    return ConfirmResult(
        Verdict.CONFIRMED,
        f"gradients differ: {changes}; {side} ({eager_part}; {witness}; {best.size} gradient values)",
        compared=compared,
        difference=measured,
        tolerance=bound,
    )


def _eager_assumed_records(
    run: dict | None, problem: str, site: Site, handles: frozenset[int]
) -> tuple[list[dict] | None, str, str]:
    """The eager differential run's gradients at the flagged backward and the autocast state its flagged
    regions' backward ran under; else None, "", and why it was not measured."""
    if run is None:
        return None, "", problem or "there was no eager run under the assumed autocast"
    hits = [hit for hit in run.get("assumed_hits", []) if hit.get("handle") in handles and hit.get("nodes")]
    if not hits:
        return None, "", "the flagged region built no backward in the eager run under the assumed autocast"
    records = _backward_records(run, site)
    if not records:
        if run.get("status") == "exception":
            return (
                None,
                "",
                f"the eager run under the assumed autocast raised {exception_text(run['exception'])} before the flagged backward",
            )
        return None, "", "the eager run under the assumed autocast recorded no gradient at the flagged backward"
    return records, " or ".join(sorted({hit["assumed"] for hit in hits})), ""


def eager_differential_text(pair: Cal002Measure, assumed: str, unmeasured: str) -> str:
    if pair.eager_differential is None:
        return f"eager differential not measured: {unmeasured or 'its gradients do not line up with eager as written'}"
    value = pair.eager_differential
    text = f"eager differential (eager as written vs eager with the region's backward under {assumed}, as its compiled backward assumed) {_fmt(value)}"
    if value > pair.tol:
        return f"{text} > tolerance {_fmt(pair.tol)}: the mismatch changes eager's own gradients, without kernel noise"
    return f"{text} <= tolerance {_fmt(pair.tol)}: eager's own gradients do not show it"


def _backward_records(run: dict, site: Site) -> list[dict]:
    return [
        r for r in run.get("records", []) if r.get("kind") in ("backward", "grad") and site.on_stack(r.get("stack", []))
    ]


# -- CAL004 -------------------------------------------------------------------------------------

#: What a compiled backward that cannot be differentiated raises (torch 2.13): the double backward
#: itself, or, after an earlier first-order backward donated its buffers, ``create_graph=True``.
DOUBLE_BACKWARD_ERRORS = (
    "does not currently support double backward",
    "donated buffers which requires create_graph=False",
)


def is_double_backward(exception: dict | None) -> bool:
    return exception is not None and any(text in exception.get("message", "") for text in DOUBLE_BACKWARD_ERRORS)


def double_backward_raised(result: dict) -> dict | None:
    """The double-backward error a run ended with or a backward of it raised (and the code caught)."""
    if is_double_backward(result.get("exception")):
        return result["exception"]
    return next((r["raised"] for r in result.get("records", []) if is_double_backward(r.get("raised"))), None)


def _line(record: dict) -> str:
    stack = record.get("stack") or []
    return _short(stack[0]) if stack else "?"


def verdict_cal004(
    eager: dict, eager_load: TensorLoader, compiled: dict, compiled_load: TensorLoader, site: Site, device: str
) -> ConfirmResult | Unusable:
    """Confirmed when, in the compiled run only, the flagged call raises the double-backward error (a
    ``torch.autograd.functional`` call, or ``create_graph=True`` after donated buffers), a later backward
    raises it before another ``create_graph=True`` call elsewhere runs, or a flagged
    ``torch.autograd.functional`` call returns values that differ from eager (``hessian``'s zeros)."""
    records = compiled.get("records", [])
    at_site = [
        i
        for i, r in enumerate(records)
        if r.get("kind") in ("backward", "grad", "functional", "backward-error") and site.on_stack(r.get("stack", []))
    ]
    eager_raises = double_backward_raised(eager) is not None
    if at_site and not eager_raises:
        for index in at_site:
            record = records[index]
            if is_double_backward(record.get("raised")):
                return ConfirmResult(
                    Verdict.CONFIRMED,
                    f"the flagged call raises {exception_text(record['raised'])} in the compiled run; eager runs it",
                )
        functional = [i for i in at_site if records[i].get("kind") == "functional"]
        if functional:  # ``vjp``/``jacobian(create_graph=True)`` return a graph; the others fail inside or not at all
            created = [i for i in functional if records[i].get("name") in ("vjp", "jacobian")]
        else:
            created = [i for i in at_site if records[i].get("create_graph")]
        if created:
            for later in records[created[0] + 1 :]:
                if later.get("create_graph") and not site.on_stack(later.get("stack", [])):
                    break  # another create_graph=True call (or its failure): a later error may be its own
                if later.get("kind") == "functional":
                    break
                if later.get("kind") == "backward-error" and is_double_backward(later.get("raised")):
                    return ConfirmResult(
                        Verdict.CONFIRMED,
                        f"the backward at {_line(later)} through the gradients the flagged create_graph=True call created raises "
                        f"{exception_text(later['raised'])} in the compiled run; eager runs it",
                    )
    eager_calls = [
        r for r in eager.get("records", []) if r.get("kind") == "functional" and site.on_stack(r.get("stack", []))
    ]
    compiled_calls = [records[i] for i in at_site if records[i].get("kind") == "functional"]
    for e, c in zip(eager_calls, compiled_calls):
        if e.get("raised") or c.get("raised") or e.get("name") != c.get("name"):
            continue
        ev, edt, elay = grad_vector(e, eager_load)
        cv, _, clay = grad_vector(c, compiled_load)
        if not ev or elay != clay:
            continue
        rel = relative_difference(cv, ev)
        tol = tolerance(TANGENT_TOLERANCE, edt, device)
        if rel > tol:
            zeros = " (all zeros)" if not any(cv) and any(ev) else ""
            return ConfirmResult(
                Verdict.CONFIRMED,
                f"torch.autograd.functional.{c['name']} returns different values compiled{zeros}, with no error: relative difference {_fmt(rel)} > tolerance {_fmt(tol)}",
            )
    if not at_site:
        if compiled.get("status") == "exception":
            return Unusable(
                f"its compiled run raised {exception_text(compiled['exception'])} before reaching the flagged call"
            )
        return ConfirmResult(
            Verdict.NOT_REPRODUCED,
            "the compiled run never ran a backward or torch.autograd.functional call at the flagged line",
        )
    if eager_raises:
        return ConfirmResult(Verdict.NOT_REPRODUCED, "eager raises the double-backward error too")
    return ConfirmResult(
        Verdict.NOT_REPRODUCED,
        "the flagged call ran compiled without the double-backward error and with eager's values (nothing differentiated its gradients again before the run ended)",
    )


def verdict_cal004_inside(eager: dict, compiled: dict) -> ConfirmResult:
    """A compiled function that differentiates twice (in its body or in what it calls): confirmed when the compiled
    run raises the double-backward error and the eager run does not (both backwards run inside the
    compiled frame, so no flagged call is recorded on its own)."""
    in_eager, in_compiled = double_backward_raised(eager), double_backward_raised(compiled)
    if in_compiled is not None and in_eager is None:
        return ConfirmResult(
            Verdict.CONFIRMED,
            f"the compiled function raises {exception_text(in_compiled)} in the compiled run; eager runs it",
        )
    if in_eager is not None:
        return ConfirmResult(Verdict.NOT_REPRODUCED, "eager raises the double-backward error too")
    if compiled.get("status") == "exception":
        return ConfirmResult(
            Verdict.ERROR,
            f"the compiled run raised {exception_text(compiled['exception'])}, not the double-backward error",
        )
    return ConfirmResult(
        Verdict.NOT_REPRODUCED, "the compiled function differentiated twice without the double-backward error"
    )


# -- CAL005 -------------------------------------------------------------------------------------


def verdict_cal005(
    eager: dict, eager_load: TensorLoader, compiled: dict, compiled_load: TensorLoader, site: Site, named: str = ""
) -> ConfirmResult:
    """Confirmed when a leaf's gradient at the flagged backward is all zeros compiled and None (or not
    reached at all) eager; leaves are paired by parameter serial (creation order), ``autograd.grad``'s
    results by position."""
    eager_records = _backward_records(eager, site)
    compiled_records = _backward_records(compiled, site)
    if not compiled_records:
        if compiled.get("status") == "exception":
            return ConfirmResult(
                Verdict.ERROR,
                f"the compiled run raised {exception_text(compiled['exception'])} before the flagged backward recorded gradients",
            )
        return ConfirmResult(
            Verdict.NOT_REPRODUCED, "no gradient was recorded at the flagged backward in the compiled run"
        )
    if not eager_records:
        return ConfirmResult(
            Verdict.NOT_REPRODUCED, "no gradient was recorded at the flagged backward in the eager run"
        )
    zeroed: dict[tuple, str] = {}
    compared = 0
    for e, c in zip(eager_records, compiled_records):
        by_position = e.get("kind") == "grad"
        eager_grads = (
            dict(enumerate(e["tensors"]))
            if by_position
            else {k: t for k, t in zip(e.get("keys", []), e["tensors"]) if k is not None}
        )
        compiled_grads = (
            dict(enumerate(c["tensors"]))
            if by_position
            else {k: t for k, t in zip(c.get("keys", []), c["tensors"]) if k is not None}
        )
        for key, tensor in compiled_grads.items():
            compared += 1
            if tensor is None or eager_grads.get(key) is not None:
                continue
            if not any(compiled_load(tensor)):
                zeroed.setdefault(
                    (by_position, key), f"{'result ' if by_position else 'parameter #'}{key} {tuple(tensor['shape'])}"
                )
    if zeroed:
        names = list(zeroed.values())
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        leaves = f" (the finding names {named})" if named else ""
        return ConfirmResult(
            Verdict.CONFIRMED, f"{len(zeroed)} gradient(s) are all zeros compiled where eager has None{leaves}: {shown}"
        )
    return ConfirmResult(
        Verdict.NOT_REPRODUCED,
        f"compared {compared} gradient(s) at the flagged backward: none is zeros compiled and None eager",
    )
