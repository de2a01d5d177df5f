"""``flake8`` with every plugin but compile-ad-lint's: what ``flake8 --select CAL`` costs before our
plugin does anything (flake8 runs pyflakes and pycodestyle on every file whatever ``--select``
says, and drops their reports afterwards).

Usage: ``python bench/flake8_without_cal.py [flake8 arguments]``, e.g. ``--select CAL .`` in a
project. The plugin is left out where flake8 discovers installed plugins; flake8's worker
processes are forked from this one and inherit the list.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

from flake8.main.cli import main
from flake8.plugins import finder

#: compile-ad-lint's entry point in ``flake8.extension`` (pyproject.toml).
OUR_ENTRY_POINT = "CAL"

_installed = finder._find_importlib_plugins


def _without_ours() -> Iterator[finder.Plugin]:
    for plugin in _installed():
        if not (plugin.entry_point.group == "flake8.extension" and plugin.entry_point.name == OUR_ENTRY_POINT):
            yield plugin


finder._find_importlib_plugins = _without_ours

if __name__ == "__main__":
    sys.exit(main())
