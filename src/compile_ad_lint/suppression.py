"""The one grammar of suppression comments: ``# noqa``, ``# noqa: CAL001, CAL002`` and
``# compile-ad-lint: ignore`` / ``# compile-ad-lint: ignore[CAL001]``, and where the comments are.

The analyzer reads suppressions with it (``summary.extract.find_suppressions``) and ``--add-noqa``
and the language server's quick fix write them with it (``fixes.noqa``): a code added by a fix is
then always one the analyzer honours, and an existing comment is recognised the same way by both.
Comments are found with Python's tokenizer (``find_comments``): ``tag = "# noqa: CAL999"`` is a
string, which neither suppresses anything nor is extended by a fix.
"""

from __future__ import annotations

import codecs
import io
import re
import tokenize
from dataclasses import dataclass
from enum import Enum
from functools import cached_property

#: A bare noqa comment (every code), or one with a colon and codes (flake8's grammar: ``:`` then codes).
NOQA_PATTERN = re.compile(rb"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
#: ``# compile-ad-lint: ignore`` (every code) or ``# compile-ad-lint: ignore[CODE, ...]``; an empty
#: ``ignore[]`` lists nothing and so also suppresses every code.
IGNORE_PATTERN = re.compile(rb"#\s*compile-ad-lint:\s*ignore(?:\[(?P<codes>[A-Z0-9,\s]*)\])?", re.IGNORECASE)
#: One code inside a comment's list.
CODE_PATTERN = re.compile(rb"[A-Za-z]+[0-9]+")

# The same patterns on decoded text (comments are found in text); ASCII keeps ``\s`` and the
# case-insensitive letters what the byte patterns match.
_TEXT_PATTERNS = {
    pattern: re.compile(pattern.pattern.decode(), re.IGNORECASE | re.ASCII)
    for pattern in (NOQA_PATTERN, IGNORE_PATTERN)
}
#: Text that may hold a suppression comment: files without it are not tokenized.
_MAY_SUPPRESS = re.compile(rb"#\s*(?:noqa|compile-ad-lint)", re.IGNORECASE)
_LINE_END = re.compile(r"\r\n|\r")


def listed_codes(codes: bytes) -> frozenset[str]:
    """The codes a comment's ``codes`` group names, upper-cased (``noqa: cal001`` suppresses CAL001)."""
    return frozenset(code.decode().upper() for code in CODE_PATTERN.findall(codes))


@dataclass(frozen=True)
class Comment:
    """One ``#`` comment as the tokenizer finds it."""

    #: 1-based line (lines end at ``\\n``, ``\\r\\n`` and ``\\r``, as CPython counts them).
    line: int
    #: 0-based character offset of the ``#`` in its line.
    column: int
    #: From the ``#`` to the end of the line, without the line end.
    text: str


@dataclass(frozen=True)
class Comments:
    """The comments of one text, and what else an edit that adds one needs to know."""

    comments: tuple[Comment, ...]
    #: 1-based lines whose end is inside a string literal (a comment added there would be string text).
    lines_in_strings: frozenset[int]
    #: The last line the tokenizer got through, None when it read the whole text: past it (an
    #: unterminated string, text the tokenizer rejects) nothing is known.
    known_through: int | None = None

    def on_line(self, line: int) -> Comment | None:
        return self._by_line.get(line)

    @cached_property
    def _by_line(self) -> dict[int, Comment]:
        return {comment.line: comment for comment in self.comments}


def find_comments(text: str) -> Comments:
    """The comments of ``text`` (Python source), with Python's tokenizer."""
    found: list[Comment] = []
    in_strings: set[int] = set()
    opened: list[int] = []  # f-string starts (3.12+ tokenizes an f-string as several tokens)
    fstring_start = getattr(tokenize, "FSTRING_START", None)
    fstring_end = getattr(tokenize, "FSTRING_END", None)
    last_line = 0
    readline = io.StringIO(_LINE_END.sub("\n", text)).readline
    try:
        for token in tokenize.generate_tokens(readline):
            if token.type == tokenize.COMMENT:
                found.append(Comment(token.start[0], token.start[1], token.string.rstrip("\r\n")))
            elif token.type == tokenize.STRING:
                in_strings.update(range(token.start[0], token.end[0]))
            elif token.type == fstring_start:
                opened.append(token.start[0])
            elif token.type == fstring_end and opened:
                in_strings.update(range(opened.pop(), token.end[0]))
            last_line = token.end[0]
    except (tokenize.TokenError, SyntaxError, ValueError):
        return Comments(tuple(found), frozenset(in_strings), last_line)
    return Comments(tuple(found), frozenset(in_strings))


#: Text that may be a suppression naming one of this tool's codes, or its own ``ignore``: only a
#: file holding it is looked at for unused suppressions (CAL901).
_MAY_NAME_OUR_CODES = re.compile(rb"#\s*(?:noqa\s*:[^\r\n]*\bCAL\d|compile-ad-lint\s*:\s*ignore)", re.IGNORECASE)
_TEXT_CODES = re.compile(r"[A-Za-z]+[0-9]+")


def may_name_our_codes(source: bytes) -> bool:
    return _MAY_NAME_OUR_CODES.search(source) is not None


class SuppressionKind(Enum):
    NOQA = "noqa"
    IGNORE = "compile-ad-lint: ignore"


@dataclass(frozen=True)
class SuppressionComment:
    """A suppression inside a comment: where it is and what it lists."""

    line: int
    kind: SuppressionKind
    #: The codes it lists, upper-cased; empty means every code (a bare noqa, ``ignore[]``).
    codes: frozenset[str]
    #: 0-based character offsets in the line: the suppression's start and end, and the end of its
    #: list of codes (None when it lists none: a bare noqa, an ``ignore`` without brackets).
    start: int
    end: int
    codes_end: int | None


def suppressions_in(comment: Comment) -> tuple[SuppressionComment, ...]:
    """The suppressions ``comment`` holds (a comment may hold a noqa and an ignore)."""
    found: list[SuppressionComment] = []
    for kind, pattern in ((SuppressionKind.NOQA, NOQA_PATTERN), (SuppressionKind.IGNORE, IGNORE_PATTERN)):
        match = _TEXT_PATTERNS[pattern].search(comment.text)
        if match is None:
            continue
        listed = match.group("codes")
        at = comment.column
        found.append(
            SuppressionComment(
                comment.line,
                kind,
                listed_codes(listed.encode()) if listed is not None else frozenset(),
                at + match.start(),
                at + match.end(),
                at + match.end("codes") if listed is not None else None,
            )
        )
    return tuple(found)


def may_suppress(line: bytes) -> bool:
    """Whether a line's bytes hold text a suppression comment starts with: a line without it holds
    none, so a finding there needs no tokenizing of its file."""
    return _MAY_SUPPRESS.search(line) is not None


#: Codecs whose bytes split into the lines their text has (others can write a line end as other
#: bytes: utf-7's ``+AAo-``, unicode_escape's ``\\n``).
_LINE_KEEPING = frozenset({"utf-8", "utf-8-sig", "ascii", "iso8859-1", "cp1252"})


def byte_lines(source: bytes) -> list[bytes] | None:
    """A file's lines split on its bytes, numbered as its text's lines are, when its encoding
    keeps them so; None for one that may not (then only tokenizing its text can tell)."""
    try:
        encoding = tokenize.detect_encoding(io.BytesIO(source).readline)[0]
    except SyntaxError:
        return None
    return source.splitlines() if codecs.lookup(encoding).name in _LINE_KEEPING else None


def suppression_comments(source: bytes) -> tuple[SuppressionComment, ...]:
    """Every suppression comment in a file's bytes (decoded by its coding declaration).

    Only a file where the text of one appears is tokenized. Lines the tokenizer cannot get to (a
    file that does not tokenize, or decode) are read line by line, as text that looks like a
    comment: such a file is a CAL900 finding, which its noqa comment may be meant for.
    """
    if _MAY_SUPPRESS.search(source) is None:
        return ()
    try:
        encoding = tokenize.detect_encoding(io.BytesIO(source).readline)[0]
        text = source.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return tuple(_by_lines(source, 0))
    comments = find_comments(text.removeprefix("\ufeff"))
    found = [suppression for comment in comments.comments for suppression in suppressions_in(comment)]
    if comments.known_through is not None:
        found += _by_lines(source, comments.known_through)
    return tuple(found)


def _by_lines(source: bytes, after: int) -> list[SuppressionComment]:
    """Suppressions looked for line by line past line ``after`` (what could not be tokenized)."""
    found: list[SuppressionComment] = []
    for number, line in enumerate(source.splitlines(), start=1):
        if number <= after or b"#" not in line:
            continue
        text = line.decode("utf-8", "replace")
        column = text.find("#")
        found += suppressions_in(Comment(number, column, text[column:]))
    return found


def code_spans(line: str, suppression: SuppressionComment) -> list[tuple[str, int, int]]:
    """Each code ``suppression`` lists, upper-cased, with its 0-based start and end in ``line``."""
    if suppression.codes_end is None:
        return []
    pattern = NOQA_PATTERN if suppression.kind is SuppressionKind.NOQA else IGNORE_PATTERN
    match = re.compile(pattern.pattern.decode(), re.IGNORECASE | re.ASCII).match(line, suppression.start)
    if match is None or match.group("codes") is None:
        return []
    start = match.start("codes")
    return [
        (found.group().upper(), start + found.start(), start + found.end())
        for found in _TEXT_CODES.finditer(match.group("codes"))
    ]
