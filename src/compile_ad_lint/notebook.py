"""Jupyter notebooks (``.ipynb``): the code cells as one Python module, positions mapped back.

A notebook is analyzed as the module its code cells make in order (what running them top to bottom
defines), never as Python source itself. IPython syntax is masked line for line, so it neither fails
to parse nor moves anything else: a line magic (``%time f()``), a shell line (``!pip install x``),
a help line (``obj?``, ``?obj``) becomes ``pass`` at its own indentation (a blank line at the top
level), ``x = !ls`` / ``x = %env`` keep their target (``x = None``), lines continued with ``\\`` after
such a line become blank, and a cell magic (``%%bash``) blanks its whole cell, except the magics
whose body is Python (``%%time``, ``%%timeit``, ``%%capture``, ...), which blank only their first line.
Only lines that start a statement are looked at (not lines inside brackets or triple-quoted strings).

Positions: the analysis reports module lines; ``Notebook.cell_position`` turns one into (cell, line in
the cell); cells are numbered from 1 counting every cell, markdown included, as notebook front ends
and Ruff show them. ``Notebook.raw_position`` finds the same character in the ``.ipynb`` file itself
(its JSON line and column), for reports that must point into the file (SARIF, GitHub annotations).

A file that is not a JSON notebook raises ``NotebookError``, an ``OSError``: it is reported like an
unreadable file (CAL900), and the rest of the project is still analyzed.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import pyast
from .core.findings import Finding
from .core.locations import Location
from .core.paths import is_notebook
from .core.text import line_starts, split_lines  # the line ends CPython and LibCST count

#: Cell magics whose body is Python that IPython runs as such.
PYTHON_CELL_MAGICS = frozenset(
    {"time", "timeit", "capture", "prun", "debug", "memit", "mprun", "pypy", "python", "python3"}
)

#: A line magic, shell escape or help request at the start of a statement.
_LINE_MAGIC = re.compile(r"([ \t]*)(?:[%!?]|[A-Za-z_][\w.]*\?\??[ \t]*$)")
#: ``x = !ls``, ``a, b = %sx cmd``: the assignment target stays, the magic becomes ``None``.
_ASSIGNED_MAGIC = re.compile(r"([ \t]*[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*[ \t]*=[ \t]*)[%!]")
_CELL_MAGIC = re.compile(r"[ \t]*%%([A-Za-z_]\w*)")


class NotebookError(OSError):
    """The file is not a notebook this tool can read (not JSON, not nbformat 4)."""


@dataclass(frozen=True)
class Cell:
    #: 1-based position among all cells of the notebook (markdown and raw cells count).
    number: int
    #: 0-based position in the notebook's ``cells`` array.
    index: int
    #: Module line of the cell's first line.
    first_line: int
    #: The cell's own source lines, unmasked, with their line endings.
    lines: tuple[str, ...]

    @property
    def last_line(self) -> int:
        return self.first_line + max(len(self.lines), 1) - 1


@dataclass
class Notebook:
    #: The module the code cells make, IPython syntax masked (same lines and columns as the cells).
    text: str
    cells: tuple[Cell, ...]
    #: The ``.ipynb`` file's text, for ``raw_position``.
    raw: str = field(repr=False)
    _firsts: list[int] = field(default_factory=list, repr=False)
    _sources: dict[int, list[tuple[int, int]]] | None = field(default=None, repr=False)
    _raw_lines: list[int] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._firsts = [cell.first_line for cell in self.cells]

    def cell_at(self, line: int) -> Cell | None:
        """The code cell holding module line ``line`` (the nearest one for a line past the end)."""
        if not self.cells:
            return None
        return self.cells[max(0, bisect.bisect_right(self._firsts, line) - 1)]

    def cell_position(self, line: int) -> tuple[int, int] | None:
        """(cell number, 1-based line in the cell) of module line ``line``."""
        cell = self.cell_at(line)
        if cell is None:
            return None
        return cell.number, min(max(1, line - cell.first_line + 1), max(len(cell.lines), 1))

    def cell(self, number: int) -> Cell | None:
        return next((cell for cell in self.cells if cell.number == number), None)

    def raw_position(self, number: int, line: int, column: int) -> tuple[int, int] | None:
        """Where character ``column`` (1-based) of line ``line`` of cell ``number`` is in the .ipynb
        file: its 1-based JSON line and column, or None when the file's layout cannot be followed."""
        cell = self.cell(number)
        if cell is None or not 1 <= line <= max(len(cell.lines), 1):
            return None
        target = sum(len(text) for text in cell.lines[: line - 1]) + max(0, column - 1)
        strings = self._source_strings().get(cell.index)
        if not strings:
            return None
        # The cell's source is the concatenation of these JSON strings: find the one holding ``target``.
        for position, (decoded_start, quote) in enumerate(strings):
            following = strings[position + 1][0] if position + 1 < len(strings) else None
            if following is None or target < following:
                offset = _raw_offset(self.raw, quote, target - decoded_start)
                return self._line_column(offset) if offset is not None else None
        return None

    # -- the file's layout ------------------------------------------------------------------

    def _source_strings(self) -> dict[int, list[tuple[int, int]]]:
        """For each cell index, its source strings as (decoded offset in the cell, raw offset of the quote)."""
        if self._sources is None:
            try:
                self._sources = _scan_sources(self.raw)
            except (ValueError, IndexError, RecursionError):
                self._sources = {}
        return self._sources

    def _line_column(self, offset: int) -> tuple[int, int]:
        if self._raw_lines is None:
            self._raw_lines = line_starts(self.raw)
        line = bisect.bisect_right(self._raw_lines, offset)
        return line, offset - self._raw_lines[line - 1] + 1


def parse(raw: bytes) -> Notebook:
    """The notebook in ``raw`` (the ``.ipynb`` file's bytes). Raises ``NotebookError``."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise NotebookError(f"notebook is not valid UTF-8: {error}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise NotebookError(
            f"notebook is not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})"
        ) from None
    except RecursionError:
        raise NotebookError("notebook is not valid JSON: nested too deeply") from None
    if not isinstance(document, dict) or not isinstance(document.get("cells"), list):
        version = document.get("nbformat") if isinstance(document, dict) else None
        hint = (
            f" (nbformat {version}: convert it with `jupyter nbconvert --to notebook`)"
            if isinstance(version, int) and version < 4
            else ""
        )
        raise NotebookError(f"not a Jupyter notebook: no list of cells{hint}")
    lines: list[str] = []
    cells: list[Cell] = []
    python = _is_python(document.get("metadata"))
    for index, cell in enumerate(document["cells"]):
        if not isinstance(cell, dict):
            raise NotebookError(f"not a Jupyter notebook: cell {index + 1} is not an object")
        if cell.get("cell_type") != "code" or not python:
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise NotebookError(f"not a Jupyter notebook: cell {index + 1} has a source that is not text")
        own = split_lines(source)
        cells.append(Cell(index + 1, index, len(lines) + 1, tuple(own)))
        masked = _parsed_alone(mask(own))
        if masked and not masked[-1].endswith(("\n", "\r")):
            masked[-1] += "\n"
        lines.extend(masked)
    return Notebook("".join(lines), tuple(cells), text)


#: The first line of a code cell that does not parse on its own, in the notebook's module: where
#: the error is in the cell, the length of CPython's message, the message, then the cell's first
#: line. The cell's lines are comments there: its text is still seen by the anchor scan (a cell
#: with a backward that does not parse is reported, as a file is), and nothing in it is analyzed.
_CELL_FAILURE = "# compile-ad-lint: cell does not parse: {line}:{column}:{length}: {message} # "
_CELL_FAILURE_LINE = re.compile(r"^# compile-ad-lint: cell does not parse: (\d+):(\d+):(\d+): ", re.MULTILINE)


def _parsed_alone(lines: list[str]) -> list[str]:
    """A masked cell's lines if it parses on its own, as Jupyter compiles each cell; else the cell
    as comments after its failure (``cell_failures``): an unterminated string in one cell does not
    swallow the cells after it."""
    try:
        pyast.parse("".join(lines))
        return lines
    except SyntaxError as error:
        line, column, message = error.lineno or 1, error.offset or 1, f"syntax error: {error.msg}"
    except (ValueError, RecursionError, MemoryError) as error:
        line, column, message = 1, 1, f"cannot parse: {error or type(error).__name__}"
    flat = " ".join(message.split())
    failure = _CELL_FAILURE.format(line=line, column=column, length=len(flat), message=flat)
    return [failure + lines[0], *("#" + text for text in lines[1:])]


def cell_failures(text: str) -> list[tuple[int, int, str]]:
    """(module line, column, message) of each code cell of a notebook's module (``module_source``)
    that does not parse on its own."""
    starts = line_starts(text)
    found = []
    for match in _CELL_FAILURE_LINE.finditer(text):
        first = bisect.bisect_right(starts, match.start())
        message = text[match.end() : match.end() + int(match.group(3))]
        found.append((first + int(match.group(1)) - 1, int(match.group(2)), message))
    return found


def _is_python(metadata: object) -> bool:
    """False only when the notebook says its kernel is another language (R, Julia, ...)."""
    if not isinstance(metadata, dict):
        return True
    for key, name in (("language_info", "name"), ("kernelspec", "language")):
        section = metadata.get(key)
        if isinstance(section, dict) and isinstance(section.get(name), str) and section[name]:
            return section[name].lower() in ("python", "python3", "ipython", "ipython3")
    return True


def _ending(line: str) -> str:
    return line[len(line.rstrip("\r\n")) :]


def mask(lines: list[str]) -> list[str]:
    """One cell's lines with IPython syntax masked; as many lines, every other line unchanged."""
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None:
        magic = _CELL_MAGIC.match(lines[first])
        if magic is not None:
            if magic.group(1) not in PYTHON_CELL_MAGICS:
                return [_ending(line) for line in lines]  # %%bash, %%html, %%writefile ...: not Python
            lines = lines[:first] + [_ending(lines[first])] + lines[first + 1 :]
    masked: list[str] = []
    depth, quote, continued, in_magic = 0, None, False, False
    for line in lines:
        if in_magic:  # a ``\`` continuation of a masked line
            masked.append(_ending(line))
            in_magic = line.rstrip("\r\n").endswith("\\")
            continue
        if depth == 0 and quote is None and not continued:
            replaced = _mask_line(line)
            if replaced is not None:
                masked.append(replaced)
                in_magic = line.rstrip("\r\n").endswith("\\")
                continue
        masked.append(line)
        depth, quote, continued = _scan(line, depth, quote)
    return masked


def _mask_line(line: str) -> str | None:
    assigned = _ASSIGNED_MAGIC.match(line)
    if assigned is not None:
        return assigned.group(1) + "None" + _ending(line)
    magic = _LINE_MAGIC.match(line)
    if magic is None or line.lstrip().startswith("#"):
        return None
    indent = magic.group(1)
    return (indent + "pass" if indent else "") + _ending(line)


def _scan(line: str, depth: int, quote: str | None) -> tuple[int, str | None, bool]:
    """The bracket depth and open string after ``line``, and whether it ends in a ``\\`` continuation."""
    i, n = 0, len(line)
    comment = False
    while i < n:
        c = line[i]
        if quote is not None:
            if c == "\\":
                i += 2
                continue
            if line.startswith(quote, i):
                i += len(quote)
                quote = None
                continue
            i += 1
            continue
        if c == "#":
            comment = True
            break
        if c in "\"'":
            quote = line[i : i + 3] if line[i : i + 3] in ('"""', "'''") else c
            i += len(quote)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(0, depth - 1)
        i += 1
    body = line.rstrip("\r\n")
    continued = not comment and body.endswith("\\") and (quote is None or len(quote) == 1)
    if quote is not None and len(quote) == 1 and not continued:
        quote = None  # an unterminated one-line string ends with its line (a syntax error the parser reports)
    return depth, quote, continued


# -- the .ipynb file's layout ----------------------------------------------------------------------

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _scan_sources(raw: str) -> dict[int, list[tuple[int, int]]]:
    """Where each code cell's source strings are in the file: cell index → [(decoded offset, quote offset)].

    Walks the top-level object and the ``cells`` array by hand, skipping every other value with the
    C decoder, so a notebook full of base64 outputs costs one fast pass.
    """
    found: dict[int, list[tuple[int, int]]] = {}

    def member(key: str, start: int) -> int:
        return _cells(raw, start, found) if key == "cells" and raw[start] == "[" else _skip_value(raw, start)

    _object(raw, _skip(raw, 1 if raw.startswith("\ufeff") else 0), member)
    return found


def _object(raw: str, i: int, member: Callable[[str, int], int]) -> int:
    """Walk the JSON object at ``raw[i]``: ``member(key, start)`` reads each value from its start and
    returns where it ends. Returns the offset after the closing ``}``."""
    _expect(raw, i, "{")
    i = _skip(raw, i + 1)
    while raw[i] != "}":
        key, i = _string(raw, i)
        i = _skip(raw, i)
        _expect(raw, i, ":")
        i = _skip(raw, member(key, _skip(raw, i + 1)))
        if raw[i] == ",":
            i = _skip(raw, i + 1)
    return i + 1


def _skip_value(raw: str, i: int) -> int:
    """The offset after the JSON value at ``raw[i]`` (decoded by the C decoder, then dropped)."""
    return _DECODER.raw_decode(raw, i)[1]


def _cells(raw: str, i: int, found: dict[int, list[tuple[int, int]]]) -> int:
    i = _skip(raw, i + 1)
    index = 0

    def member(key: str, start: int) -> int:
        if key != "source":
            return _skip_value(raw, start)
        found[index], end = _source(raw, start)
        return end

    while raw[i] != "]":
        i = _object(raw, i, member) if raw[i] == "{" else _skip_value(raw, i)
        index += 1
        i = _skip(raw, i)
        if raw[i] == ",":
            i = _skip(raw, i + 1)
    return i + 1


def _source(raw: str, i: int) -> tuple[list[tuple[int, int]], int]:
    if raw[i] == '"':
        _, end = _string(raw, i)
        return [(0, i)], end
    _expect(raw, i, "[")
    strings: list[tuple[int, int]] = []
    decoded = 0
    i = _skip(raw, i + 1)
    while raw[i] != "]":
        value, end = _string(raw, i)
        strings.append((decoded, i))
        decoded += len(value)
        i = _skip(raw, end)
        if raw[i] == ",":
            i = _skip(raw, i + 1)
    return strings, i + 1


def _string(raw: str, i: int) -> tuple[str, int]:
    _expect(raw, i, '"')
    return json.decoder.scanstring(raw, i + 1)  # type: ignore[attr-defined]


def _skip(raw: str, i: int) -> int:
    return _WHITESPACE.match(raw, i).end()  # type: ignore[union-attr]


def _expect(raw: str, i: int, char: str) -> None:
    if raw[i] != char:
        raise ValueError(f"expected {char!r} at {i}")


def _raw_offset(raw: str, quote: int, wanted: int) -> int | None:
    """The raw offset of decoded character ``wanted`` of the JSON string whose quote is at ``quote``."""
    i, decoded = quote + 1, 0
    while i < len(raw):
        if decoded == wanted:
            return i
        c = raw[i]
        if c == '"':
            return i if decoded == wanted else None
        if c == "\\":
            if raw[i + 1] == "u":
                code = int(raw[i + 2 : i + 6], 16)
                i += 6
                if 0xD800 <= code < 0xDC00 and raw.startswith("\\u", i):  # a surrogate pair: one character
                    i += 6
            else:
                i += 2
        else:
            i += 1
        decoded += 1
    return None


# -- the notebooks read in this process ----------------------------------------------------------

_LOADED: dict[Path, Notebook] = {}


def read(path: Path, raw: bytes) -> Notebook:
    """Parse ``raw`` as the notebook at ``path`` and remember it for mapping positions back."""
    notebook = parse(raw)
    _LOADED[_key(path)] = notebook
    return notebook


def load(path: Path | str) -> Notebook | None:
    """The notebook at ``path`` as last read in this process, else read now; None if unreadable."""
    key = _key(Path(path))
    found = _LOADED.get(key)
    if found is None:
        try:
            found = read(key, key.read_bytes())
        except OSError:
            return None
    return found


def _key(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path.absolute()


def notebook_for(path: Path) -> Notebook | None:
    """The notebook at ``path`` if it is one (by its suffix) and can be read."""
    return load(path) if is_notebook(path) else None


def cell_location(location: Location, notebook: Notebook) -> Location:
    """``location`` (module lines) as lines of the notebook cell it starts in.

    A range that runs into a later cell (the parser's view of an unclosed bracket) ends with its cell.
    """
    if location.cell is not None:
        return location
    start = notebook.cell_position(location.line)
    if start is None:
        return location
    number, line = start
    end = notebook.cell_position(location.end_line)
    if end is not None and end[0] == number and location.end_line >= location.line:
        end_line, end_column = end[1], location.end_column
    else:
        cell = notebook.cell(number)
        lines = cell.lines if cell is not None else ()
        end_line = max(len(lines), 1)
        end_column = len(lines[-1].rstrip("\r\n")) + 1 if lines else location.end_column
    return replace(location, line=line, end_line=end_line, end_column=end_column, cell=number)


def cell_locations(finding: Finding, lookup: Callable[[str], Notebook | None]) -> Finding:
    """``finding`` with its own and its related locations in notebooks mapped to cells."""

    def mapped(location: Location) -> Location:
        if location.cell is not None or not is_notebook(location.path):
            return location
        notebook = lookup(location.path)
        return cell_location(location, notebook) if notebook is not None else location

    related = tuple(replace(r, location=mapped(r.location)) for r in finding.related)
    return replace(finding, location=mapped(finding.location), related=related)


def module_source(path: Path, raw: bytes) -> bytes:
    """What the analyzer reads for a notebook: its masked module, as UTF-8."""
    return read(path, raw).text.encode("utf-8", "surrogatepass")
