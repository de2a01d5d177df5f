"""CAL900 unparsable-file."""

from __future__ import annotations

from collections.abc import Container, Iterator

from ..core.findings import Finding, Severity, split_headline
from ..facts import Facts, ModuleFailure
from .base import Case, Rule


class UnparsableFile(Rule):
    code = "CAL900"
    name = "unparsable-file"
    severity = Severity.ERROR
    summary = "A file could not be read or parsed, so it was not analyzed."
    what_it_does = """
Reports a file that cannot be read (permissions, a path that does not exist), decoded (bytes that are
invalid in its declared encoding) or parsed (a syntax error, or syntax newer than the parser knows;
on Python 3.10 and 3.11, Python 3.12's type parameters and f-strings are read all the same).
The run continues with the other files. Only a file the analysis reads is parsed: one where a hazard
can start (a backward, a forward-AD region, a write of the autocast config, a framework call that
runs the backward) or one such a file imports. A syntax error elsewhere is not reported: nothing
there can hold or feed a hazard (a linter or the interpreter reports it).

It also reports a file whose analysis stopped before the end ("analysis incomplete: ..."): calls or
imports nested deeper than the interpreter's frame limit, or more function walks than
`max-function-walks` allows (20,000 by default; a test suite whose trainer state may hold any of
the models it builds can need more). What the analysis reached before it stopped is reported.
"""
    why_bad = """
Hazards in a file the analyzer cannot read go unreported; the diagnostic makes the gap visible instead
of silently passing.
"""
    example = """
def broken(:
    pass
"""
    use_instead = """
def fixed():
    pass
"""
    VALID = (Case("x = 1\n"),)
    INVALID = (Case("import torch\n\ndef step(loss):\n    loss.backward(  # expect: CAL900\n"),)

    def findings(self, facts: Facts, reported_in: Container[str] | None = None) -> Iterator[Finding]:
        for event in facts.of(ModuleFailure):
            # Reasons are built by the parser, the file system and the analysis: a long one keeps
            # its first part as the headline and the whole text as the detail.
            message, details = split_headline(event.reason)
            yield Finding(self.code, message, self.severity, event.location, details=details)
