"""CAL901 unused-noqa."""

from __future__ import annotations

from collections.abc import Container, Iterator

from ..core.findings import Applicability, Edit, Finding, Fix, Severity
from ..core.paths import is_notebook
from ..facts import Facts, UnusedSuppression
from .base import Case, FixAvailability, Rule


class UnusedNoqa(Rule):
    code = "CAL901"
    name = "unused-noqa"
    severity = Severity.WARNING
    fix_availability = FixAvailability.ALWAYS
    fix_safety = frozenset({Applicability.SAFE})
    summary = "A suppression comment names a compile-ad-lint code that finds nothing on its line."
    what_it_does = """
Reports a `# noqa: CAL002` (or `# compile-ad-lint: ignore[CAL002]`, or a blanket
`# compile-ad-lint: ignore`) on a line where the check found no finding it silences, and a code in
such a comment that names no rule (`CAL999`). Ruff's `RUF100`, for this tool's codes.

Only what the check can know is reported: codes of this tool (`E501` in the same comment is
another tool's and stays), of rules enabled in the file (`--select CAL001` knows nothing of CAL002;
`per-file-ignores` are respected), in a file the analysis read to its end (not one with a `CAL900`
finding). A bare `# noqa` silences every tool's findings and is never reported. A code that
covers CAL901 itself (`CAL901`, `CAL9`, `CAL`) is never reported.

A finding in one file can come from another file's code (a training script calling a helper
module): a suppression is judged only when the check covers the whole project around the file
(`check .`, `--dependents`, flake8, the editor's project pass, `--stdin-filename`, or every file
of the project named), never by `check some_file.py` of a larger project, which would call a
suppression unused whose finding only the rest of the project produces.

The fix removes the unused codes from the comment, or the whole suppression when nothing in it is
used (another comment after it on the line stays).
"""
    why_bad = """
A suppression that silences nothing hides the next real finding on its line: when the code there
changes and the hazard appears, the stale `# noqa: CAL002` keeps it out of every report.
"""
    example = """
import torch

model = torch.compile(torch.nn.Linear(4, 4))


def step(x):
    loss = model(x).sum()
    loss.backward()  # noqa: CAL002
"""
    use_instead = """
import torch

model = torch.compile(torch.nn.Linear(4, 4))


def step(x):
    loss = model(x).sum()
    loss.backward()
"""
    VALID = (
        Case(
            """
import torch

model = torch.compile(torch.nn.Linear(4, 4))


def step(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x).sum()
    loss.backward()  # noqa: CAL002
""",
            note="the directive silences the CAL002 on its line",
        ),
        Case("x = 1  # noqa\n", note="a bare noqa belongs to every tool"),
        Case("x = 1  # noqa: E501\n", note="another tool's code"),
        Case("x = 1  # noqa: CAL901\n", note="a code that covers CAL901 itself"),
        Case('s = "# noqa: CAL002 is how you silence it"\n', note="no comment: the text is in a string"),
    )
    INVALID = (
        Case("x = 1  # noqa: CAL002  # expect: CAL901\n"),
        Case("x = 1  # noqa: E501, CAL004  # expect: CAL901\n", note="only CAL004 is removed"),
        Case("x = 1  # compile-ad-lint: ignore  # expect: CAL901\n", note="this tool's blanket ignore"),
        Case("x = 1  # noqa: CAL999  # expect: CAL901\n", note="a code that names no rule"),
        Case(
            """
import torch

model = torch.compile(torch.nn.Linear(4, 4))


def step(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x).sum()
    loss.backward()  # noqa: CAL002, CAL005  # expect: CAL901
""",
            note="CAL002 is used, CAL005 is not",
        ),
    )

    def findings(self, facts: Facts, reported_in: Container[str] | None = None) -> Iterator[Finding]:
        for event in facts.of(UnusedSuppression):
            yield self.finding(event)

    def finding(self, event: UnusedSuppression) -> Finding:
        directive = "`noqa`" if event.kind == "noqa" else f"`{event.kind}`"
        parts = []
        if event.unused:
            parts.append("unused: " + ", ".join(f"`{code}`" for code in event.unused))
        if event.unknown:
            parts.append("unknown: " + ", ".join(f"`{code}`" for code in event.unknown))
        blanket = "" if parts else "blanket "
        message = f"Unused {blanket}{directive} directive" + (f" ({'; '.join(parts)})" if parts else "")
        location = event.location
        start, end, replacement = event.removal
        whole = not replacement
        fix = None
        if not is_notebook(location.path):  # a notebook's cells are not edited
            fix = Fix(
                f"Remove unused {directive} directive" if whole else "Remove the unused codes",
                Applicability.SAFE,
                edits=(Edit(location.path, location.line, start, location.line, end, replacement),),
            )
        return Finding(self.code, message, self.severity, location, fix=fix)
