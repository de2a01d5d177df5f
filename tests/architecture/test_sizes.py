"""No module of ``src/compile_ad_lint`` over ~800 lines: a module a newcomer can read has one job.

``SIZE_EXCEPTIONS`` holds the modules over the bound today (none); it
may only shrink: an entry back under the bound fails ``test_every_size_exception_is_still_needed``.
"""

from __future__ import annotations

from pathlib import Path

from .imports import Module, modules

MAX_LINES = 800

SIZE_EXCEPTIONS: frozenset[str] = frozenset()


def lines_of(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def over_the_bound(found: dict[str, Module]) -> dict[str, int]:
    return {name: lines_of(m.path) for name, m in found.items() if lines_of(m.path) > MAX_LINES}


def test_no_module_over_the_bound() -> None:
    over = {name: n for name, n in over_the_bound(modules()).items() if name not in SIZE_EXCEPTIONS}
    assert not over, f"modules over {MAX_LINES} lines (split them by job): {over}"


def test_every_size_exception_is_still_needed() -> None:
    stale = sorted(SIZE_EXCEPTIONS - set(over_the_bound(modules())))
    assert not stale, f"no longer over {MAX_LINES} lines (or gone), remove them: {stale}"


def test_the_bound_sees_a_long_module(tmp_path: Path) -> None:
    """A module one line over the bound is over it, one at the bound is not (a check that counted
    nothing would always pass)."""
    long, short = tmp_path / "long.py", tmp_path / "short.py"
    long.write_text("x = 1\n" * (MAX_LINES + 1), encoding="utf-8")
    short.write_text("x = 1\n" * MAX_LINES, encoding="utf-8")
    found = {"long": Module("long", long), "short": Module("short", short)}
    assert over_the_bound(found) == {"long": MAX_LINES + 1}
