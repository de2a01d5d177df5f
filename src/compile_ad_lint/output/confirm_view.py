"""How confirm verdicts read in every report: one line of text and one JSON object per device.

The text always says what ran: the project's own code, or a synthetic probe that shows only what the
installed torch does; and on which torch. The JSON object carries the same as separate fields
(``source``, ``torch``, ``compared``, ``difference``, ``tolerance``) so a consumer never has to parse
the detail to tell them apart.
"""

from __future__ import annotations

import math
from typing import Any

from ..core.findings import ConfirmResult, Finding, VerdictSource

_SOURCES = {
    VerdictSource.PROJECT: "your code ran",
    VerdictSource.SYNTHETIC: "synthetic probe, not your code",
    VerdictSource.NONE: "",
}


def _number(value: float | None) -> float | str | None:
    """JSON has no infinity or NaN: those are written as strings."""
    if value is None or math.isfinite(value):
        return value
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")


def result_to_dict(result: ConfirmResult) -> dict[str, Any]:
    return {
        "verdict": result.verdict.value,
        "source": result.source.value,
        "torch": result.torch_version,
        "compared": result.compared or None,
        "difference": _number(result.difference),
        "tolerance": _number(result.tolerance),
        "detail": result.detail,
    }


def confirm_to_dict(finding: Finding) -> dict[str, dict[str, Any]] | None:
    if finding.confirm is None:
        return None
    return {device: result_to_dict(result) for device, result in finding.confirm}


def result_text(device: str, result: ConfirmResult) -> str:
    """``cpu: confirmed [your code ran, torch 2.13.0+cpu] (detail)`` (not escaped: callers escape)."""
    tags = [
        tag for tag in (_SOURCES[result.source], f"torch {result.torch_version}" if result.torch_version else "") if tag
    ]
    label = f" [{', '.join(tags)}]" if tags else ""
    return f"{device}: {result.verdict.value}{label} ({result.detail})"


def confirm_text(finding: Finding) -> str:
    """Every device's verdict on one line, or an empty string when confirm mode did not run."""
    if not finding.confirm:
        return ""
    return "; ".join(result_text(device, result) for device, result in finding.confirm)
