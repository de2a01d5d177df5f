"""SARIF 2.1.0 (``--format sarif``), in the shape GitHub code scanning accepts.

Positions come straight from ``Location``: SARIF lines and columns are 1-based and ``endColumn`` is
exclusive, like ours. Columns count Unicode code points (LibCST's unit), which the run declares with
``columnKind`` so consumers do not assume UTF-16 code units.

Relative paths (the usual case: paths as the user named them, relative to the working directory)
become relative URIs against ``%SRCROOT%``, which ``originalUriBaseIds`` maps to the working
directory; absolute paths become ``file://`` URIs.

A finding in a notebook points into the ``.ipynb`` file (the JSON line and column of the cell's
text), with the cell number and the position in the cell as region properties.

``partialFingerprints`` lets code scanning match a result across runs even when lines move: the
key hashes the rule, the file and the flagged source text (whitespace-collapsed) plus the result's
rank among identical ones in that file, never a line number (``baseline.Fingerprints``, which
``--baseline`` matches with too).

A finding with a fix carries it as SARIF ``fixes`` (one per fix, preferred first): each edit is a
``replacement`` of a ``deletedRegion`` (an empty one for an insertion) by ``insertedContent``; whether
it is safe (``--fix``) or unsafe (``--unsafe-fixes``) is in the fix's ``properties.applicability``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

from .._version import __version__
from ..api import Report
from ..baseline import Fingerprints
from ..core.findings import Edit, Finding, Fix, Severity
from ..core.locations import Location
from ..core.settings import DEFAULT_RULE_DOCS_URL, REPOSITORY_URL
from ..notebook import load
from ..rules import ALL_RULES
from ..rules.base import Rule
from .confirm_view import confirm_to_dict
from .escape import printable

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = REPOSITORY_URL
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "compileAdLint/v1"

_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning"}
#: ``[text](target)`` would be read as an embedded link (SARIF 3.11.6); escape such brackets.
_EMBEDDED_LINK = re.compile(r"\[([^\]]*)\]\(")


def render(report: Report, docs_url: str = DEFAULT_RULE_DOCS_URL) -> str:
    return json.dumps(sarif_log(report, docs_url), indent=2, ensure_ascii=False) + "\n"


def sarif_log(report: Report, docs_url: str = DEFAULT_RULE_DOCS_URL) -> dict[str, Any]:
    """The SARIF log as a JSON-ready dict (one run); rule ``helpUri``s point under ``docs_url``."""
    rule_index = {rule.code: index for index, rule in enumerate(ALL_RULES)}
    fingerprints = Fingerprints()
    results = [_result(finding, rule_index, fingerprints) for finding in report.findings]
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "compile-ad-lint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [_rule_descriptor(rule, docs_url) for rule in ALL_RULES],
            }
        },
        "invocations": [{"executionSuccessful": True}],
        "originalUriBaseIds": {SRCROOT: {"uri": _directory_uri(Path.cwd())}},
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    if report.stats.torch is not None:  # the torch the findings speak for
        run["properties"] = {"torch": report.stats.torch.as_dict()}
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def _rule_descriptor(rule: type[Rule], docs_url: str) -> dict[str, Any]:
    documentation = rule.documentation()
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": " ".join(rule.what_it_does.split())},
        "help": {"text": documentation, "markdown": documentation},
        "helpUri": rule.docs_url(docs_url),
        "defaultConfiguration": {"level": _LEVELS[rule.severity]},
        "properties": {"tags": ["correctness", "pytorch", "torch.compile"], "precision": "high"},
    }


def _result(finding: Finding, rule_index: dict[str, int], fingerprints: Fingerprints) -> dict[str, Any]:
    result: dict[str, Any] = {"ruleId": finding.code}
    if finding.code in rule_index:
        result["ruleIndex"] = rule_index[finding.code]
    result["level"] = _LEVELS[finding.severity]
    result["message"] = {"text": _message_text(finding.full_message)}
    result["locations"] = [{"physicalLocation": _physical_location(finding.location)}]
    if finding.related:
        result["relatedLocations"] = [
            {
                "id": number,
                "physicalLocation": _physical_location(related.location),
                "message": {"text": _message_text(related.message)},
            }
            for number, related in enumerate(finding.related, start=1)
        ]
    result["partialFingerprints"] = {FINGERPRINT_KEY: fingerprints.of(finding)}
    fixes = [_fix(fix) for fix in finding.fixes if fix.edits]
    if fixes:
        result["fixes"] = fixes
    properties: dict[str, Any] = {}
    if finding.facts:
        properties["facts"] = dict(finding.facts)
    if finding.conditions:
        properties["conditions"] = [condition.as_dict() for condition in finding.conditions]
    if finding.confirm is not None:
        properties["confirm"] = confirm_to_dict(finding)
    if properties:
        result["properties"] = properties
    return result


def _fix(fix: Fix) -> dict[str, Any]:
    """A SARIF fix: the edits grouped by file, each a replacement of a region (1-based, end exclusive)."""
    by_path: dict[str, list[Edit]] = {}
    for edit in fix.edits:
        by_path.setdefault(edit.path, []).append(edit)
    return {
        "description": {"text": _message_text(fix.description)},
        "artifactChanges": [
            {
                "artifactLocation": artifact_location(path),
                "replacements": [
                    {
                        "deletedRegion": {
                            "startLine": e.line,
                            "startColumn": e.column,
                            "endLine": e.end_line,
                            "endColumn": e.end_column,
                        },
                        "insertedContent": {"text": e.replacement},
                    }
                    for e in edits
                ],
            }
            for path, edits in by_path.items()
        ],
        "properties": {"applicability": fix.applicability.value},
    }


def _message_text(text: str) -> str:
    """A message as SARIF plain text for people: control, bidi and other invisible characters from
    the checked code are escaped like in the text output (JSON escaping alone would let a viewer
    reorder or split the line), and ``[text](`` is not read as an embedded link."""
    return _EMBEDDED_LINK.sub(lambda m: "\\[" + m.group(1) + "\\](", printable(text))


def _physical_location(location: Location) -> dict[str, Any]:
    if location.cell is not None:
        return _notebook_location(location)
    region = {
        "startLine": max(1, location.line),
        "startColumn": max(1, location.column),
        "endLine": max(location.line, location.end_line),
    }
    end_column = location.end_column
    if region["endLine"] == region["startLine"]:
        end_column = max(end_column, region["startColumn"] + 1)
    region["endColumn"] = max(1, end_column)
    return {"artifactLocation": artifact_location(location.path), "region": region}


def _notebook_location(location: Location) -> dict[str, Any]:
    """A notebook location: the region is where the cell's text is in the ``.ipynb`` file itself (its
    JSON line and column, so viewers of the file land on it); the cell and the position in the cell
    are in the region's properties, with the cell's line as its snippet."""
    notebook = load(location.file)
    start = notebook.raw_position(location.cell, location.line, location.column) if notebook is not None else None  # type: ignore[arg-type]
    end = notebook.raw_position(location.cell, location.end_line, location.end_column) if notebook is not None else None  # type: ignore[arg-type]
    region: dict[str, Any] = {"startLine": 1}
    if start is not None:
        region = {"startLine": start[0], "startColumn": start[1]}
        if end is not None and (end[0], end[1]) > (start[0], start[1]):
            region.update(endLine=end[0], endColumn=end[1])
        else:
            region.update(endLine=start[0], endColumn=start[1] + 1)
    cell = notebook.cell(location.cell) if notebook is not None and location.cell is not None else None
    if cell is not None and 1 <= location.line <= len(cell.lines):
        region["snippet"] = {"text": cell.lines[location.line - 1].rstrip("\r\n")}
    region["sourceLanguage"] = "python"
    region["properties"] = {
        "notebookCell": location.cell,
        "cellLine": location.line,
        "cellColumn": location.column,
        "cellEndLine": location.end_line,
        "cellEndColumn": location.end_column,
    }
    return {"artifactLocation": artifact_location(location.path), "region": region}


def artifact_location(path: str) -> dict[str, Any]:
    """A relative URI (forward slashes, percent-encoded) against %SRCROOT%, or a file:// URI."""
    pure = PurePath(path)
    if pure.is_absolute():
        return {"uri": Path(path).as_uri()}
    # Percent-encode the raw bytes: names that are not valid UTF-8 arrive as surrogate escapes.
    return {"uri": quote(pure.as_posix().encode("utf-8", "surrogateescape"), safe="/"), "uriBaseId": SRCROOT}


def _directory_uri(directory: Path) -> str:
    uri = directory.as_uri()
    return uri if uri.endswith("/") else uri + "/"
