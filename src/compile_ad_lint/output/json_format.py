"""The ``--format json`` report: one object with ``version``, ``findings`` and ``stats``, which other
tools read. Lines and columns are 1-based, the end column exclusive.

In a notebook, ``cell`` is the 1-based cell number (every cell counts) and ``line``/``end_line`` are
lines of that cell; ``cell`` is null in a Python file. ``stats.parsed + stats.cached`` is
``stats.analyzed``, the files the analysis read; ``stats.files`` counts the files checked.
``stats.torch`` is the torch the findings speak for: ``spec`` as given, ``source`` (where it came
from: ``--target-torch``, the configuration, ``installed torch``, the project's pins, or the
default), ``series`` (the known release series it admits) and ``assumed`` (null, or what is
assumed for versions beyond the recorded facts).

``message`` is the headline (one sentence under 120 characters); ``details`` are the sentences that
support it without a location of their own (the evidence, the consequence, how to fix it).

``fix`` is the fix ``--fix`` applies (safe) or ``--unsafe-fixes`` adds (unsafe), with its edits:
``path`` (as findings show paths), a 1-based range of that file's current text (``end_column``
exclusive; an insertion has an empty range) and the ``replacement`` text. ``alternative_fixes`` are
other ways to fix it (the language server offers them too); ``--fix`` never applies those.

``conditions`` lists the run-time switches a finding holds under (empty when it holds on every
run): ``{"expression": "args.compile", "holds": true, "default": null}`` for a finding on the
``if args.compile:`` arm of a flag the command line sets. The message names them too.
"""

from __future__ import annotations

import json
from typing import Any

from .._version import __version__
from ..api import Report
from ..core.findings import Finding, Fix
from .confirm_view import confirm_to_dict


def fix_to_dict(fix: Fix) -> dict[str, Any]:
    return {
        "description": fix.description,
        "applicability": fix.applicability.value,
        "edits": [
            {
                "path": e.path,
                "line": e.line,
                "column": e.column,
                "end_line": e.end_line,
                "end_column": e.end_column,
                "replacement": e.replacement,
            }
            for e in fix.edits
        ],
    }


def finding_to_dict(finding: Finding) -> dict[str, Any]:
    location = finding.location
    return {
        "code": finding.code,
        "severity": finding.severity.value,
        "message": finding.message,
        "details": list(finding.details),
        "path": location.path,
        "cell": location.cell,
        "line": location.line,
        "column": location.column,
        "end_line": location.end_line,
        "end_column": location.end_column,
        "related": [
            {
                "path": r.location.path,
                "cell": r.location.cell,
                "line": r.location.line,
                "column": r.location.column,
                "message": r.message,
            }
            for r in finding.related
        ],
        "fix": fix_to_dict(finding.fix) if finding.fix else None,
        "alternative_fixes": [fix_to_dict(fix) for fix in finding.alternative_fixes],
        "facts": dict(finding.facts),
        "conditions": [condition.as_dict() for condition in finding.conditions],
        "confirm": confirm_to_dict(finding),
    }


def render(report: Report) -> str:
    stats = report.stats
    document = {
        "version": __version__,
        "findings": [finding_to_dict(f) for f in report.findings],
        "stats": {
            "files": stats.files,
            "analyzed": stats.analyzed,
            "parsed": stats.parsed,
            "cached": stats.cached,
            "seconds": stats.seconds,
            "torch": stats.torch.as_dict() if stats.torch is not None else None,
        },
    }
    return json.dumps(document, indent=2) + "\n"
