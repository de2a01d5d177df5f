"""What every rule declares: its code, its documentation and the cases that test it.

Documentation (``docs/rules/``) and a large part of the test suite are generated from these
attributes, so a rule's behaviour, docs and tests live in one module.
"""

from __future__ import annotations

import enum
from collections.abc import Container, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from ..core.codes import BY_CODE
from ..core.findings import (
    HEADLINE_LIMIT,
    Applicability,
    Condition,
    Finding,
    Severity,
    compact_conditions,
    describe_conditions,
    headline,
)
from ..core.settings import DEFAULT_RULE_DOCS_URL, Config
from ..core.torch_versions import TorchTarget
from ..facts import CompiledFacts, Facts
from ..knowledge import behaviour
from ..knowledge.versions import RECORDED, default_target


@dataclass(frozen=True)
class Case:
    """A code sample; in invalid cases each expected finding's line ends in ``# expect: CODE``."""

    code: str
    #: Extra modules next to the sample, as ``{"relative/path.py": "source"}``.
    files: tuple[tuple[str, str], ...] = ()
    note: str = ""


class FixAvailability(str, enum.Enum):
    """Whether a rule's findings come with a fix (Ruff's "Fix is sometimes available.")."""

    NEVER = "never"
    SOMETIMES = "sometimes"
    ALWAYS = "always"


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity] = Severity.ERROR
    #: Whether its findings carry a fix, and how safe the fixes it offers are (``--fix`` applies
    #: the safe ones, ``--unsafe-fixes`` adds the others); the docs, ``explain`` and ``rules`` say it.
    fix_availability: ClassVar[FixAvailability] = FixAvailability.NEVER
    fix_safety: ClassVar[frozenset[Applicability]] = frozenset()
    #: One sentence, shown by ``compile-ad-lint rules``.
    summary: ClassVar[str]
    what_it_does: ClassVar[str]
    why_bad: ClassVar[str]
    example: ClassVar[str]
    use_instead: ClassVar[str]
    VALID: ClassVar[tuple[Case, ...]] = ()
    INVALID: ClassVar[tuple[Case, ...]] = ()
    #: The knowledge tables the rule's outcome depends on, for its docs' Versions section:
    #: ``forward_ad`` (``behaviour.FORWARD_AD_ROWS``), ``in_place`` (``behaviour.IN_PLACE_COMPILE_ROWS``).
    VERSIONED_TABLES: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        row = BY_CODE.get(cls.code)
        if row is None or (row.name, row.severity) != (cls.name, cls.severity):
            raise TypeError(f"{cls.__name__}: {cls.code} {cls.name} must match its row in core/codes.py")

    def __init__(self, config: Config) -> None:
        self.config = config

    @property
    def target(self) -> TorchTarget:
        """The torch the findings speak for: the configuration's resolved target (the analyzer
        resolves it), else the newest torch the knowledge has facts for."""
        return self.config.torch or default_target()

    def only_on(self, compiled: Iterable[CompiledFacts]) -> str:
        """A closing sentence when the finding rests on in-place compiles of modules torch.nn defines
        that only some series of the target compile (``CompiledFacts.compiled_on``); else nothing."""
        ons = [c.compiled_on for c in compiled]
        if not ons or any(on is None for on in ons):
            return ""
        series = sorted({s for on in ons if on is not None for s in on})
        if set(series) == set(self.target.series):
            return ""
        return (
            f" This holds on {self.target.versions_text(series)} only: there `.compile()` in place compiles modules "
            "that torch.nn defines; before, it compiles nothing."
        )

    def only_on_details(self, compiled: Iterable[CompiledFacts]) -> tuple[str, ...]:
        """``only_on`` as a finding's detail (none when it says nothing)."""
        text = self.only_on(compiled).strip()
        return (text,) if text else ()

    def findings(self, facts: Facts, reported_in: Container[str] | None = None) -> Iterator[Finding]:
        """The rule's findings among ``facts`` (what one check's analyses established).

        ``reported_in``: the displayed paths of the files whose findings the caller keeps (None:
        every file's). It is a hint: the caller drops the others anyway, and a rule whose findings
        cost to build skips them (the language server checks one open file, whose analysis reaches
        630 forward-AD chains ending in another file on the generated framework)."""
        raise NotImplementedError

    @classmethod
    def documentation(cls) -> str:
        """Markdown documentation under the fixed headings (Ruff style)."""
        return "\n".join(
            [
                f"# {cls.code} {cls.name}",
                "",
                f"Severity: {cls.severity.value}",
                "",
                cls.fix_sentence(),
                "",
                "## What it does",
                "",
                cls.what_it_does.strip(),
                "",
                "## Why is this bad?",
                "",
                cls.why_bad.strip(),
                "",
                "## Example",
                "",
                "```python",
                cls.example.strip("\n"),
                "```",
                "",
                "## Use instead",
                "",
                "```python",
                cls.use_instead.strip("\n"),
                "```",
                "",
                *cls.versions_section(),
            ]
        )

    @classmethod
    def versions_section(cls) -> list[str]:
        """``## Versions``: what the rule rests on for each torch version, from the knowledge rows."""
        recorded = ", ".join(RECORDED.values())
        lines = [
            "## Versions",
            "",
            f"Facts recorded on torch {recorded} (`facts/recorded/`, by the scripts in `facts/`); the findings",
            "speak for the target torch (`target-torch`, else the installed torch, else the project's pins).",
            "",
        ]
        if "forward_ad" in cls.VERSIONED_TABLES:
            lines += ["| what is compiled | call order | fullgraph | torch | outcome |", "|---|---|---|---|---|"]
            lines += [
                f"| {row.kind.value} | {row.order.value} | {'either' if row.fullgraph is None else row.fullgraph} "
                f"| {row.versions} | {row.outcome.value}{_eager_note(row)} |"
                for row in behaviour.FORWARD_AD_ROWS
            ]
            lines.append("")
        if "in_place" in cls.VERSIONED_TABLES:
            lines += ["| `module.compile()` in place on a module torch.nn defines | torch |", "|---|---|"]
            lines += [
                f"| {'compiles it' if row.compiles_torch_nn_modules else 'compiles nothing (Dynamo skips torch.nn frames)'}"
                f" | {row.versions} |"
                for row in behaviour.IN_PLACE_COMPILE_ROWS
            ]
            lines.append("")
        claims = [claim for claim in behaviour.CLAIMS if claim.rule == cls.code]
        if claims:
            lines += ["| also rests on | torch |", "|---|---|"]
            lines += [f"| {claim.what} | {claim.versions} |" for claim in claims]
            lines.append("")
        return lines

    @classmethod
    def fix_sentence(cls) -> str:
        """``Fix is sometimes available (safe or unsafe).``, as Ruff's rule pages say it."""
        if cls.fix_availability is FixAvailability.NEVER:
            return "Fix is not available."
        kinds = " or ".join(kind.value for kind in Applicability if kind in cls.fix_safety)
        how = "`--fix`" + (", unsafe ones with `--unsafe-fixes`" if Applicability.UNSAFE in cls.fix_safety else "")
        return f"Fix is {cls.fix_availability.value} available ({kinds}; {how})."

    @classmethod
    def fix_label(cls) -> str:
        """``safe fix``, ``unsafe fix``, ``safe/unsafe fix`` or ``no fix`` (``compile-ad-lint rules``)."""
        if cls.fix_availability is FixAvailability.NEVER:
            return "no fix"
        return "/".join(kind.value for kind in Applicability if kind in cls.fix_safety) + " fix"

    @classmethod
    def docs_url(cls, base: str = DEFAULT_RULE_DOCS_URL) -> str:
        """The rule's page under ``base`` (the config's ``rule-docs-url``): ``docs/rules/CODE.md``."""
        return f"{base}{cls.code}.md"


def _eager_note(row: behaviour.ForwardAdRow) -> str:
    first_call = row.order is behaviour.CallOrder.FIRST_CALL_DUAL
    return " (graph break: the call runs eagerly)" if first_call and row.outcome.correct else ""


def contradicts(conditions: Iterable[Condition]) -> bool:
    """Whether ``conditions`` need one switch, written the same way, both to hold and not: no run
    takes that path (``with autocast() if amp else nullcontext():``, then ``if not amp:
    loss.backward()``)."""
    seen: dict[str, bool] = {}
    return any(seen.setdefault(condition.expression, condition.holds) != condition.holds for condition in conditions)


def path_conditions(
    own: Iterable[Condition], alternatives: Iterable[Iterable[Condition]] = ()
) -> tuple[Condition, ...]:
    """The run-time switches a finding holds under: its own (where the flagged call runs), and those
    every one of its alternatives needs (each compiled output it may go through: one found on a path
    without a switch makes the finding hold there too)."""
    common: frozenset[Condition] | None = None
    for alternative in alternatives:
        found = frozenset(alternative)
        common = found if common is None else common & found
    return tuple(sorted(frozenset(own) | (common or frozenset())))


def on_path(finding: Finding, conditions: Iterable[Condition], shorter: Sequence[str] = ()) -> Finding:
    """``finding`` as one that holds only where ``conditions`` hold, listed in ``conditions`` and
    named in the headline: before it (``When `args.compile` is set: ...``), with the rule's
    ``shorter`` wordings of it when the headline would not fit, else the first condition after it
    (``... (when `args.compile` is set)``); all of them lead the details when the headline could not
    name them all."""
    ordered = tuple(sorted(frozenset(conditions)))
    if not ordered:
        return finding
    named = describe_conditions(ordered)
    first = ordered[0].describe() + (" and more" if len(ordered) > 1 else "")
    texts = (finding.message, *shorter)
    candidates = [f"{named}: {text}" for text in texts] + [f"{compact_conditions(ordered)}: {text}" for text in texts]
    full = [c for c in candidates if len(c) <= HEADLINE_LIMIT]
    # Never a headline that reads as unconditional: kylevedder/DenoisingZoo's three switches fit
    # neither way above, and its CAL002 read as if it held on every run.
    counted = "a run-time switch holds" if len(ordered) == 1 else f"{len(ordered)} run-time switches hold"
    message = headline(
        *full,
        f"{finding.message} (when {first})",
        *(f"When {counted}: {text}" for text in texts),
        f"{finding.message} (on some runs)",
    )
    details = finding.details
    if not message.startswith(f"{named}: "):  # the headline names them briefly, or counts them
        details = (f"{named}: decided at run time, not in the code; without it this does not hold.", *details)
    return replace(finding, message=message, details=details, conditions=ordered)
