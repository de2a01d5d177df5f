"""The one grammar of suppression comments: ``# noqa``, ``# noqa: CAL001, CAL002`` and
``# compile-ad-lint: ignore`` / ``# compile-ad-lint: ignore[CAL001]``.

The analyzer reads suppressions with it (``summary.extract.find_suppressions``) and ``--add-noqa``
and the language server's quick fix write them with it (``fixes.noqa``): a code added by a fix is
then always one the analyzer honours, and an existing comment is recognised the same way by both.
The patterns work on bytes because suppressions are read from undecoded source lines.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from enum import Enum

#: A bare noqa comment (every code), or one with a colon and codes (flake8's grammar: ``:`` then codes).
NOQA_PATTERN = re.compile(rb"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
#: ``# compile-ad-lint: ignore`` (every code) or ``# compile-ad-lint: ignore[CODE, ...]``; an empty
#: ``ignore[]`` lists nothing and so also suppresses every code.
IGNORE_PATTERN = re.compile(rb"#\s*compile-ad-lint:\s*ignore(?:\[(?P<codes>[A-Z0-9,\s]*)\])?", re.IGNORECASE)
#: One code inside a comment's list.
CODE_PATTERN = re.compile(rb"[A-Za-z]+[0-9]+")


def listed_codes(codes: bytes) -> frozenset[str]:
    """The codes a comment's ``codes`` group names, upper-cased (``noqa: cal001`` suppresses CAL001)."""
    return frozenset(code.decode().upper() for code in CODE_PATTERN.findall(codes))


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


def suppression_comments(source: bytes) -> tuple[SuppressionComment, ...]:
    """Every suppression in a file's comments (found with Python's tokenizer: text in a string is
    not a comment), each with its position in its line, in characters. A file that cannot be
    decoded or tokenized to its end has none past where the tokenizer stopped."""
    try:
        encoding = tokenize.detect_encoding(io.BytesIO(source).readline)[0]
        text = source.decode(encoding).removeprefix("\ufeff")
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return ()
    found: list[SuppressionComment] = []
    readline = io.StringIO(re.sub(r"\r\n|\r", "\n", text)).readline
    try:
        for token in tokenize.generate_tokens(readline):
            if token.type == tokenize.COMMENT:
                found += _in_comment(token.start[0], token.start[1], token.string)
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass
    return tuple(found)


def _in_comment(line: int, column: int, comment: str) -> list[SuppressionComment]:
    found = []
    for kind, pattern in ((SuppressionKind.NOQA, NOQA_PATTERN), (SuppressionKind.IGNORE, IGNORE_PATTERN)):
        match = re.search(pattern.pattern.decode(), comment, re.IGNORECASE | re.ASCII)
        if match is None:
            continue
        listed = match.group("codes")
        found.append(
            SuppressionComment(
                line,
                kind,
                listed_codes(listed.encode()) if listed is not None else frozenset(),
                column + match.start(),
                column + match.end(),
                column + match.end("codes") if listed is not None else None,
            )
        )
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
