"""GitHub Actions workflow annotations (``--format github``).

One command per finding::

    ::error file=PATH,line=L,col=C,endLine=EL,endColumn=EC,title=CAL001 rule-name::message

Positions are our 1-based ones (GitHub's are 1-based too). Text from the checked code (messages,
paths) first goes through ``printable``, so its own newlines and terminal escapes show as ``\n`` and
``\x1b`` instead of splitting the annotation or reaching the log viewer raw. Then values are
escaped the way the Actions runner parses workflow commands: ``%``, CR and LF in the message;
additionally ``:`` and ``,`` in properties. Related locations follow the message on their own
lines (an escaped newline, the only one an annotation can hold). In a notebook the annotation
points at the cell's text in the ``.ipynb`` file, and the message starts with the cell and line.
"""

from __future__ import annotations

from pathlib import PurePath

from ..api import Report
from ..core.codes import BY_CODE
from ..core.findings import Finding, Severity
from ..core.locations import Location
from ..notebook import load
from .confirm_view import confirm_text
from .escape import printable

_COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning"}


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def format_finding(finding: Finding) -> str:
    location = finding.location
    rule = BY_CODE.get(finding.code)
    title = f"{finding.code} {rule.name}" if rule is not None else finding.code
    properties = [("file", printable(PurePath(location.path).as_posix())), *_position(location), ("title", title)]
    message = printable(finding.message)
    if location.cell is not None:
        message = f"cell {location.cell}, line {location.line}, column {location.column}: {message}"
    for detail in finding.details:
        message += f"\n  {printable(detail)}"
    for related in finding.related:
        where = related.location
        cell = f"cell {where.cell}:" if where.cell is not None else ""
        message += f"\n  {printable(PurePath(where.path).as_posix())}:{cell}{where.line}:{where.column}: {printable(related.message)}"
    if finding.confirm:
        message += f"\n  confirm: {printable(confirm_text(finding))}"
    rendered = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    return f"::{_COMMANDS[finding.severity]} {rendered}::{escape_data(message)}"


def _position(location: Location) -> list[tuple[str, str]]:
    """The annotation's position; in a notebook, where the cell's text is in the .ipynb file (the
    message names the cell and the line in it)."""
    if location.cell is None:
        return [
            ("line", str(location.line)),
            ("col", str(location.column)),
            ("endLine", str(location.end_line)),
            ("endColumn", str(location.end_column)),
        ]
    notebook = load(location.path)
    start = notebook.raw_position(location.cell, location.line, location.column) if notebook is not None else None
    return [("line", str(start[0])), ("col", str(start[1]))] if start is not None else [("line", "1")]


def render(report: Report) -> str:
    return "".join(format_finding(finding) + "\n" for finding in report.findings)
