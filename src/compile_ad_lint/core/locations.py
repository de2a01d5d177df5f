"""Where things are in the checked files: locations, the statement a call runs in, related locations.

Lines and columns are 1-based everywhere; ``end_column`` is exclusive (the column just past the
flagged text), which is what SARIF expects. Output adapters convert from here (for example to LSP's
0-based ranges), so no other module does position arithmetic.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar, cast

from .paths import real_path

_T = TypeVar("_T")


@dataclass(frozen=True, order=True)
class Location:
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    #: In a notebook: the 1-based cell number (every cell counts), and ``line``/``end_line`` are
    #: lines of that cell. None in a Python file. The analysis works on module lines; the API maps
    #: notebook locations to cells last (``Analyzer._findings``), so cached results hold no cells.
    cell: int | None = None
    #: The real file ``path`` names (``paths.real_path``), filled in by the API once the analysis is
    #: done (``Analyzer._findings``), so cached events never hold a machine's absolute paths; None
    #: until then. Not compared: the same location is equal however it was reached.
    resolved: str | None = field(default=None, compare=False)

    @classmethod
    def point(cls, path: str, line: int = 1, column: int = 1) -> Location:
        return cls(path, line, column, line, column + 1)

    def sort_key(self) -> tuple[str, int, int, int]:
        return (self.path, self.cell or 0, self.line, self.column)

    def compared(self) -> tuple[str, int, int, int, int, int | None]:
        """The fields that order and compare locations (``order=True``), as a plain tuple: sorting
        by it orders as sorting the locations does, without a Python-level comparison per pair
        (sorting a backward's compiled outputs, each edit of the language server)."""
        return (self.path, self.line, self.column, self.end_line, self.end_column, self.cell)

    @property
    def file(self) -> Path:
        """The file this location is in: ``resolved`` when the API filled it in, else resolved now."""
        return Path(self.resolved) if self.resolved is not None else real_path(self.path)

    def with_resolved(self, file: Path | None = None) -> Location:
        """This location with ``resolved`` set (to ``file``, else to the real path of ``path``)."""
        return replace(self, resolved=str(file if file is not None else real_path(self.path)))


@dataclass(frozen=True)
class StatementSite:
    """Where a call runs, in lines: the innermost simple statement holding it (the call's own line
    when it is in a compound statement's header) and the function around it (None at module level).
    Confirm mode matches a run's stack against these, so it never parses the file again."""

    lines: tuple[int, int]
    function: tuple[int, int] | None = None


@dataclass(frozen=True)
class RelatedLocation:
    location: Location
    message: str


def unique_related(related: Iterable[RelatedLocation]) -> tuple[RelatedLocation, ...]:
    """``related`` with each location and message once (the first), compared as plain tuples: a
    backward reaching hundreds of compiled outputs lists thousands of related locations that say a
    few dozen things, and comparing them as dataclasses field by field cost each edit."""
    unique: dict[tuple[tuple[str, int, int, int, int, int | None], str], RelatedLocation] = {}
    for item in related:
        unique.setdefault((item.location.compared(), item.message), item)
    return tuple(unique.values())


def map_locations(value: _T, change: Callable[[Location], Location]) -> _T:
    """``value`` with ``change`` applied to every ``Location`` in it, through dataclass fields,
    tuples and frozensets (a finding, its related locations, its evidence, a fix plan)."""
    return cast(_T, _mapped(value, change))


def _mapped(value: object, change: Callable[[Location], Location]) -> object:
    if isinstance(value, Location):
        return change(value)
    if isinstance(value, tuple):
        return tuple(_mapped(item, change) for item in value)
    if isinstance(value, frozenset):
        return frozenset(_mapped(item, change) for item in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _mapped(getattr(value, f.name), change) for f in dataclasses.fields(value) if f.init}
        return replace(value, **changes)
    return value
