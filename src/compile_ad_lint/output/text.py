"""The text report: ``path:line:column: CODE message`` per finding, its evidence chain, a summary.

Each finding is one line (``path:cell N:line:column:`` in a notebook; 1-based positions), followed,
indented, by the chain that explains it: where the forward-AD region or autocast context is
entered, the first and last call hop (the hops between are counted), the compile site, and where
the config comes from, each as ``path:line:column``. ``concise`` keeps the one line; ``show_source``
adds the flagged line with a caret range; ``statistics`` replaces the findings with a count per
code; ``quiet`` drops the summary. The summary's numbers add up: of the files the analysis read,
each was parsed in this run or came from the cache.

Paths, messages and source lines go through ``printable``: they quote checked code and file names,
and a newline or terminal escape in them must not start a forged report line. Colors (``color``)
are added after escaping, so only this module's own escape sequences reach the terminal.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..api import Report
from ..core.codes import BY_CODE
from ..core.findings import Finding, Severity
from ..core.locations import Location, RelatedLocation
from ..core.paths import is_notebook
from ..notebook import load
from .confirm_view import confirm_text
from .escape import printable

#: The source line a location points at (None when it cannot be read).
SourceLine = Callable[[Location], "str | None"]

_RESET = "\033[0m"
_STYLES = {
    "path": "\033[1m",
    "punct": "\033[36m",
    "error": "\033[1;31m",
    "warning": "\033[1;33m",
    "chain": "\033[2m",
    "caret": "\033[1;31m",
    "summary": "\033[1m",
    "gutter": "\033[34m",
}


@dataclass(frozen=True)
class TextOptions:
    concise: bool = False
    show_source: bool = False
    statistics: bool = False
    quiet: bool = False
    color: bool = False
    #: Where ``show_source`` reads lines; default: the files (and notebook cells) on disk.
    source_line: SourceLine | None = None
    #: ``--unsafe-fixes``: unsafe fixes count as fixable (``[*]``, the summary's count).
    unsafe_fixes: bool = False
    #: ``--show-fixes`` without ``--fix``: each fix's change as a diff under its ``help:`` line.
    fix_preview: Callable[[Finding], list[str]] | None = None
    #: Lines before the summary (what ``--fix`` fixed).
    fixed: tuple[str, ...] = ()


class _Painter:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, style: str, text: str) -> str:
        return f"{_STYLES[style]}{text}{_RESET}" if self.enabled and text else text


def render(report: Report, options: TextOptions | None = None) -> str:
    options = options or TextOptions()
    paint = _Painter(options.color)
    lines: list[str] = []
    if options.statistics:
        lines += _statistics(report.findings, options.unsafe_fixes)
    else:
        source_line = options.source_line or _SourceLines()
        for finding in report.findings:
            lines += _finding(finding, options, paint, source_line)
    if not options.quiet:
        # What --fix fixed and what --fix would fix, then the summary: always the last line.
        lines += options.fixed
        fixes = fix_summary(report.findings, options.unsafe_fixes)
        if fixes is not None:
            lines.append(fixes)
        lines.append(paint("summary", summary(report)))
    return "".join(line + "\n" for line in lines)


def format_finding(finding: Finding, options: TextOptions | None = None) -> str:
    """One finding as the report shows it (its chain included unless ``concise``)."""
    options = options or TextOptions()
    return "\n".join(_finding(finding, options, _Painter(options.color), options.source_line or _SourceLines()))


def where(location: Location, paint: _Painter | None = None) -> str:
    """``path:line:column`` (``path:cell N:line:column`` in a notebook), the path escaped."""
    paint = paint or _Painter(False)
    colon = paint("punct", ":")
    cell = f"cell {location.cell}{colon}" if location.cell is not None else ""
    return f"{paint('path', printable(location.path))}{colon}{cell}{location.line}{colon}{location.column}"


def _finding(finding: Finding, options: TextOptions, paint: _Painter, source_line: SourceLine) -> list[str]:
    style = "warning" if finding.severity is Severity.WARNING else "error"
    marker = "[*] " if finding.fixable(options.unsafe_fixes) else ""
    lines = [
        f"{where(finding.location, paint)}{paint('punct', ':')} {paint(style, finding.code)} {marker}{printable(finding.message)}"
    ]
    if options.show_source:
        lines += _source(finding.location, source_line, paint)
    if not options.concise:
        for item in chain(finding.related):
            if isinstance(item, int):
                lines.append(paint("chain", f"    ... {item} more call{'s' if item != 1 else ''}"))
            else:
                lines.append(
                    f"    {where(item.location, paint)}{paint('punct', ':')} {paint('chain', printable(item.message))}"
                )
    if not options.concise:
        for detail in finding.details:
            lines.append(f"    {paint('chain', 'note:')} {printable(detail)}")
        if finding.fix is not None and finding.fix.applies(True):
            lines.append(f"    {paint('chain', 'help:')} {printable(finding.fix.description)}")
            if options.fix_preview is not None:
                lines += [f"      {printable(line)}" for line in options.fix_preview(finding)]
    if finding.confirm:
        lines.append(f"    confirm: {printable(confirm_text(finding))}")
    return lines


def is_hop(related: RelatedLocation) -> bool:
    """A call on the way from the anchor to the compiled callable (rules phrase them ``calls ...``;
    CAL002 names the compiled call ``compiled call ran with ...``)."""
    return related.message.startswith(("calls ", "compiled call ran with"))


def chain(related: tuple[RelatedLocation, ...]) -> list[RelatedLocation | int]:
    """The related locations to show: every one but the hops between the first and the last hop of
    a run of hops, which become their count."""
    shown: list[RelatedLocation | int] = []
    run: list[RelatedLocation] = []

    def flush() -> None:
        if len(run) <= 2:
            shown.extend(run)
        else:
            shown.extend([run[0], len(run) - 2, run[-1]])
        run.clear()

    for item in related:
        if is_hop(item):
            run.append(item)
        else:
            flush()
            shown.append(item)
    flush()
    return shown


def _source(location: Location, source_line: SourceLine, paint: _Painter) -> list[str]:
    text = source_line(location)
    if text is None:
        return []
    text = text.rstrip("\r\n")
    start = max(1, location.column)
    end = location.end_column if location.end_line == location.line else len(text) + 1
    end = max(end, start + 1)
    number = str(location.line)
    gutter = " " * len(number)
    before = _width(_shown(text[: start - 1]))
    under = max(1, _width(_shown(text[start - 1 : end - 1])))
    bar = paint("gutter", "|")
    return [
        f"  {gutter} {bar}",
        f"  {paint('gutter', number)} {bar} {_shown(text)}",
        f"  {gutter} {bar} {' ' * before}{paint('caret', '^' * under)}",
    ]


def _shown(text: str) -> str:
    """A source line as printed: tabs as four spaces (so the carets line up), the rest escaped."""
    return printable(text.replace("\t", "    "))


def _width(text: str) -> int:
    return sum(
        2 if unicodedata.east_asian_width(c) in ("W", "F") else 0 if unicodedata.combining(c) else 1 for c in text
    )


class _SourceLines:
    """Lines of files on disk (decoded like the analyzer does) and of notebook cells, read once."""

    def __init__(self) -> None:
        self._files: dict[str, list[str] | None] = {}

    def __call__(self, location: Location) -> str | None:
        if location.cell is not None or is_notebook(location.path):
            notebook = load(location.path)
            cell = notebook.cell(location.cell) if notebook is not None and location.cell is not None else None
            return cell.lines[location.line - 1] if cell is not None and 1 <= location.line <= len(cell.lines) else None
        if location.path not in self._files:
            self._files[location.path] = read_lines(location.path)
        lines = self._files[location.path]
        return lines[location.line - 1] if lines is not None and 1 <= location.line <= len(lines) else None


def read_lines(path: str) -> list[str] | None:
    from ..core.text import decode, split_lines

    try:
        return split_lines(decode(Path(path).read_bytes()))
    except (OSError, UnicodeDecodeError, LookupError, SyntaxError):
        return None


def _statistics(findings: tuple[Finding, ...], unsafe: bool) -> list[str]:
    """A row per code, most frequent first: the count, the code, ``[*]`` when ``--fix`` fixes some
    of its findings (``[ ]`` otherwise, Ruff's column), the rule's name."""
    counts = Counter(finding.code for finding in findings)
    if not counts:
        return []
    fixable = {finding.code for finding in findings if finding.fixable(unsafe)}
    width = len(str(max(counts.values())))
    rows = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        rule = BY_CODE.get(code)
        mark = "[*]" if code in fixable else "[ ]"
        rows.append(f"{count:>{width}}  {code}  {mark} {rule.name if rule is not None else ''}".rstrip())
    return rows


def fix_summary(findings: tuple[Finding, ...], unsafe: bool) -> str | None:
    """Ruff's line under the summary: ``[*] 2 fixable with `--fix` (1 unsafe fix available with
    `--fix --unsafe-fixes`).``; None when no finding has a fix."""
    fixable = sum(1 for finding in findings if finding.fixable(unsafe))
    hidden = 0 if unsafe else sum(1 for f in findings if f.fix is not None and f.fix.applies(True) and not f.fix.safe)
    unsafe_text = f"{hidden} unsafe fix{'es' if hidden != 1 else ''} available with `--fix --unsafe-fixes`"
    if fixable:
        line = f"[*] {fixable} fixable with `--fix{' --unsafe-fixes' if unsafe else ''}`"
        return line + (f" ({unsafe_text})." if hidden else ".")
    return f"{unsafe_text}." if hidden else None


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def summary(report: Report) -> str:
    """``Found 2 findings in 3 files (4 analyzed: 1 parsed, 3 cached) in 0.52s, for torch 2.13 (2.13.0, installed torch).``"""
    stats = report.stats
    count = len(report.findings)
    if not stats.files:
        return "No file was checked."
    head = f"Found {_plural(count, 'finding')}" if count else "No findings"
    torch = f", for {stats.torch.describe()}" if stats.torch is not None else ""
    return (
        f"{head} in {_plural(stats.files, 'file')} ({stats.analyzed} analyzed: {stats.parsed} parsed, "
        f"{stats.cached} cached) in {stats.seconds:.2f}s{torch}."
    )
