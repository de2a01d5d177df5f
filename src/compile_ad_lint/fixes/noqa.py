"""Adding ``# noqa: CODE`` to a line: ``check --add-noqa`` and the language server's quick fix.

There is one noqa grammar: the one the analyzer suppresses findings with (``suppression.py``), and
one way to find the comments it is read from: Python's tokenizer (``suppression.find_comments``).
An added code is then always one the analyzer honours, an existing comment is extended rather than
duplicated (``# noqa: E501`` becomes ``# noqa: E501, CAL001``; a bare ``# noqa``, which already
suppresses everything, or one that lists the code is left alone), and text in a string literal
(``tag = "# noqa: CAL999"``) is never taken for a comment nor edited.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..suppression import Comments, SuppressionKind, find_comments, suppressions_in

#: Whitespace as Python's grammar knows it (``str.strip()`` would also eat U+2028 and friends).
PYTHON_WHITESPACE = " \t\x0c"


@dataclass(frozen=True)
class NoqaEdit:
    """Replace characters ``start``-``end`` (0-based) of 1-based ``line`` with ``text``."""

    line: int
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class NoqaSkip:
    """Why ``line`` gets no noqa comment."""

    line: int
    reason: str


def plan_noqa(lines: Sequence[str], wanted: Mapping[int, Sequence[str]]) -> tuple[list[NoqaEdit], list[NoqaSkip]]:
    """The edits that make each 1-based line of ``wanted`` suppress its codes, in a text split into
    ``lines`` (with or without their line ends, split where CPython counts new lines), and the lines
    that cannot get one. A line that already suppresses its codes needs no edit."""
    comments = find_comments("\n".join(line.rstrip("\r\n") for line in lines))
    edits: list[NoqaEdit] = []
    skipped: list[NoqaSkip] = []
    for number, codes in sorted(wanted.items()):
        if not 1 <= number <= len(lines):
            skipped.append(NoqaSkip(number, "no such line"))
            continue
        outcome = _line_edit(lines[number - 1].rstrip("\r\n"), number, codes, comments)
        if isinstance(outcome, NoqaSkip):
            skipped.append(outcome)
        elif outcome is not None:
            edits.append(outcome)
    return edits, skipped


def _line_edit(line: str, number: int, codes: Sequence[str], comments: Comments) -> NoqaEdit | NoqaSkip | None:
    if comments.known_through is not None and number > comments.known_through:
        return NoqaSkip(number, f"the file cannot be tokenized past line {comments.known_through}")
    if number in comments.lines_in_strings:
        return NoqaSkip(number, "the line ends inside a string")
    comment = comments.on_line(number)
    if comment is not None:
        found = suppressions_in(comment)
        # The analyzer reads one suppression per line (an ignore[...] comment over a noqa one):
        # extend the one it reads.
        read = next((s for s in found if s.kind is SuppressionKind.IGNORE), None) or next(iter(found), None)
        if read is not None:
            if read.codes_end is None or not read.codes:
                return None  # a bare noqa, ``ignore`` or ``ignore[]``: every code is suppressed
            missing = [code for code in dict.fromkeys(codes) if code.upper() not in read.codes]
            if not missing:
                return None
            return NoqaEdit(number, read.codes_end, read.codes_end, ", " + ", ".join(missing))
    stripped = len(line.rstrip(PYTHON_WHITESPACE))
    if comment is None and line[:stripped].endswith("\\"):
        return NoqaSkip(number, "the line ends in a \\ continuation")  # a comment there would not parse
    return NoqaEdit(number, stripped, len(line), "  # noqa: " + ", ".join(dict.fromkeys(codes)))
