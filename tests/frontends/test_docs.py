"""The README a new user reads top to bottom, and the pages under docs/ it leads to.

The README stays short (under 400 lines) and links every page under docs/; every relative link in the
README and the pages reaches a file (and, with a ``#fragment``, a heading of that file); the quick
start has the two commands it promises, and the test command is the one CI runs (``.ci/run``).
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

# The folder holding pyproject.toml, wherever under tests/ this file is.
REPO_ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
README = REPO_ROOT / "README.md"
PAGES = sorted((REPO_ROOT / "docs").rglob("*.md"))

# [text](target) outside code; images too. Autolinks and reference-style links are not used here.
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def _prose(text: str) -> str:
    """The text outside fenced code blocks and inline code spans, where links are links."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(lines)


def _links(path: Path) -> list[str]:
    return LINK.findall(_prose(path.read_text(encoding="utf-8")))


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    text = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    headings = re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", _fenced_out(path.read_text(encoding="utf-8")), re.M)
    return {_anchor(heading) for heading in headings}


def _fenced_out(text: str) -> str:
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return "\n".join(lines)


def _relative(target: str) -> bool:
    return not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) and not target.startswith("//")


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_every_relative_link_reaches_a_file(page):
    broken = []
    for target in _links(page):
        if not _relative(target):
            continue
        path_part, _, fragment = target.partition("#")
        resolved = (page.parent / path_part).resolve() if path_part else page
        if not resolved.exists():
            broken.append(f"{target}: no {resolved}")
        elif fragment and resolved.suffix == ".md" and fragment not in _anchors(resolved):
            broken.append(f"{target}: no heading #{fragment} in {resolved.relative_to(REPO_ROOT)}")
        elif not resolved.is_relative_to(REPO_ROOT):
            broken.append(f"{target}: outside the repository")
    assert not broken, f"{page.relative_to(REPO_ROOT)}: " + "; ".join(broken)


def test_the_link_finder_finds_links():
    """The links above are found, in every form the pages use, and not inside code."""
    sample = (
        "See [a](docs/a.md), [`b`](b.md#part) and [c [d]](c.md).\n"
        "`[not](code.md)` and\n```\n[not](fenced.md)\n```\n![img](pic.png)\n"
    )
    assert LINK.findall(_prose(sample)) == ["docs/a.md", "b.md#part", "c.md", "pic.png"]
    assert _anchor("Confirm mode (runs your code)") == "confirm-mode-runs-your-code"
    assert _anchor("`--fix` and the `[*]` marker") == "--fix-and-the--marker"


def test_readme_is_short():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines < 400, f"README.md has {lines} lines; move details to a page under docs/"


def test_readme_links_every_docs_page():
    linked = {(README.parent / target.partition("#")[0]).resolve() for target in _links(README) if _relative(target)}
    pages = [page for page in PAGES if page.parent.name != "rules" or page.name == "README.md"]
    missing = [str(page.relative_to(REPO_ROOT)) for page in pages if page.resolve() not in linked]
    assert not missing, f"README.md links no {missing}"


def _quick_start() -> str:
    readme = README.read_text(encoding="utf-8")
    start = readme.index("\n## Quick start\n")
    return readme[start : readme.index("\n## ", start + 1)]


def test_quick_start_has_the_two_commands_and_says_what_to_expect():
    section = _quick_start()
    commands = re.findall(r"```sh\n(.*?)\n```", section, re.S)
    assert len(commands) == 2, commands
    run, test = commands
    assert "pip install -e ." in run and "compile-ad-lint check fixtures/" in run
    assert "status 1" in section, "the quick start must say that exit status 1 on the fixtures is expected"
    assert re.search(r"\d+ to \d+ minutes", section), "the quick start must say how long the suite takes"
    assert 'pip install -e ".[test]"' in test and test.endswith("python -m pytest")


def test_quick_start_test_command_is_what_ci_runs():
    ci = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8").replace(" --quiet", "")
    test = re.findall(r"```sh\n(.*?)\n```", _quick_start(), re.S)[1]
    for step in test.split(" && "):
        step = step.replace(".venv/bin/pip ", ".venv/bin/python -m pip ")
        assert step in ci, f".ci/run does not run the README's step {step!r}"
