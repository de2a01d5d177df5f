"""``path:line:column: CODE message`` lines, then a summary (1-based positions).

Paths, messages and confirm details go through ``printable``: they quote checked code and file
names, and a newline or terminal escape in them must not start a forged report line.
"""

from __future__ import annotations

from ..api import Report
from ..findings import Finding
from .escape import printable


def format_finding(finding: Finding) -> str:
    location = finding.location
    line = f"{printable(location.path)}:{location.line}:{location.column}: {finding.code} {printable(finding.message)}"
    if finding.confirm:
        verdicts = "; ".join(f"{device}: {result.verdict.value} ({result.detail})" for device, result in finding.confirm)
        line += f"\n    confirm: {printable(verdicts)}"
    return line


def render(report: Report) -> str:
    lines = [format_finding(finding) for finding in report.findings]
    count = len(report.findings)
    stats = report.stats
    noun = "finding" if count == 1 else "findings"
    lines.append(
        f"Found {count} {noun} in {stats.files} files ({stats.parsed} parsed, {stats.cached} cached, {stats.seconds:.2f}s)."
        if count
        else f"No findings in {stats.files} files ({stats.parsed} parsed, {stats.cached} cached, {stats.seconds:.2f}s)."
    )
    return "\n".join(lines) + "\n"
