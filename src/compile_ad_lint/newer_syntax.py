"""Python 3.12's syntax rewritten so that the parser of Python 3.10 or 3.11 reads it, every other
token where it was: what ``pyast.parse`` falls back to on such a Python when a source fails.

A project written for Python 3.12 or newer uses PEP 695's type parameters (``class Pipeline[T]:``,
``def load[T](path) -> T:``, ``type Features = dict[str, int]``) and PEP 701's f-strings (a
replacement field reusing the string's quotes: ``f"{path / "checkpoints"}"``), which an older
parser rejects: huggingface/lerobot's five such modules and facebookresearch/lingua's MTP trainer
were each a CAL900 "syntax error" and went unanalyzed when compile-ad-lint ran on Python 3.11.

Positions are kept in lines and in UTF-8 bytes of each line (what ``ast`` counts): a blanked
character becomes as many spaces as its bytes (``_blanked``); a line break inside what is blanked
continues its line with a backslash. Only a ``type`` alias's own name moves, to where ``type`` stood.
"""

from __future__ import annotations

import io
import tokenize

#: Tokens after which a logical line starts (where a ``type`` statement may stand).
_LINE_STARTS = frozenset({tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT})
_OPENING = {"[": "]", "(": ")", "{": "}"}
_CLOSING = frozenset(_OPENING.values())
#: String prefixes (lower case); with ``f`` (or ``t``, Python 3.14) the string has replacement fields.
_PREFIXES = frozenset({"", "r", "u", "b", "br", "rb", "f", "fr", "rf", "t", "tr", "rt"})


def older_syntax(text: str) -> str | None:
    """``text`` without f-string contents (:func:`without_fstring_contents`) and type parameters
    (:func:`without_type_parameters`); None when neither had anything to rewrite."""
    blanked = without_fstring_contents(text)
    rewritten = without_type_parameters(blanked if blanked is not None else text)
    return rewritten if rewritten is not None else blanked


# -- f-strings ------------------------------------------------------------------------------------


def without_fstring_contents(text: str) -> str | None:
    """``text`` with the contents of every f-string blanked (``f"{a["k"]}"`` -> ``f"        "``),
    scanned as Python 3.12 scans them (PEP 701: a replacement field may hold any expression,
    strings with the same quotes, comments and line breaks); None when it has no f-string with
    contents, or a string or field that does not end. Only a file the parser rejected is read this
    way: its f-strings' expressions (log messages, paths) are not analyzed."""
    spans: list[tuple[int, int, bool]] = []
    position, length = 0, len(text)
    while position < length:
        char = text[position]
        if char == "#":
            position = _line_end(text, position)
        elif char in "'\"":
            scanned = _string(text, position)
            if scanned is None:
                return None
            end, content, is_f, triple = scanned
            if is_f and content[0] < content[1]:
                spans.append((content[0], content[1], triple))
            position = end
        else:
            position += 1
    if not spans:
        return None
    return _spliced(text, [(start, stop, _blanked(text[start:stop], triple)) for start, stop, triple in spans])


def _spliced(text: str, edits: list[tuple[int, int, str]]) -> str:
    """``text`` with each ``(start, stop, replacement)`` (in order, not overlapping) made."""
    pieces, at = [], 0
    for start, stop, replacement in edits:
        pieces += [text[at:start], replacement]
        at = stop
    pieces.append(text[at:])
    return "".join(pieces)


def _line_end(text: str, position: int) -> int:
    ends = [found for found in (text.find("\n", position), text.find("\r", position)) if found >= 0]
    return min(ends) if ends else len(text)


def _prefix(text: str, quote: int) -> str | None:
    """The string prefix before the quote at ``quote`` (lower case), None when the letters before it
    are a name's end (not a prefix)."""
    start = quote
    while start > 0 and text[start - 1].isalpha() and quote - start < 2:
        start -= 1
    if start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
        return None
    prefix = text[start:quote].lower()
    return prefix if prefix in _PREFIXES else None


def _string(text: str, quote: int) -> tuple[int, tuple[int, int], bool, bool] | None:
    """The string literal whose opening quote is at ``quote``: where it ends, its contents' span,
    whether it is an f-string, whether triple-quoted; None when it does not end."""
    prefix = _prefix(text, quote) or ""
    is_f = "f" in prefix or "t" in prefix
    delimiter = text[quote] * 3 if text.startswith(text[quote] * 3, quote) else text[quote]
    start = position = quote + len(delimiter)
    length = len(text)
    while position < length:
        char = text[position]
        if text.startswith(delimiter, position):
            return position + len(delimiter), (start, position), is_f, len(delimiter) == 3
        if char == "\\":
            position += 1 if position + 1 < length and text[position + 1] in "{}" else 2
        elif char in "\r\n" and len(delimiter) == 1:
            return None  # a single-quoted string ends with its line
        elif is_f and text.startswith("{{", position):
            position += 2
        elif is_f and char == "{":
            found = _field(text, position + 1)
            if found is None:
                return None
            position = found
        else:
            position += 1
    return None


def _field(text: str, position: int) -> int | None:
    """Where the replacement field whose expression starts at ``position`` ends (after its ``}``)."""
    depth, length = 0, len(text)
    while position < length:
        char = text[position]
        if char in "'\"":
            scanned = _string(text, position)
            if scanned is None:
                return None
            position = scanned[0]
        elif char == "#":
            position = _line_end(text, position)
        elif char in "([{":
            depth += 1
            position += 1
        elif char in _CLOSING:
            if depth == 0:
                return position + 1 if char == "}" else None
            depth -= 1
            position += 1
        elif char == ":" and depth == 0:
            return _format_spec(text, position + 1)
        else:
            position += 1
    return None


def _format_spec(text: str, position: int) -> int | None:
    """Where a format spec starting at ``position`` ends (after the field's ``}``): it may hold fields."""
    length = len(text)
    while position < length:
        char = text[position]
        if char == "}":
            return position + 1
        if char == "{":
            found = _field(text, position + 1)
            if found is None:
                return None
            position = found
        elif char in "\r\n":
            return None
        else:
            position += 1
    return None


def _blanked(contents: str, triple: bool) -> str:
    """``contents`` as spaces of the same bytes, line breaks kept (continued by a backslash in a
    single-quoted string)."""
    lines = io.StringIO(contents, newline="").readlines()
    out = []
    for line in lines:
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        blank = " " * _width(body)
        if ending and not triple:
            blank = blank[:-1] + "\\" if blank else "\\"
        out.append(blank + ending)
    return "".join(out)


# -- type parameters ------------------------------------------------------------------------------


def without_type_parameters(text: str) -> str | None:
    """``text`` with PEP 695's type parameter lists (after a ``class`` or ``def`` name, or a ``type``
    alias's name) blanked and ``type X = ...`` made ``X = ...``; None when it has none."""
    lines = io.StringIO(text, newline="").readlines()
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: tuple[int, int]) -> int:
        return starts[position[0] - 1] + position[1]

    tokens: list[tokenize.TokenInfo] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text, newline="").readline):
            if token.type not in (tokenize.COMMENT, tokenize.NL):
                tokens.append(token)
    except (tokenize.TokenError, SyntaxError):
        pass  # the tokens before the error are where they are; the parse reports the error
    edits: list[tuple[int, int, str]] = []
    for index, token in enumerate(tokens):
        name, opening = (tokens[index + 1 : index + 3] + [None, None])[:2]
        if token.type != tokenize.NAME or name is None or name.type != tokenize.NAME:
            continue
        previous = tokens[index - 1] if index else None
        alias = token.string == "type" and (previous is None or previous.type in _LINE_STARTS or previous.string == ";")
        if alias and opening is not None and opening.string in ("=", "[") and name.start[0] == token.start[0]:
            begin, stop = offset(token.start), offset(name.end)
            edits.append((begin, stop, name.string + " " * (_width(text[begin:stop]) - _width(name.string))))
        if (alias or token.string in ("class", "def")) and opening is not None and opening.string == "[":
            closing = _closing(tokens, index + 2)
            if closing is None:
                return None
            begin, stop = offset(opening.start), offset(closing.end)
            edits.append((begin, stop, _blanked(text[begin:stop], triple=False)))
    return _spliced(text, edits) if edits else None


def _width(text: str) -> int:
    return len(text.encode("utf-8"))


def _closing(tokens: list[tokenize.TokenInfo], opening: int) -> tokenize.TokenInfo | None:
    """The token closing the bracket at ``tokens[opening]``."""
    expected: list[str] = []
    for token in tokens[opening:]:
        if token.type != tokenize.OP:
            continue
        if token.string in _OPENING:
            expected.append(_OPENING[token.string])
        elif expected and token.string == expected[-1]:
            expected.pop()
            if not expected:
                return token
    return None
