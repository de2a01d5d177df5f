"""JUnit XML (``--format junit``), which CI systems (GitLab, Jenkins, Azure Pipelines, CircleCI)
show as test results, in the shape Ruff writes.

One ``<testsuite>`` per file with findings (its ``name`` the file), one failing ``<testcase>`` per
finding (``name`` ``compile-ad-lint.CODE``, ``classname`` the file without its suffix, ``line`` and
``column`` attributes; in a notebook the cell's, with ``cell`` too): the ``<failure>``'s ``message``
is the headline, its text the position, the details and the chain. A run without findings is one
passing ``<testcase>`` ("No findings"), so a CI job still sees a test. Text from the checked code
goes through ``printable``, which also keeps out every character XML 1.0 cannot hold.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import PurePath

from ..api import Report
from ..core.findings import Finding
from .escape import printable
from .text import where

SUITE_NAME = "compile-ad-lint"


def render(report: Report) -> str:
    by_file: dict[str, list[Finding]] = {}
    for finding in report.findings:
        by_file.setdefault(finding.location.path, []).append(finding)
    total = len(report.findings)
    root = ElementTree.Element(
        "testsuites", name=SUITE_NAME, tests=str(max(total, 1)), failures=str(total), errors="0", skipped="0"
    )
    for path, findings in by_file.items():
        shown = printable(path)
        suite = ElementTree.SubElement(
            root,
            "testsuite",
            name=shown,
            tests=str(len(findings)),
            failures=str(len(findings)),
            errors="0",
            skipped="0",
            package=SUITE_NAME,
        )
        for finding in findings:
            _testcase(suite, finding, printable(str(PurePath(path).with_suffix(""))))
    if not by_file:
        suite = ElementTree.SubElement(
            root, "testsuite", name=SUITE_NAME, tests="1", failures="0", errors="0", skipped="0"
        )
        ElementTree.SubElement(suite, "testcase", name="No findings", classname=SUITE_NAME)
    ElementTree.indent(root, space="    ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"


def _testcase(suite: ElementTree.Element, finding: Finding, classname: str) -> None:
    location = finding.location
    attributes = {
        "name": f"{SUITE_NAME}.{finding.code}",
        "classname": classname,
        "line": str(location.line),
        "column": str(location.column),
    }
    if location.cell is not None:
        attributes["cell"] = str(location.cell)
    case = ElementTree.SubElement(suite, "testcase", attributes)
    headline = printable(finding.message)
    failure = ElementTree.SubElement(case, "failure", message=headline, type=finding.code)
    cell = f"cell {location.cell}, " if location.cell is not None else ""
    lines = [f"{cell}line {location.line}, col {location.column}, {headline}"]
    lines += [f"note: {printable(detail)}" for detail in finding.details]
    lines += [f"{where(item.location)}: {printable(item.message)}" for item in finding.related]
    failure.text = "\n".join(lines)
