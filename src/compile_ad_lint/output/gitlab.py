"""GitLab Code Quality (``--format gitlab``): the JSON array GitLab reads from a job's
``codequality`` report and shows in merge requests.

Each finding is one issue: ``check_name`` (the code), ``description`` (``CODE: headline``, as
Ruff writes it), ``content.body`` (the details and the chain), ``severity`` (``major`` for errors,
``minor`` for warnings), ``fingerprint`` (unique per finding and stable when lines move: the
baseline's line-independent fingerprint) and ``location`` with ``path`` (relative to the
repository: ``CI_PROJECT_DIR`` when GitLab sets it, else the working directory) and
``lines.begin``/``lines.end``. A notebook finding points at the cell's text in the ``.ipynb``
file, its description naming the cell and the line in it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePath
from typing import Any

from ..api import Report
from ..baseline import Fingerprints
from ..core.findings import Finding, Severity
from ..core.locations import Location
from ..notebook import load
from .escape import printable
from .text import where

_SEVERITIES = {Severity.ERROR: "major", Severity.WARNING: "minor"}


def render(report: Report) -> str:
    fingerprints = Fingerprints()
    base = Path(os.environ.get("CI_PROJECT_DIR") or Path.cwd())
    issues = [_issue(finding, fingerprints.of(finding), base) for finding in report.findings]
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"


def _issue(finding: Finding, fingerprint: str, base: Path) -> dict[str, Any]:
    location = finding.location
    headline = printable(finding.message)
    if location.cell is not None:
        headline = f"cell {location.cell}:{location.line}:{location.column}: {headline}"
    body = [printable(detail) for detail in finding.details]
    body += [f"{where(item.location)}: {printable(item.message)}" for item in finding.related]
    issue: dict[str, Any] = {
        "type": "issue",
        "check_name": finding.code,
        "description": f"{finding.code}: {headline}",
        "categories": ["Bug Risk"],
        "severity": _SEVERITIES[finding.severity],
        "fingerprint": fingerprint,
        "location": {"path": _relative(location.path, base), "lines": _lines(location)},
    }
    if body:
        issue["content"] = {"body": "\n".join(body)}
    return issue


def _relative(path: str, base: Path) -> str:
    """The path relative to the repository, with ``/`` (GitLab matches it against the diff's files)."""
    pure = PurePath(path)
    if pure.is_absolute():
        try:
            pure = PurePath(os.path.relpath(pure, base.resolve()))
        except ValueError:  # another drive on Windows
            pass
    else:
        try:
            pure = PurePath(os.path.relpath(Path.cwd() / pure, base.resolve()))
        except ValueError:
            pass
    return printable(pure.as_posix())


def _lines(location: Location) -> dict[str, int]:
    if location.cell is None:
        return {"begin": location.line, "end": max(location.line, location.end_line)}
    notebook = load(location.file)
    start = notebook.raw_position(location.cell, location.line, location.column) if notebook is not None else None
    end = notebook.raw_position(location.cell, location.end_line, location.end_column) if notebook else None
    begin = start[0] if start is not None else 1
    return {"begin": begin, "end": max(begin, end[0] if end is not None else begin)}
