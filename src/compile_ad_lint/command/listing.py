"""``check --show-files`` and ``check --show-settings``: what a check would read, and with which
settings, without analyzing anything (Ruff's flags of the same names)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from ..config import find_pyproject, settings_text
from ..core.settings import Config
from ..project import discover


def show_files(paths: Sequence[str], config: Config) -> int:
    """Print the files a check of ``paths`` reads, one per line as reports show them; exit 0 (2
    when a named path is no file, which the check would report as CAL900)."""
    files, problems = discover(list(paths) or ["."], config)
    for source_file in files:
        print(source_file.display)
    for problem in problems:
        print(f"compile-ad-lint: warning: {problem.display}: {problem.reason}", file=sys.stderr)
    return 2 if problems else 0


def show_settings(start: str, config: Config, config_file: str | None) -> int:
    """Print the settings that apply to ``start`` as the TOML table that would give them."""
    pyproject = Path(config_file) if config_file else find_pyproject(Path(start))
    print(f"# Settings for {start}")
    if pyproject is None:
        print("# No pyproject.toml with [tool.compile-ad-lint] applies: the defaults, with the command line's options")
    else:
        print(
            f"# From {pyproject.resolve()} (project root {pyproject.resolve().parent}), with the command line's options"
        )
    print(settings_text(config), end="")
    return 0
