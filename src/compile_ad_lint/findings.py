"""What the analyzer reports: immutable findings with their locations.

Lines and columns are 1-based everywhere in this module; ``end_column`` is exclusive (the column
just past the flagged text), which is what SARIF expects. Output adapters convert from here
(for example to LSP's 0-based ranges), so no other module does position arithmetic.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, replace


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
    def point(cls, path: str, line: int = 1, column: int = 1) -> Location:
        return cls(path, line, column, line, column + 1)

    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.line, self.column)


@dataclass(frozen=True)
class RelatedLocation:
    location: Location
    message: str


class Applicability(str, enum.Enum):
    """Ruff's convention: ``--fix`` applies safe fixes; unsafe ones need ``--unsafe-fixes``.

    A safe fix keeps what the code computes (it restores eager semantics without changing anything
    else); an unsafe one changes something else too (speed, the config of other compiled calls,
    a value whose intended meaning is a guess).
    """

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True, order=True)
class Edit:
    """Replace the text from ``line:column`` to ``end_line:end_column`` (1-based, end exclusive,
    columns in characters, like ``Location``) of the file ``path`` with ``replacement``.

    An insertion has an empty range (``end`` equal to the start)."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    replacement: str


@dataclass(frozen=True)
class Fix:
    """A suggested change; never applied unless the user asks for it.

    Rules build a fix with a ``plan`` (what to change, from the interpreter's facts); ``fixes.resolve``
    turns the plan into ``edits`` against the files' current text with LibCST. A fix whose plan
    cannot be carried out safely on that text is dropped there, so a resolved finding only offers
    fixes with edits.
    """

    description: str
    applicability: Applicability = Applicability.SAFE
    edits: tuple[Edit, ...] = ()
    plan: FixPlan | None = None

    @property
    def safe(self) -> bool:
        return self.applicability is Applicability.SAFE


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
    #: Other ways to fix it, offered by the editor and listed in JSON; ``--fix`` applies ``fix`` only.
    alternative_fixes: tuple[Fix, ...] = ()
    #: Machine-readable facts behind the finding (backend, config value, autocast kwargs, ...),
    #: sorted ``(key, value)`` pairs so the finding stays hashable. Confirm mode builds probes from them.
    facts: tuple[tuple[str, str], ...] = ()
    #: device name -> verdict, filled in by confirm mode only.
    confirm: tuple[tuple[str, ConfirmResult], ...] | None = field(default=None, compare=False)

    @property
    def facts_dict(self) -> Mapping[str, str]:
        return dict(self.facts)

    def with_confirm(self, results: Mapping[str, ConfirmResult]) -> Finding:
        return replace(self, confirm=tuple(sorted(results.items())))

    def sort_key(self) -> tuple:
        return (*self.location.sort_key(), self.code)

    @property
    def fixes(self) -> tuple[Fix, ...]:
        """The preferred fix first, then the alternatives."""
        return ((self.fix,) if self.fix is not None else ()) + self.alternative_fixes


# Imported last: plans name ``Location``. A run-time name (not only for type checkers) because the
# cache decodes stored findings, and their fix plans, against these annotations.
from .fixes.plans import FixPlan  # noqa: E402
