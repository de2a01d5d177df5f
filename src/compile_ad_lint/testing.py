"""Helpers that turn rule cases and fixture files into tests (expected codes are written inline).

A line expecting findings ends with ``# expect: CAL001`` (several codes: ``# expect: CAL001, CAL002``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from .api import Analyzer
from .config import Config
from .findings import Finding
from .rules.base import Case

EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>[A-Z]{3}[0-9]{3}(?:\s*,\s*[A-Z]{3}[0-9]{3})*)")


def expected_in(path: Path, display: str | None = None) -> set[tuple[str, int, str]]:
    """``(path, line, code)`` for every ``# expect:`` marker in ``path``."""
    shown = display or str(path)
    found: set[tuple[str, int, str]] = set()
    text = path.read_bytes().decode("utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            found.update((shown, number, code.strip()) for code in match.group("codes").split(","))
    return found


def reported(findings: Iterable[Finding]) -> set[tuple[str, int, str]]:
    return {(f.location.path, f.location.line, f.code) for f in findings}


def write_files(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Write ``{relative path: text or bytes}`` under ``root`` (text as UTF-8), creating folders."""
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return root


def write_case(case: Case, directory: Path, name: str = "case.py") -> Path:
    """Lay out a case (its main module plus any extra modules) in ``directory``."""
    write_files(directory, {name: case.code.lstrip("\n"), **dict(case.files)})
    return directory / name


def run_case(case: Case, directory: Path, config: Config | None = None) -> tuple[set, set]:
    """(expected, reported) for ``case`` analyzed as a project in ``directory``."""
    write_case(case, directory)
    report = Analyzer(config or Config(), use_cache=False, jobs=1).check([str(directory)])
    expected: set = set()
    for path in sorted(directory.rglob("*.py")):
        expected |= expected_in(path)
    return expected, reported(report.findings)
