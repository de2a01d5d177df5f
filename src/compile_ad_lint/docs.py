"""Generate ``docs/rules/`` from the rule modules: ``python -m compile_ad_lint.docs [DIRECTORY]``.

The test suite regenerates the pages in memory and fails when the committed ones are stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .rules import ALL_RULES

DEFAULT_DIRECTORY = Path(__file__).resolve().parents[2] / "docs" / "rules"


def rule_pages() -> dict[str, str]:
    """File name -> Markdown text, for every rule plus an index."""
    pages = {f"{rule.code}.md": rule.documentation() for rule in ALL_RULES}
    index = ["# Rules", "", "| code | name | summary |", "|---|---|---|"]
    index += [f"| [{rule.code}]({rule.code}.md) | {rule.name} | {rule.summary} |" for rule in ALL_RULES]
    pages["README.md"] = "\n".join(index) + "\n"
    return pages


def write_pages(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in rule_pages().items():
        target = directory / name
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written


if __name__ == "__main__":
    for path in write_pages(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DIRECTORY):
        print(path)
