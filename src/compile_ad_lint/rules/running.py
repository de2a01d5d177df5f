"""The rules run over one check's events, their findings kept for the last event lists seen.

What the rules find is a function of the events, the configuration and the files reported in. The
language server checks the edited buffer at each keystroke, and most edits leave the events as
they were (a changed string, a comment); those edits take the findings from here instead of
running the rules again (docs/performance.md, "the rules at each edit").
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from ..core.findings import Finding
from ..core.settings import Config
from ..facts import Event, Facts
from . import ALL_RULES
from .base import Rule
from .unparsable_file import UnparsableFile

#: Event lists remembered: a server checks one buffer at a time, a few when several are open.
REMEMBERED = 4

RuleFindings = tuple[tuple[type[Rule], tuple[Finding, ...]], ...]


def rule_findings(events: Sequence[Event], config: Config, reported_in: frozenset[str]) -> RuleFindings:
    """Each rule that runs under ``config`` (the enabled ones, and ``UnparsableFile``, whose
    findings outside the checked files are always reported) with what it finds in ``events``,
    in ``ALL_RULES`` order; the same findings again for equal arguments."""
    return _found(tuple(events), config, reported_in)  # events are hashable: ``Facts`` keeps each once


@lru_cache(maxsize=REMEMBERED)
def _found(events: tuple[Event, ...], config: Config, reported_in: frozenset[str]) -> RuleFindings:
    facts = Facts(events, config)
    return tuple(
        (rule_class, tuple(rule_class(config).findings(facts, reported_in=reported_in)))
        for rule_class in ALL_RULES
        if config.enables(rule_class.code) or rule_class.code == UnparsableFile.code
    )
