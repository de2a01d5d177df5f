"""What every rule declares: its code, its documentation and the cases that test it.

Documentation (``docs/rules/``) and a large part of the test suite are generated from these
attributes, so a rule's behaviour, docs and tests live in one module.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator
from dataclasses import dataclass
from typing import ClassVar

from ..config import Config
from ..findings import Finding, Severity


@dataclass(frozen=True)
class Case:
    """A code sample; in invalid cases each expected finding's line ends in ``# expect: CODE``."""

    code: str
    #: Extra modules next to the sample, as ``{"relative/path.py": "source"}``.
    files: tuple[tuple[str, str], ...] = ()
    note: str = ""


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity] = Severity.ERROR
    #: One sentence, shown by ``compile-ad-lint rules``.
    summary: ClassVar[str]
    what_it_does: ClassVar[str]
    why_bad: ClassVar[str]
    example: ClassVar[str]
    use_instead: ClassVar[str]
    VALID: ClassVar[tuple[Case, ...]] = ()
    INVALID: ClassVar[tuple[Case, ...]] = ()

    def __init__(self, config: Config) -> None:
        self.config = config

    def findings(self, events: Iterable[object], reported_in: Container[str] | None = None) -> Iterator[Finding]:
        """The rule's findings among ``events`` (what one check's analyses established).

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
            ]
        )

    @classmethod
    def docs_url(cls) -> str:
        return f"https://github.com/compile-ad-lint/compile-ad-lint/blob/main/docs/rules/{cls.code}.md"
