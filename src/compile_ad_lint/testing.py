"""Helpers that turn rule cases and fixture files into tests (expected codes are written inline).

A line expecting findings ends with ``# expect: CAL001`` (several codes: ``# expect: CAL001, CAL002``).
A finding that only some torch versions give carries the versions as a specifier:
``# expect[<2.14]: CAL001`` and, on the same line, ``# expect[>=2.14]: CAL006``; such a marker
applies when the target's torch series satisfies it (``expected_in(..., series=...)``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from packaging.version import Version

from .api import Analyzer
from .core.findings import Finding
from .core.settings import Config
from .core.torch_versions import Series, parse_setting
from .rules.base import Case
from .target import resolve, with_target

EXPECT = re.compile(
    r"#\s*expect(?:\[(?P<versions>[^\]]+)\])?:\s*(?P<codes>[A-Z]{3}[0-9]{3}(?:\s*,\s*[A-Z]{3}[0-9]{3})*)"
)


def marker_applies(versions: str | None, series: Series) -> bool:
    """Whether a ``# expect[<versions>]:`` marker holds on ``series`` (no versions: on every one)."""
    if versions is None:
        return True
    return parse_setting(versions).contains(Version(f"{series}.0"), prereleases=True)


def expected_in(path: Path, display: str | None = None, series: Series | None = None) -> set[tuple[str, int, str]]:
    """``(path, line, code)`` for every ``# expect:`` marker in ``path`` that holds on ``series``
    (default: the installed torch's, as the analysis resolves it)."""
    shown = display or str(path)
    on = series if series is not None else _default_series()
    found: set[tuple[str, int, str]] = set()
    text = path.read_bytes().decode("utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), start=1):
        for match in EXPECT.finditer(line):
            if marker_applies(match.group("versions"), on):
                found.update((shown, number, code.strip()) for code in match.group("codes").split(","))
    return found


def _default_series() -> Series:
    series = resolve(None, "", None).series
    if len(series) != 1:
        raise ValueError(f"the default torch target admits several series ({series}); name one")
    return series[0]


def config_for(series: Series, config: Config | None = None) -> Config:
    """``config`` with its target torch set to exactly ``series``."""
    return with_target(config or Config(), setting=str(series), source="a test's target")


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


def run_case(
    case: Case, directory: Path, config: Config | None = None, series: Series | None = None
) -> tuple[set, set]:
    """(expected, reported) for ``case`` analyzed as a project in ``directory``, for torch ``series``
    (default: the installed torch's)."""
    write_case(case, directory)
    on = series if series is not None else _default_series()
    report = Analyzer(config_for(on, config), use_cache=False, jobs=1).check([str(directory)])
    expected: set = set()
    for path in sorted(directory.rglob("*.py")):
        expected |= expected_in(path, series=on)
    return expected, reported(report.findings)
