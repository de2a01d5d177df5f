"""``check --fix`` / ``--diff``: apply the fixes, re-analyze, repeat, then write (or show) the result.

Each round resolves the findings' fixes against the contents of the previous round (in memory),
applies every selected fix that does not overlap another in one LibCST pass per file, and analyzes
the new contents again; fixes that overlapped get their turn in the next round, against the new
text. A finding whose fix was applied is not fixed again even if it is still reported (so a fix
that does not remove its finding cannot nest itself round after round). The rounds stop when no
fix applies; the last analysis is what remains.

Nothing is written before the end, and then only to files whose content on disk is still what the
first analysis read: a file changed meanwhile (an editor saved it) keeps its content and is named
in ``FixOutcome.stale``.
"""

from __future__ import annotations

import difflib
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..baseline import Fingerprints
from ..cache import content_digest
from ..core.findings import Edit, Finding
from ..core.paths import is_notebook, real_path
from ..core.plans import paths_of
from . import resolve
from .rounds import apply_plans
from .source import Sources, apply_edits, source_text

if TYPE_CHECKING:
    from ..cache import SummaryCache

#: Rounds at most (each re-analyzes the project); overlapping fixes rarely need more than two.
MAX_ROUNDS = 8


@dataclass
class FixOutcome:
    #: The analysis of the fixed contents (or of the disk, when a stale file kept its content).
    report: object
    #: resolved path -> (display, content the first analysis read, fixed content)
    changed: dict[Path, tuple[str, bytes, bytes]] = field(default_factory=dict)
    #: Fixes applied (a finding counts once).
    fixed: int = 0
    #: Findings left with a fix that needs ``--unsafe-fixes``.
    unsafe_left: int = 0
    #: Files not written because their content changed since the analysis (displayed paths).
    stale: list[str] = field(default_factory=list)
    #: (displayed path, code) of every fix applied, in order (``--show-fixes``).
    applied: list[tuple[str, str]] = field(default_factory=list)
    #: Files not written because they are outside the project root (reached through a symlink):
    #: (displayed path, the file it is).
    outside: list[tuple[str, Path]] = field(default_factory=list)


def fix_loop(  # type: ignore[no-untyped-def]
    report,
    analyze: Callable[[Mapping[Path, bytes]], object],
    unsafe: bool,
    buffers: Mapping[Path, bytes] | None = None,
    cache: SummaryCache | None = None,
) -> FixOutcome:
    """Apply fixes to ``report``'s findings; ``analyze(contents)`` re-analyzes with ``contents``
    (resolved path -> bytes) in place of the files on disk. ``buffers`` are contents the analysis
    read instead of the disk (stdin). ``cache`` keeps the fixes' edits and each round's outcome
    (``rounds.py``), so that fixing the same contents again needs no LibCST; with a cache, a round
    whose plans each edit one file of their own applies those edits without parsing the file again.
    The edits are built in this process: worker processes made the first ``--diff`` slower on the
    framework corpus (docs/performance.md)."""
    base = dict(buffers or {})
    contents: dict[Path, bytes] = {}
    original: dict[Path, tuple[str, bytes]] = {}
    applied_marks: set[str] = set()
    fixed = 0
    stale: set[str] = set()
    applied_list: list[tuple[str, str]] = []
    for round_number in range(MAX_ROUNDS):
        sources = Sources({**base, **contents}, dict(report.digests), cache=cache)
        if round_number == 0:  # files changed on disk since the analysis: their fixes are not built
            # (A notebook is never edited, and the analysis read the module its cells make, not the
            # file: it is not stale, its fixes are just not offered.)
            stale = {
                d
                for f in report.findings
                for fix in f.fixes
                if fix.plan is not None
                for d in paths_of(fix.plan)
                if not is_notebook(d) and not sources.fresh(d)
            }
        findings = resolve(report.findings, sources)
        marks = Fingerprints(read=sources.data)
        applied = 0
        #: Fixes that are text edits without a plan (CAL901's), applied after the plans' changes.
        textual: list[tuple[Finding, str]] = []
        #: Fixes with a plan, in report order (marks are unique in a report: none is taken twice).
        planned: list[tuple[Finding, str]] = []
        for finding in findings:
            mark = marks.of(finding)
            if not finding.fixable(unsafe) or mark in applied_marks:
                continue
            (planned if finding.fix.plan is not None else textual).append((finding, mark))  # type: ignore[union-attr]
        round_ = apply_plans([finding.fix.plan for finding, _ in planned], sources, cache)  # type: ignore[union-attr, misc]
        for position in round_.taken:
            finding, mark = planned[position]
            applied_marks.add(mark)
            applied_list.append((finding.location.path, finding.code))
            applied += 1
        rendered = round_.rendered
        for display, (before, after) in rendered.items():
            path = sources.path(display)
            original.setdefault(path, (display, before))
            contents[path] = after
        for display, group in _by_file(textual).items():
            # A file a plan changed this round gets its text edits in the next round, against its new text.
            if display in rendered or not sources.fresh(display):
                continue
            data = sources.data(display)
            done = _apply_text_fixes(data, [finding for finding, _ in group]) if data is not None else None
            if done is None:
                continue
            new, taken = done
            path = sources.path(display)
            original.setdefault(path, (display, data))  # type: ignore[arg-type]
            contents[path] = new
            for finding, mark in group[:taken]:
                applied_marks.add(mark)
                applied_list.append((finding.location.path, finding.code))
                applied += 1
        if not applied:
            break
        fixed += applied
        report = analyze(contents)
    outcome = FixOutcome(report, fixed=fixed, applied=applied_list)
    sources = Sources({**base, **contents}, dict(report.digests), cache=cache)
    outcome.unsafe_left = sum(
        1 for f in resolve(report.findings, sources) if f.fix is not None and f.fix.edits and not f.fix.safe
    )
    for path, (display, before) in original.items():
        if contents[path] != before:
            outcome.changed[path] = (display, before, contents[path])
    outcome.stale = sorted(stale)
    return outcome


def _by_file(textual: list[tuple[Finding, str]]) -> dict[str, list[tuple[Finding, str]]]:
    grouped: dict[str, list[tuple[Finding, str]]] = {}
    for finding, mark in textual:
        grouped.setdefault(finding.location.path, []).append((finding, mark))
    return grouped


def _apply_text_fixes(data: bytes, findings: Sequence[Finding]) -> tuple[bytes, int] | None:
    """``data`` with the text edits of ``findings``' fixes, in order, stopping before the first
    that overlaps an earlier one (it waits for the next round): the new bytes and how many applied;
    None when the file cannot be decoded."""
    decoded = source_text(data)
    if decoded is None:
        return None
    text, encoding = decoded
    taken: list[Edit] = []
    count = 0
    for finding in findings:
        edits = finding.fix.edits if finding.fix is not None else ()
        if any(_overlap(edit, other) for edit in edits for other in taken):
            break
        taken.extend(edits)
        count += 1
    return apply_edits(text, taken).encode(encoding), count


def _overlap(a: Edit, b: Edit) -> bool:
    return (
        a.path == b.path
        and (a.line, a.column) < (b.end_line, b.end_column)
        and (b.line, b.column)
        < (
            a.end_line,
            a.end_column,
        )
    )


def write_changes(outcome: FixOutcome, first_digests: Mapping[str, str], root: Path) -> list[str]:
    """Write the fixed files whose disk content is still what the analysis read; the displays of
    those skipped (changed since). A file outside ``root`` (the project's: a symlink in the
    project to a file elsewhere) is never written (``FixOutcome.outside``)."""
    stale = list(outcome.stale)
    for path, (display, before, after) in sorted(outcome.changed.items()):
        if not inside(path, root):
            outcome.outside.append((display, path))
            continue
        try:
            current = path.read_bytes()
        except OSError:
            stale.append(display)
            continue
        if current != before or first_digests.get(str(path), content_digest(before)) != content_digest(current):
            stale.append(display)
            continue
        _write_atomically(path, after)
    outcome.stale = sorted(set(stale))
    return outcome.stale


def inside(path: Path, root: Path) -> bool:
    """Whether the file ``path`` (symlinks followed) is inside the folder ``root``."""
    return real_path(path).is_relative_to(real_path(root))


def _write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path``'s content (the file itself, not a symlink to it), keeping its mode."""
    target = path.resolve()
    descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".fix", dir=target.parent)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, target.stat().st_mode & 0o7777)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _decode(data: bytes) -> str:
    decoded = source_text(data)
    return decoded[0] if decoded is not None else data.decode("utf-8", errors="replace")


def unified_diff(outcome: FixOutcome) -> str:
    """The changes as one unified diff (``--- path`` / ``+++ path`` per file)."""
    from ..core.text import split_lines

    chunks = []
    for _path, (display, before, after) in sorted(outcome.changed.items(), key=lambda item: item[1][0]):
        old, new = split_lines(_decode(before)), split_lines(_decode(after))
        for lines in (old, new):
            if lines and not lines[-1].endswith(("\n", "\r")):
                lines[-1] += "\n\\ No newline at end of file\n"
        chunks.append("".join(difflib.unified_diff(old, new, fromfile=display, tofile=display)))
    return "".join(chunks)


@dataclass
class NoqaOutcome:
    #: Lines that got a directive (or had their directive extended), and the files they are in.
    added: int = 0
    files: int = 0
    #: ``(display, line, reason)`` for the findings that got none.
    skipped: list[tuple[str, int, str]] = field(default_factory=list)


def add_noqa(findings: Sequence[Finding], digests: Mapping[str, str], root: Path) -> NoqaOutcome:
    """``--add-noqa``: a ``# noqa: CODE`` for every finding, on its line (extending a noqa comment
    already there). Files changed since the analysis, notebooks, and files outside ``root`` (the
    project's: reached through a symlink) are left alone."""
    from ..core.text import split_lines
    from .noqa import plan_noqa

    by_file: dict[str, dict[int, list[str]]] = {}
    skipped: list[tuple[str, int, str]] = []
    for finding in findings:
        location = finding.location
        if location.cell is not None or location.path.lower().endswith(".ipynb"):
            skipped.append((location.path, location.line, "notebooks are not edited"))
            continue
        by_file.setdefault(location.path, {}).setdefault(location.line, [])
        if finding.code not in by_file[location.path][location.line]:
            by_file[location.path][location.line].append(finding.code)
    added = files = 0
    for display, lines_codes in sorted(by_file.items()):
        path = real_path(display)
        if not inside(path, root):
            skipped += [(display, line, f"{path} is outside the project root {root}") for line in lines_codes]
            continue
        try:
            data = path.read_bytes()
        except OSError as error:
            skipped += [(display, line, f"cannot read: {error.strerror or error}") for line in lines_codes]
            continue
        if digests.get(str(path)) != content_digest(data):
            skipped += [(display, line, "the file changed since it was analyzed") for line in lines_codes]
            continue
        decoded = source_text(data)
        if decoded is None:
            skipped += [(display, line, "cannot decode the file") for line in lines_codes]
            continue
        text, encoding = decoded
        lines = split_lines(text)
        edits, refused = plan_noqa(lines, lines_codes)
        skipped += [(display, skip.line, skip.reason) for skip in refused]
        for edit in edits:
            full = lines[edit.line - 1]
            body = full.rstrip("\r\n")
            lines[edit.line - 1] = body[: edit.start] + edit.text + body[edit.end :] + full[len(body) :]
        changed = len(edits)
        if changed:
            _write_atomically(path, "".join(lines).encode(encoding))
            added += changed
            files += 1
    return NoqaOutcome(added, files, skipped)


def fix_preview(finding: Finding, read: Callable[[str], bytes | None]) -> list[str]:
    """``finding``'s fix as unified diff lines (one line of context), for ``--show-fixes``;
    ``read`` gives a displayed file's bytes."""
    from ..core.text import split_lines

    if finding.fix is None:
        return []
    by_path: dict[str, list[Edit]] = {}
    for edit in finding.fix.edits:
        by_path.setdefault(edit.path, []).append(edit)
    shown: list[str] = []
    for path, edits in by_path.items():
        data = read(path)
        if data is None:
            continue
        old = split_lines(_decode(data))
        new = split_lines(apply_edits(_decode(data), edits))
        diff = difflib.unified_diff(old, new, fromfile=path, tofile=path, n=1)
        shown += [line.rstrip("\r\n") for line in diff][2:]  # the hunks; the file is the finding's
    return shown
