"""Source text as Python reads it: decoded honouring the coding declaration, identifiers NFKC-normal,
lines split where CPython's tokenizer splits them. Plain functions of text, for every layer (the
outline, notebooks, fixes, output, the language server)."""

from __future__ import annotations

import io
import itertools
import re
import tokenize
import unicodedata


def nfkc(text: str) -> str:
    """``text`` normalized as Python normalizes identifiers (NFKC), itself when already normal."""
    return text if unicodedata.is_normalized("NFKC", text) else unicodedata.normalize("NFKC", text)


#: Where a line ends, for CPython's tokenizer, LibCST and LSP alike (``str.splitlines`` also splits
#: at form feeds and U+2028, which no tokenizer does).
LINE_END = re.compile(r"\r\n|\r|\n")


def decode(source: bytes) -> str:
    """The text of a Python source file, honouring its coding declaration and BOM."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    text = source.decode(encoding)
    return text[1:] if text.startswith("\ufeff") else text


#: A line with its ending (``LINE_END``), or the text after the last ending.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split exactly where CPython's tokenizer counts new lines (every
    view splits its file, the language server every buffer it places diagnostics in)."""
    if "\r" in text:
        return _LINE.findall(text)
    lines = text.split("\n")  # most files end lines with \n alone: str.split is the fastest way
    last = lines.pop()
    lines = [line + "\n" for line in lines]
    if last:
        lines.append(last)
    return lines


def line_starts(text: str) -> list[int]:
    """The offset of each line's first character in ``text`` (lines as ``split_lines`` splits
    them; a text ending with a line break has an empty last line, which starts at its end)."""
    if "\r" in text:
        return [0, *(match.end() for match in LINE_END.finditer(text))]
    return list(itertools.accumulate(map((1).__add__, map(len, text.split("\n")[:-1])), initial=0))
