"""What the analyzer reports: immutable findings, their evidence, fixes and confirm verdicts.

Positions are ``Location``s (``core/locations.py``: 1-based, end exclusive).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

from .locations import Location, RelatedLocation, StatementSite, map_locations
from .plans import FixPlan


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"


class Verdict(str, enum.Enum):
    """Outcome of running a finding's code for real (confirm mode).

    ``confirmed`` and ``not-reproduced`` speak of the project's own code only; what a synthetic
    probe shows about the installed torch has its own values (``torch-has-hazard``,
    ``torch-lacks-hazard``), so a report can never read a probe as a verdict on the code.
    """

    CONFIRMED = "confirmed"  # the project's code ran the site and showed the hazard
    NOT_REPRODUCED = "not-reproduced"  # the project's code ran the site; the comparison showed no hazard
    CANNOT_SHOW = "cannot-show"  # the code ran, but this device cannot show it (autocast for another device)
    NOT_REACHED = "not-reached"  # the user's command ran, but never reached the site
    TORCH_HAS_HAZARD = "torch-has-hazard"  # synthetic probe: the installed torch has the hazard
    TORCH_LACKS_HAZARD = "torch-lacks-hazard"  # synthetic probe: the installed torch does not show it
    SKIPPED = "skipped"
    ERROR = "error"


class VerdictSource(str, enum.Enum):
    """What a verdict was measured on."""

    PROJECT = "project-code"  # the project's own code ran
    SYNTHETIC = "synthetic-probe"  # a small program built from the finding's facts; not the project's code
    NONE = "none"  # nothing was measured (skipped, not reached, an error before any comparison)


#: The verdicts only a run of the project's own code can give, and those only a synthetic probe gives.
PROJECT_VERDICTS = frozenset({Verdict.CONFIRMED, Verdict.NOT_REPRODUCED})
SYNTHETIC_VERDICTS = frozenset({Verdict.TORCH_HAS_HAZARD, Verdict.TORCH_LACKS_HAZARD})


@dataclass(frozen=True, order=True)
class Condition:
    """A run-time switch a finding depends on: the ``if`` test as written (``args.compile``) and
    whether the finding's path needs it true or false. ``default`` says whether the value written in
    the code (a default the user can override at launch) takes that path: True, False, or None when
    the code gives no value (an argparse flag, an environment variable)."""

    expression: str
    holds: bool = True
    default: bool | None = None

    def describe(self) -> str:
        """``when `args.compile` is set``, ``when `x == 'bf16'` does not hold (the default)``."""
        simple = self.expression.replace(".", "").replace("_", "").isalnum()
        if simple:
            verb = "is set" if self.holds else "is not set"
        else:
            verb = "holds" if self.holds else "does not hold"
        default = {True: " (the default)", False: " (not the default)", None: ""}[self.default]
        return f"`{self.expression}` {verb}{default}"

    def short(self) -> str:
        """``args.compile``, ``not `args.debug```: for a headline with little room."""
        return f"`{self.expression}`" if self.holds else f"not `{self.expression}`"

    def as_dict(self) -> dict[str, str | bool | None]:
        """The JSON and SARIF form: ``{"expression": "args.compile", "holds": true, "default": null}``."""
        return {"expression": self.expression, "holds": self.holds, "default": self.default}


def compact_conditions(conditions: Iterable[Condition]) -> str:
    """``When `compile` and not `profile```: the conditions without their defaults."""
    return "When " + " and ".join(condition.short() for condition in conditions)


def describe_conditions(conditions: Iterable[Condition]) -> str:
    """``When `args.compile` is set and `args.amp` is set``: the run-time path a finding holds on."""
    parts = [condition.describe() for condition in conditions]
    if not parts:
        return ""
    if len(parts) > _NAMED_CONDITIONS:
        parts = [*parts[:_NAMED_CONDITIONS], f"{len(parts) - _NAMED_CONDITIONS} more run-time switches are right"]
    return "When " + (" and ".join(parts))


#: How many conditions a message names (all are in the finding's ``conditions``).
_NAMED_CONDITIONS = 3


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

    def applies(self, unsafe: bool) -> bool:
        """Whether ``--fix`` applies it: it is safe or ``--unsafe-fixes`` was given, and it has edits
        or a plan to build them from. (A text report does not build them: LibCST costs a third of
        a warm run; a plan that turns out not to fit the code is rare, and ``--fix`` then skips it.)"""
        return (bool(self.edits) or self.plan is not None) and (unsafe or self.safe)


@dataclass(frozen=True)
class ConfirmResult:
    """One device's verdict. ``source`` says what ran; ``torch_version`` is ``torch.__version__`` in
    the run that measured it; ``compared`` names what was compared, ``difference`` and ``tolerance``
    the measured relative difference and the bound it was judged against (None when the verdict
    does not rest on a number)."""

    verdict: Verdict
    detail: str
    source: VerdictSource = VerdictSource.NONE
    device: str | None = None
    torch_version: str | None = None
    compared: str = ""
    difference: float | None = None
    tolerance: float | None = None

    def __post_init__(self) -> None:
        if self.source is VerdictSource.SYNTHETIC and self.verdict in PROJECT_VERDICTS:
            raise ValueError(f"a synthetic probe cannot give the verdict {self.verdict.value!r}")
        if self.verdict in SYNTHETIC_VERDICTS and self.source is not VerdictSource.SYNTHETIC:
            raise ValueError(f"{self.verdict.value!r} is a synthetic probe's verdict")


class Evidence:
    """What a rule established for one finding, as typed values: the base of each rule's frozen
    evidence dataclass (defined beside its rule).

    Confirm mode reads it directly (the compiled call's location, the configs and autocast states as
    the interpreter knew them); the JSON and SARIF ``facts`` are rendered from it by ``facts()``, so
    the report and the runs can never disagree about what was found.
    """

    #: Where the evidence classes are defined: the cache's codec imports it to decode a stored
    #: finding's evidence (a check served from its record imports nothing else of the rules).
    SUBCLASS_MODULES: ClassVar[tuple[str, ...]] = ("compile_ad_lint.rules",)

    def facts(self) -> tuple[tuple[str, str], ...]:
        """The finding's machine-readable facts, sorted ``(key, value)`` string pairs."""
        raise NotImplementedError

    @property
    def flagged_site(self) -> StatementSite | None:
        """The statement and function the flagged call runs in (confirm matches run stacks against
        them); None when the rule knows none (CAL003 flags a configuration, not a call)."""
        return getattr(self, "flagged", None)


#: A finding's message is its headline, read at a glance in every front end (the text report's
#: line, flake8, an editor's diagnostic): one sentence of at most this many characters.
HEADLINE_LIMIT = 120


def headline(*candidates: str) -> str:
    """The first of ``candidates`` that fits ``HEADLINE_LIMIT`` (a rule writes its most specific
    wording first, then shorter ones), else the last one cut to fit."""
    for candidate in candidates:
        if len(candidate) <= HEADLINE_LIMIT:
            return candidate
    return shortened(candidates[-1], HEADLINE_LIMIT)


def shortened(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the cut marked with an ellipsis (a quoted value from
    the checked code in a headline)."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "\u2026"


def split_headline(text: str) -> tuple[str, tuple[str, ...]]:
    """A message built elsewhere (a file system's or a parser's error) as a headline and details:
    the text itself when it fits, else its part before the last ``": "`` or ``"; "`` that leaves a
    headline that fits, with the whole text as the detail."""
    if len(text) <= HEADLINE_LIMIT:
        return text, ()
    cut = max(text.rfind(": ", 0, HEADLINE_LIMIT), text.rfind("; ", 0, HEADLINE_LIMIT))
    head = text[:cut] if cut > 0 else shortened(text, HEADLINE_LIMIT)
    return head, (text,)


@dataclass(frozen=True)
class Finding:
    code: str
    #: The headline: one sentence under ``HEADLINE_LIMIT`` characters, no closing period. What
    #: supports it is in ``related`` (each with its location) and ``details``.
    message: str
    severity: Severity
    location: Location
    related: tuple[RelatedLocation, ...] = ()
    fix: Fix | None = None
    #: Other ways to fix it, offered by the editor and listed in JSON; ``--fix`` applies ``fix`` only.
    alternative_fixes: tuple[Fix, ...] = ()
    #: Machine-readable facts behind the finding (backend, config value, autocast kwargs, ...),
    #: sorted ``(key, value)`` pairs so the finding stays hashable: rendered from ``evidence`` when
    #: there is one; given directly only by findings built without a rule (tests, other tools).
    facts: tuple[tuple[str, str], ...] = ()
    #: device name -> verdict, filled in by confirm mode only.
    confirm: tuple[tuple[str, ConfirmResult], ...] | None = field(default=None, compare=False)
    #: The rule's typed evidence (what confirm mode runs from); ``facts`` is its rendering, so it is
    #: not compared again.
    evidence: Evidence | None = field(default=None, compare=False)
    #: What the headline leaves out that has no location of its own, as sentences: the evidence
    #: behind it, the consequence, how to fix it (the text report's ``note:`` lines).
    details: tuple[str, ...] = ()
    #: The run-time switches the finding holds under (``if args.compile:``, a config field, an
    #: environment variable), each named in the message too; empty when it holds on every run.
    conditions: tuple[Condition, ...] = ()

    def __post_init__(self) -> None:
        if self.evidence is None:
            return
        rendered = self.evidence.facts()
        if not self.facts:
            object.__setattr__(self, "facts", rendered)
        elif self.facts != rendered:
            raise ValueError(f"{self.code}: facts given next to evidence must be its rendering")

    @property
    def full_message(self) -> str:
        """The headline and the details as one text (formats with room for it: SARIF)."""
        if not self.details:
            return self.message
        return " ".join([self.message + ("" if self.message.endswith((".", "?", "!")) else "."), *self.details])

    @property
    def facts_dict(self) -> Mapping[str, str]:
        return dict(self.facts)

    def with_confirm(self, results: Mapping[str, ConfirmResult]) -> Finding:
        return replace(self, confirm=tuple(sorted(results.items())))

    def sort_key(self) -> tuple[str, int, int, int, str]:
        return (*self.location.sort_key(), self.code)

    def with_resolved(self, resolve: Callable[[str], Path]) -> Finding:
        """This finding with every location, the evidence's included, naming its real file
        (``resolve`` maps a displayed path to it)."""
        files: dict[str, Path] = {}

        def resolved(location: Location) -> Location:
            if location.path not in files:
                files[location.path] = resolve(location.path)
            return location.with_resolved(files[location.path])

        return map_locations(self, resolved)

    def fixable(self, unsafe: bool) -> bool:
        """Whether ``--fix`` (with ``--unsafe-fixes`` when ``unsafe``) fixes it: Ruff's ``[*]``."""
        return self.fix is not None and self.fix.applies(unsafe)

    @property
    def fixes(self) -> tuple[Fix, ...]:
        """The preferred fix first, then the alternatives."""
        return ((self.fix,) if self.fix is not None else ()) + self.alternative_fixes
