"""What the analyzer reports: immutable findings with their locations.

Lines and columns are 1-based everywhere in this module; ``end_column`` is exclusive (the column
just past the flagged text), which is what SARIF expects. Output adapters convert from here
(for example to LSP's 0-based ranges), so no other module does position arithmetic.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Mapping


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"


class Verdict(str, enum.Enum):
    """Outcome of running a finding's code for real (confirm mode)."""

    CONFIRMED = "confirmed"
    NOT_REPRODUCED = "not-reproduced"
    SKIPPED = "skipped"
    ERROR = "error"


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

    @classmethod
    def point(cls, path: str, line: int = 1, column: int = 1) -> "Location":
        return cls(path, line, column, line, column + 1)

    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.line, self.column)


@dataclass(frozen=True)
class RelatedLocation:
    location: Location
    message: str


@dataclass(frozen=True)
class Fix:
    """A suggested change; never applied unless the user asks for it."""

    description: str


@dataclass(frozen=True)
class ConfirmResult:
    verdict: Verdict
    detail: str


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    severity: Severity
    location: Location
    related: tuple[RelatedLocation, ...] = ()
    fix: Fix | None = None
    #: Machine-readable facts behind the finding (backend, config value, autocast kwargs, ...),
    #: sorted ``(key, value)`` pairs so the finding stays hashable. Confirm mode builds probes from them.
    facts: tuple[tuple[str, str], ...] = ()
    #: device name -> verdict, filled in by confirm mode only.
    confirm: tuple[tuple[str, ConfirmResult], ...] | None = field(default=None, compare=False)

    @property
    def facts_dict(self) -> Mapping[str, str]:
        return dict(self.facts)

    def with_confirm(self, results: Mapping[str, ConfirmResult]) -> "Finding":
        return replace(self, confirm=tuple(sorted(results.items())))

    def sort_key(self) -> tuple:
        return (*self.location.sort_key(), self.code)
