"""Adding ``# noqa: CODE`` to a line: ``check --add-noqa`` and the language server's quick fix.

There is one noqa grammar: the one the analyzer suppresses findings with (``suppression.py``'s
patterns, applied by ``summary.extract.find_suppressions`` to each line; ``# compile-ad-lint: ignore[CAL001]`` is
extended the same way when a line has it). Matching the line with that same pattern
here means an added code is always one the analyzer then honours, and an existing comment is
extended rather than duplicated: ``# noqa: E501`` becomes ``# noqa: E501, CAL001``; a bare
``# noqa`` (which already suppresses everything) or one that lists the code is left alone.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Sequence

from ..suppression import IGNORE_PATTERN, NOQA_PATTERN, listed_codes

#: Whitespace as Python's grammar knows it (``str.strip()`` would also eat U+2028 and friends).
PYTHON_WHITESPACE = " \t\x0c"


def noqa_insertion(line: str, codes: Sequence[str]) -> tuple[int, int, str] | None:
    """How to make ``line`` (without its line end) suppress ``codes``: ``(start, end, text)``,
    character offsets in the line and the text that replaces them; None when nothing is needed or
    a comment cannot go there (after a ``\\`` continuation)."""
    data = line.encode("utf-8", "surrogatepass")
    # The analyzer reads one suppression per line (an ignore[...] comment over a noqa one): extend
    # the one it reads.
    match = IGNORE_PATTERN.search(data) or NOQA_PATTERN.search(data)
    if match is not None and match.group("codes") is not None and not match.group("codes").strip():
        return None  # ``ignore[]`` lists nothing: it suppresses every code
    if match is not None:
        listed = match.group("codes")
        if listed is None:
            return None  # a bare noqa comment suppresses every code
        present = listed_codes(listed)
        missing = [code for code in dict.fromkeys(codes) if code.upper() not in present]
        if not missing:
            return None
        at = len(data[: match.end("codes")].decode("utf-8", "surrogatepass"))
        return at, at, ", " + ", ".join(missing)
    stripped = len(line.rstrip(PYTHON_WHITESPACE))
    if line[:stripped].endswith("\\"):
        return None  # a comment after a line continuation would be a syntax error
    return stripped, len(line), "  # noqa: " + ", ".join(dict.fromkeys(codes))


def lines_ending_in_strings(text: str) -> set[int]:
    """1-based lines whose end is inside a string (a comment added there would be string text)."""
    inside: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.STRING or token.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
                inside.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return inside
