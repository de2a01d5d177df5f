"""The one grammar of suppression comments: ``# noqa``, ``# noqa: CAL001, CAL002`` and
``# compile-ad-lint: ignore`` / ``# compile-ad-lint: ignore[CAL001]``.

The analyzer reads suppressions with it (``summary.extract.find_suppressions``) and ``--add-noqa``
and the language server's quick fix write them with it (``fixes.noqa``): a code added by a fix is
then always one the analyzer honours, and an existing comment is recognised the same way by both.
The patterns work on bytes because suppressions are read from undecoded source lines.
"""

from __future__ import annotations

import re

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
