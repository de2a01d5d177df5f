"""How a row says which text marks code worth analyzing (``knowledge.anchors`` collects the rows').

A row names tokens as the code writes them; the outline (``summary/outline.py``) turns them into
its pattern, allowing between two tokens whatever Python allows there (whitespace, a line
continuation, a comment), so that every spelling the parser accepts is found.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Preceded(enum.Enum):
    """What must stand before an anchor's first token."""

    ANYTHING = "anything"
    #: Not the end of a longer name (``grad(`` but not ``autograd(``).
    WORD_BOUNDARY = "word-boundary"
    #: A dot: the name is an attribute (``loss.backward``, ``trainer.fit``).
    ATTRIBUTE = "attribute"


@dataclass(frozen=True)
class Anchor:
    """Tokens that make a block worth analyzing, in order, and a word every match contains
    (discovery reads no further a file without any anchor's word)."""

    tokens: tuple[str, ...]
    word: str
    preceded: Preceded = Preceded.ANYTHING


@dataclass(frozen=True)
class ImportAnchor:
    """``from <...>.module import ..., name, ...``: the import binds one of ``names``, and the blocks
    using the names it binds are anchored too."""

    module: str
    names: tuple[str, ...]
    word: str
