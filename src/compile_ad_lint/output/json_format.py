"""The JSON object of design section 4 (1-based lines and columns, end column exclusive).

In a notebook, ``cell`` is the 1-based cell number (every cell counts) and ``line``/``end_line`` are
lines of that cell; ``cell`` is null in a Python file. ``stats.parsed + stats.cached`` is
``stats.analyzed``, the files the analysis read; ``stats.files`` counts the files checked.
"""

from __future__ import annotations

import json

from .. import __version__
from ..api import Report
from ..findings import Finding


def finding_to_dict(finding: Finding) -> dict:
    location = finding.location
    return {
        "code": finding.code,
        "severity": finding.severity.value,
        "message": finding.message,
        "path": location.path,
        "cell": location.cell,
        "line": location.line,
        "column": location.column,
        "end_line": location.end_line,
        "end_column": location.end_column,
        "related": [
            {"path": r.location.path, "cell": r.location.cell, "line": r.location.line, "column": r.location.column, "message": r.message}
            for r in finding.related
        ],
        "fix": {"description": finding.fix.description} if finding.fix else None,
        "facts": dict(finding.facts),
        "confirm": (
            {device: {"verdict": result.verdict.value, "detail": result.detail} for device, result in finding.confirm}
            if finding.confirm is not None
            else None
        ),
    }


def render(report: Report) -> str:
    stats = report.stats
    document = {
        "version": __version__,
        "findings": [finding_to_dict(f) for f in report.findings],
        "stats": {"files": stats.files, "analyzed": stats.analyzed, "parsed": stats.parsed, "cached": stats.cached, "seconds": stats.seconds},
    }
    return json.dumps(document, indent=2) + "\n"
