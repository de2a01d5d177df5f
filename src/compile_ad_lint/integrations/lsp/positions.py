"""Positions and lines as LSP counts them: ``LineTable`` (LSP's line breaks, the client's position
encoding) and ``lsp_range``, the one place a finding's location becomes an LSP range."""

from __future__ import annotations

from collections.abc import Callable

from lsprotocol import types

from ...core.locations import Location
from ...core.text import line_starts


def _unit_counter(encoding: str | None) -> Callable[[str], int]:
    """How many code units of the negotiated position encoding a string takes.

    UTF-16 unless UTF-8 or UTF-32 was negotiated (pygls falls back to UTF-16 the same way).
    ``surrogatepass`` counts a lone surrogate (JSON can carry one) as one UTF-16 unit, as pygls does.
    """
    if encoding == types.PositionEncodingKind.Utf32:
        return len
    if encoding == types.PositionEncodingKind.Utf8:
        return lambda text: len(text.encode("utf-8", "surrogatepass"))
    return lambda text: len(text.encode("utf-16-le", "surrogatepass")) // 2


class LineTable:
    """One text split into LSP lines once, with conversions between characters and client units.

    Built once per text and shared by every position computed in it, so that placing N diagnostics
    costs O(N + text) rather than one split of the text per diagnostic.
    """

    def __init__(self, text: str, encoding: str | None = types.PositionEncodingKind.Utf16) -> None:
        self.text = text
        self._starts = line_starts(text)
        self._units = _unit_counter(encoding)

    @property
    def line_count(self) -> int:
        """Lines as LSP counts them: a text ending with a line break has an empty last line."""
        return len(self._starts)

    @property
    def lines(self) -> tuple[str, ...]:
        """The lines with their endings, the shape of ``TextDocument.lines`` (no empty last line)."""
        ends = [*self._starts[1:], len(self.text)]
        return tuple(self.text[start:end] for start, end in zip(self._starts, ends, strict=True) if start < end)

    def line(self, number: int) -> str:
        """0-based line ``number`` without its line ending; '' outside the text."""
        if not 0 <= number < len(self._starts):
            return ""
        end = self._starts[number + 1] if number + 1 < len(self._starts) else len(self.text)
        return self.text[self._starts[number] : end].rstrip("\r\n")

    def position(self, line: int, column: int) -> types.Position:
        """0-based ``line`` and character ``column`` as a client position.

        A column past the line's end is its end (LSP's rule); a line past the text is the text's end.
        """
        if line >= len(self._starts):
            line = len(self._starts) - 1
            column = len(self.line(line))
        return types.Position(line, self._units(self.line(line)[:column]))

    def offset(self, position: types.Position) -> int:
        """The index into ``text`` of a client position, clamped like ``position``."""
        if position.line >= len(self._starts):
            return len(self.text)
        line = self.line(position.line)
        return self._starts[position.line] + self._column(line, position.character)

    def _column(self, line: str, units: int) -> int:
        """The character index in ``line`` after ``units`` client code units (inside a character: before it)."""
        if self._units(line) == len(line):  # one unit per character: ASCII, or any BMP text in UTF-16
            return min(units, len(line))
        column = counted = 0
        for character in line:
            counted += self._units(character)
            if counted > units:
                break
            column += 1
        return column


def lsp_range(location: Location, table: LineTable | None) -> types.Range:
    """The only 1-based → 0-based conversion: our Location to an LSP Range in the client's units.

    ``Location`` columns are 1-based character offsets, ``end_column`` exclusive; an LSP range end is
    exclusive and 0-based too, so both ends move by one. ``table`` is the text the location refers to
    (used to count code units); without it (an unreadable file) characters are taken as code units.
    """
    start = (max(location.line - 1, 0), max(location.column - 1, 0))
    end = max(start, (max(location.end_line - 1, 0), max(location.end_column - 1, 0)))
    if table is None:
        return types.Range(types.Position(*start), types.Position(*end))
    return types.Range(table.position(*start), table.position(*end))
