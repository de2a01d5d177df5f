"""The growth check: the same corpus copied more times, time per file against one copy."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bench_compare import CorpusResult, marked_mismatches
from bench_corpora import Corpus
from bench_rows import Row
from bench_tools import run_ours

# -- scaling ---------------------------------------------------------------------------------


def scaling(
    make: Callable[[int], Corpus],
    factors: Sequence[int],
    repeat: int,
    log: Callable[[str], None],
    label: str = "torch",
    cleanup: Callable[[Corpus, int], None] | None = None,
    unit: str = "mb",
) -> dict:
    """Cold runs with ``--no-cache`` at every factor (1x included); ``make(factor)`` gives the corpus.

    Growth is judged per MB (``unit="mb"``: the corpus grows by whole copies) or per entry point
    (``unit="entry_points"``: more examples over the same library, where time should grow with the
    number of entry points, not with what each of them reaches).

    Without the cache, no copy can be served from another copy's cache entries within the run (the
    cache is keyed by content, and the analyzer may cache below file level, where the copies'
    marker comments do not reach), so each copy is analyzed as the separate files it is.
    """
    points: list[dict] = []
    for factor in factors:
        log(f"[scaling {label}] preparing {factor}x ...")
        corpus = make(factor)
        runs = []
        for i in range(repeat):
            log(f"[scaling {label}] {factor}x cold --no-cache ({i + 1}/{repeat}) ...")
            run = run_ours(corpus, cold=True, no_cache=True)
            runs.append(run)
            log(f"    {run.measurement.wall_s:.2f} s wall, {run.measurement.cpu_s:.2f} s CPU, stats {run.stats}")
        row = Row(f"x{factor}", runs)
        marked = None
        if corpus.expected is not None:
            problems = marked_mismatches(corpus, runs[-1].findings or [])
            marked = not problems
            for problem in problems:
                log(f"    MISMATCH {problem}")
        points.append(
            {
                "factor": factor,
                "files": len(corpus.files),
                "mb": round(corpus.megabytes, 3),
                "entry_points": corpus.entry_points,
                "load_1m": row.load_1m,
                "wall_s": row.wall_s,
                "cpu_s": row.cpu_s,
                "peak_mb": row.peak_mb,
                "parsed": row.parsed,
                "findings": row.runs[-1].findings_count,
                "findings_as_marked": marked,
            }
        )
        if cleanup is not None:
            cleanup(corpus, factor)
    # Least squares through the origin: time ≈ a * size, in MB and in the growth unit.
    size = "entry_points" if unit == "entry_points" else "mb"
    per = "per_entry_point" if unit == "entry_points" else "per_mb"
    for metric in ("wall_s", "cpu_s"):
        a = sum(p[metric] * p[size] for p in points) / sum(p[size] ** 2 for p in points)
        for p in points:
            p[f"{metric}_per_mb"] = round(p[metric] / p["mb"], 4)
            p[f"{metric}_{per}"] = round(p[metric] / p[size], 4)
            p[f"{metric}_fit"] = round(a * p[size], 3)
    first, last = points[0], points[-1]
    ratio = lambda key: round(last[key] / first[key], 3) if len(points) > 1 else None
    unit_ratio = ratio(f"wall_s_{per}")
    return {
        "corpus": label,
        "unit": unit,
        "points": points,
        "wall_per_mb_ratio_last_vs_1x": ratio("wall_s_per_mb"),
        "cpu_per_mb_ratio_last_vs_1x": ratio("cpu_s_per_mb"),
        "wall_per_unit_ratio_last_vs_1x": unit_ratio,
        "cpu_per_unit_ratio_last_vs_1x": ratio(f"cpu_s_{per}"),
        "largest_factor": last["factor"],
        "findings_as_marked": None
        if all(p["findings_as_marked"] is None for p in points)
        else all(p["findings_as_marked"] is not False for p in points),
        "verdict": growth_verdict(unit_ratio),
        "linear": unit_ratio is not None and unit_ratio <= LINEAR_LIMIT,
    }


#: Growth is called linear when the per-MB wall time of the largest scale is within 20% of 1x's.
LINEAR_LIMIT = 1.2


def growth_verdict(per_unit_ratio: float | None) -> str:
    if per_unit_ratio is None:
        return "one point only"
    if per_unit_ratio < 0.8:
        return "sublinear (fixed costs dominate at 1x)"
    if per_unit_ratio <= LINEAR_LIMIT:
        return "linear (time per unit within 20% across scales)"
    if per_unit_ratio <= 1.5:
        return "slightly superlinear"
    return "superlinear"


def format_scaling(result: dict) -> str:
    corpus = result.get("corpus", "torch")
    entry = result.get("unit") == "entry_points"
    if corpus == "torch":
        where = "copies are sibling directories copyK/torch/..."
    elif entry:
        where = "more example scripts over the same library"
    else:
        where = "copies are sibling packages forge, forge2, ... of one project"
    per, unit_name = ("per_entry_point", "s/entry") if entry else ("per_mb", "s/MB")
    lines = [f"scaling, {corpus} corpus (ours, --no-cache, default jobs; {where}):"]
    lines.append(
        f"  {'size':>5} {'files':>6} {'entries':>7} {'MB':>7} {'wall s':>8} {'fit s':>8} {unit_name:>8} {'CPU s':>8} {'peak MB':>8} {'load 1m':>7} {'findings':>8}  parsed"
    )
    for p in result["points"]:
        entries = p.get("entry_points") if p.get("entry_points") is not None else "-"
        lines.append(
            f"  {str(p['factor']) + 'x':>5} {p['files']:>6} {entries!s:>7} {p['mb']:>7.2f} {p['wall_s']:>8.2f} {p['wall_s_fit']:>8.2f} {p[f'wall_s_{per}']:>8.3f} {p['cpu_s']:>8.2f} {p['peak_mb']:>8.0f} {p.get('load_1m', 0.0):>7.2f} {p.get('findings', '-')!s:>8}  {p['parsed']}"
        )
    what = "per-entry-point" if entry else "per-MB"
    lines.append(
        f"  {what} wall time, {result['points'][-1]['factor']}x vs 1x: x{result.get('wall_per_unit_ratio_last_vs_1x', result['wall_per_mb_ratio_last_vs_1x'])}"
        f" (CPU x{result.get('cpu_per_unit_ratio_last_vs_1x', result['cpu_per_mb_ratio_last_vs_1x'])}) -> {result['verdict']}"
    )
    if result.get("findings_as_marked") is not None:
        lines.append(
            f"  findings exactly the generator's marks at every scale: {'yes' if result['findings_as_marked'] else 'NO'}"
        )
    return "\n".join(lines)


def format_lsp(result: CorpusResult) -> str:
    if not result.lsp:
        return ""
    lines = [
        f"language server (scripted stdio client: open {result.lsp_file}, then one-line edits; latencies are beyond the debounce):"
    ]
    lines.append(
        f"  {'session':<42} {'startup s':>9} {'open s':>8} {'idle s':>7} {'edits':>5} {'p50 s':>8} {'max s':>8} {'settle s':>8} {'diags':>5}  warm CLI s (text / json)"
    )
    for name, s in result.lsp.items():
        warm = (
            f"{s['warm_cli_wall_s']:.2f} / {s['warm_cli_json_wall_s']:.2f}"
            if s.get("warm_cli_wall_s") is not None
            else "-"
        )
        p50 = f"{s['edit_p50_s']:.3f}" if s["edit_p50_s"] is not None else "-"
        top = f"{s['edit_max_s']:.3f}" if s["edit_max_s"] is not None else "-"
        settle = f"{s['settle_s']:.2f}" if s.get("settle_s") is not None else "-"
        idle = f"{s['ready_s']:.2f}" if s.get("ready_s") is not None else "-"
        lines.append(
            f"  {name:<42} {s['startup_s']:>9.2f} {s['open_s']:>8.3f} {idle:>7} {len(s['edit_s']):>5} {p50:>8} {top:>8} {settle:>8} {s['diagnostics_at_open']:>5}  {warm}"
        )
    lines.append(
        "  idle: the open's diagnostics to the server's last message before it was idle (its indexing of"
        " the open file and its project pass ended); the first edit follows then ('-': at once)"
    )
    lines.append(
        "  settle: the last edit's diagnostics to the end of the project pass after it (the whole project"
        " checked with the buffer once it stayed unchanged for the server's idle time)"
    )
    return "\n".join(lines)
