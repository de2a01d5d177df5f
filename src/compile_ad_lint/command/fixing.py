"""``check --fix``, ``--diff`` and ``--add-noqa`` as the command line runs them, and what they print
(Ruff's wording where it has one).

``--fix`` writes the fixed files and reports what remains; with ``--show-fixes`` it lists what it
fixed per file and code (Ruff's ``Fixed 2 findings:`` block). On stdin (``check --fix -``) it
writes nothing: the fixed source goes to stdout and the report of what remains to stderr, as Ruff
does for editors that pipe a buffer through it. ``--diff`` prints the changes and writes nothing.
``--add-noqa`` prints ``Added N noqa directives to M files.`` instead of a report.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..rules import RULES_BY_CODE
from .scope import Scope
from .usage import concise_report

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def count(number: int, noun: str, plural: str | None = None) -> str:
    return f"{number} {noun if number == 1 else (plural or noun + 's')}"


@dataclass
class Fixed:
    """What ``--fix`` left: the report of what remains and the lines the text report shows before
    its summary (``Fixed 2 findings in 1 file.`` and, with ``--show-fixes``, what per file)."""

    report: Any
    lines: tuple[str, ...] = ()


def hidden_note(outcome: Any, unsafe: bool) -> str:
    left = outcome.unsafe_left
    return (
        f" ({count(left, 'unsafe fix', 'unsafe fixes')} available with `--unsafe-fixes`)" if left and not unsafe else ""
    )


def fixed_lines(outcome: Any, written: int, show_fixes: bool) -> tuple[str, ...]:
    """``Fixed N findings in M files.``; with ``--show-fixes`` Ruff's enumeration instead::

    Fixed 2 findings in 1 file:
    - train.py:
        2 × CAL002 (backward-autocast-mismatch)
    """
    if not outcome.fixed:
        return ()
    lines = [f"Fixed {count(outcome.fixed, 'finding')} in {count(written, 'file')}{':' if show_fixes else '.'}"]
    if show_fixes:
        per_file: dict[str, Counter[str]] = {}
        for display, code in outcome.applied:
            per_file.setdefault(display, Counter())[code] += 1
        for display, codes in sorted(per_file.items()):
            lines.append(f"- {display}:")
            for code, number in sorted(codes.items()):
                rule = RULES_BY_CODE.get(code)
                lines.append(f"    {number} × {code}" + (f" ({rule.name})" if rule is not None else ""))
    return tuple(lines)


def run_fix(
    args: argparse.Namespace,
    scope: Scope,
    report: Any,
    reanalyze: Callable[[Mapping[Path, bytes]], Any],
    emit: Callable[[str, str | None], bool],
    root: Path,
    cache: Any = None,
) -> Fixed | int:
    """``--fix`` or ``--diff``: an exit status when the run ends here (``--diff``, stdin, an
    internal error), else what remains to report. ``cache`` (the check's ``SummaryCache``) keeps
    the fixes' edits and rounds; stdin's fixes are not kept (its content is no file's)."""
    from ..fixes.apply import fix_loop, unified_diff, write_changes

    stdin = scope.stdin is not None
    try:
        outcome = fix_loop(
            report,
            reanalyze,
            args.unsafe_fixes,
            buffers=scope.sources if stdin else None,
            cache=None if stdin else cache,
        )
    except Exception:
        print("compile-ad-lint: internal error while fixing, please report it:", file=sys.stderr)
        traceback.print_exc()
        return EXIT_ERROR
    hidden = hidden_note(outcome, args.unsafe_fixes)
    if args.diff:
        diff = unified_diff(outcome)
        emit(diff, args.output)
        if not args.quiet:
            print(
                f"compile-ad-lint: would fix {count(outcome.fixed, 'finding')} in {count(len(outcome.changed), 'file')}{hidden}",
                file=sys.stderr,
            )
        for display in outcome.stale:
            print(
                f"compile-ad-lint: warning: {display} changed since it was analyzed; its fixes are not shown",
                file=sys.stderr,
            )
        return EXIT_FINDINGS if diff and not args.exit_zero else EXIT_CLEAN
    if stdin:
        return _fixed_stdin(args, scope, outcome)
    stale = write_changes(outcome, dict(report.digests), root)
    for display in stale:
        print(
            f"compile-ad-lint: warning: {display} changed since it was analyzed; its fixes were not applied",
            file=sys.stderr,
        )
    for display, target in outcome.outside:
        print(
            f"compile-ad-lint: warning: {display} is {target}, outside the project root {root}: "
            "its fixes were not applied (a symlink is not written through out of the project)",
            file=sys.stderr,
        )
    kept = stale + [display for display, _ in outcome.outside]
    remaining = outcome.report if not kept else reanalyze({})
    written = sum(1 for display, _, _ in outcome.changed.values() if display not in kept)
    return Fixed(remaining, fixed_lines(outcome, written, args.show_fixes))


def _fixed_stdin(args: argparse.Namespace, scope: Scope, outcome: Any) -> int:
    """``check --fix -``: the fixed source on stdout (the input unchanged when nothing applied), the
    report of what remains on stderr; exit 1 when findings remain."""
    from ..output.text import TextOptions, render

    assert scope.stdin is not None
    shown, data = scope.stdin
    fixed = next((after for _, _, after in outcome.changed.values()), None)
    sys.stdout.buffer.write(fixed if fixed is not None else data)
    sys.stdout.flush()
    remaining = outcome.report
    if not args.quiet or remaining.findings:
        lines = fixed_lines(outcome, 1 if fixed is not None else 0, args.show_fixes)
        options = TextOptions(
            concise=concise_report(args), quiet=args.quiet, unsafe_fixes=args.unsafe_fixes, fixed=lines
        )
        stats = replace(remaining.stats, files=1)
        sys.stderr.write(render(replace(remaining, stats=stats), options))
    return EXIT_FINDINGS if remaining.findings and not args.exit_zero else EXIT_CLEAN


def run_add_noqa(report: Any, quiet: bool, root: Path) -> None:
    """``--add-noqa``: add the directives and say how many (Ruff: ``Added 2 noqa directives.``)."""
    from ..fixes.apply import add_noqa

    # An unused suppression is removed (its fix), not silenced with another one (Ruff's add-noqa
    # leaves RUF100 alone too).
    findings = [finding for finding in report.findings if finding.code != "CAL901"]
    outcome = add_noqa(findings, dict(report.digests), root)
    for display, line, reason in outcome.skipped:
        print(f"compile-ad-lint: warning: {display}:{line}: no noqa added ({reason})", file=sys.stderr)
    if not quiet:
        print(
            f"Added {count(outcome.added, 'noqa directive')} to {count(outcome.files, 'file')}.",
            file=sys.stderr,
        )
