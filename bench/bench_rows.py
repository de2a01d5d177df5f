"""Rows of the result tables and the ratios between tools."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from bench_common import OURS_COLD, OURS_COLD_J1, OURS_TOUCHED, OURS_WARM, OURS_WARM_TEXT, PARSE_1, PARSE_2, TORCHFIX
from bench_measure import Measurement
from bench_tools import Run

# -- rows ------------------------------------------------------------------------------------


@dataclass
class Row:
    name: str
    runs: list[Run]

    def _median(self, key: Callable[[Measurement], float]) -> float:
        return round(statistics.median(key(r.measurement) for r in self.runs), 3)

    @property
    def wall_s(self) -> float:
        return self._median(lambda m: m.wall_s)

    @property
    def cpu_s(self) -> float:
        return self._median(lambda m: m.cpu_s)

    @property
    def peak_mb(self) -> float:
        return max(r.measurement.peak_mb for r in self.runs)

    @property
    def load_1m(self) -> float:
        """The highest 1-minute load average any of the row's runs started under."""
        return max(r.measurement.load_avg[0] for r in self.runs)

    @property
    def parsed(self) -> str:
        last = self.runs[-1]
        if last.stats is not None and "cached" in last.stats:  # ours
            return f"{last.stats['parsed']} parsed, {last.stats['cached']} cached / {last.stats['files']}"
        if last.stats is not None:  # parse-only
            return f"{last.stats['parsed']} parsed / {last.stats['files']}"
        return f"{last.files_checked} checked" if last.files_checked is not None else "-"

    def to_dict(self) -> dict:
        runs = []
        for run in self.runs:
            m = asdict(run.measurement)
            m.pop("stdout")
            m.pop("stderr")
            m["cpu_s"] = round(run.measurement.cpu_s, 3)
            m["peak_mb"] = run.measurement.peak_mb
            runs.append(
                {
                    "measurement": m,
                    "stats": run.stats,
                    "files_checked": run.files_checked,
                    "findings": run.findings_count,
                }
            )
        return {
            "name": self.name,
            "wall_s": self.wall_s,
            "cpu_s": self.cpu_s,
            "peak_mb": self.peak_mb,
            "load_1m": self.load_1m,
            "parsed": self.parsed,
            "runs": runs,
        }


def format_table(rows: Sequence[Row], title: str) -> str:
    header = ("run", "wall s", "CPU s", "peak MB", "load 1m", "findings", "files parsed")
    body = [
        (
            r.name,
            f"{r.wall_s:.2f}",
            f"{r.cpu_s:.2f}",
            f"{r.peak_mb:.0f}",
            f"{r.load_1m:.2f}",
            str(r.runs[-1].findings_count if r.runs[-1].findings_count is not None else "-"),
            r.parsed,
        )
        for r in rows
    ]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    aligned = lambda line: "  ".join(
        c.ljust(w) if i in (0, 6) else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))
    )
    rule = "-" * len(aligned(header))
    return "\n".join([title, rule, aligned(header), rule, *map(aligned, body), rule])


def ratios(rows: Sequence[Row]) -> dict[str, dict[str, float]]:
    by_name = {r.name: r for r in rows}
    out: dict[str, dict[str, float]] = {}
    pairs = [
        (OURS_COLD, TORCHFIX),
        (OURS_WARM, TORCHFIX),
        (OURS_COLD, PARSE_1),
        (OURS_WARM, PARSE_1),
        (OURS_WARM_TEXT, PARSE_1),
        (OURS_TOUCHED, PARSE_1),
        (OURS_COLD_J1, PARSE_1),
        (OURS_COLD, PARSE_2),
        (OURS_COLD, OURS_COLD_J1),
    ]
    for ours, reference in pairs:
        if ours in by_name and reference in by_name:
            a, b = by_name[ours], by_name[reference]
            out[f"{ours} / {reference}"] = {
                "wall": round(a.wall_s / b.wall_s, 3) if b.wall_s else float("nan"),
                "cpu": round(a.cpu_s / b.cpu_s, 3) if b.cpu_s else float("nan"),
                "peak_mb": round(a.peak_mb / b.peak_mb, 3) if b.peak_mb else float("nan"),
            }
    return out


def format_ratios(values: dict[str, dict[str, float]]) -> str:
    width = max((len(k) for k in values), default=0)
    lines = ["ratios (median wall, median CPU, peak memory):"]
    lines += [
        f"  {k.ljust(width)}  wall x{v['wall']:<7.3f} CPU x{v['cpu']:<7.3f} mem x{v['peak_mb']:.3f}"
        for k, v in values.items()
    ]
    return "\n".join(lines)
