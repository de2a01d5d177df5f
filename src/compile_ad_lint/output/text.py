"""``path:line:column: CODE message`` lines, then a summary (1-based positions)."""

from __future__ import annotations

from ..api import Report
from ..findings import Finding


def printable(path: str) -> str:
    """``path`` with control characters escaped, so a newline in a file name cannot split a report line."""
    return path if path.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in path)


def format_finding(finding: Finding) -> str:
    location = finding.location
    line = f"{printable(location.path)}:{location.line}:{location.column}: {finding.code} {finding.message}"
    if finding.confirm:
        verdicts = "; ".join(f"{device}: {result.verdict.value} ({result.detail})" for device, result in finding.confirm)
        line += f"\n    confirm: {verdicts}"
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
