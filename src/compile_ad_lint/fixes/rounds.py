"""One round of ``check --fix`` / ``--diff``: carry plans out together, or replay the round from the cache.

A round applies the selected plans in order, each all or none (``Changes.add``: a plan that
overlaps an earlier one waits for the next round), and renders every file they touched in one
LibCST pass, so plans that share an added import or a ``with`` compose into one edit. What comes
out is a function of the plans, in order, and of the contents of the files building them read:
the cache keeps it as the plans taken and, per file, line hunks from the bytes before to the bytes
after, with the digests of every file read. A later round over the same plans and contents (a
second ``--diff`` on an unchanged tree) replays the hunks without LibCST, and checks that the
bytes it makes have the digest the round recorded; anything else builds the round again.

Plans interact only through the files they read (``Changes`` composes and refuses per file), so a
round is kept per group of plans linked by the files their edits were built from: after one file is
edited, only its group is carried out again.
"""

from __future__ import annotations

import difflib
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass

from ..cache import SummaryCache, build_digest, codec, content_digest
from ..core.collector import fewer_collections
from ..core.plans import FixPlan
from .source import Sources, apply_edits, source_text


@dataclass(frozen=True)
class Hunk:
    """Lines ``start``..``end`` (0-based, end exclusive, of the bytes before) become ``lines``."""

    start: int
    end: int
    lines: bytes


@dataclass(frozen=True)
class RenderedFile:
    """A file the round rendered (unchanged bytes included: the round still counts it as edited)."""

    display: str
    before: str
    after: str
    hunks: tuple[Hunk, ...]
    #: The first plan (its index in the group) whose operations touched the file: files render in
    #: that order, which a round over several groups keeps.
    first: int


@dataclass(frozen=True)
class RoundRecord:
    """What a round did: the indices of the plans taken, the files rendered (in render order), and
    every file read building it with its content digest (None: unreadable)."""

    taken: tuple[int, ...]
    files: tuple[RenderedFile, ...]
    read: tuple[tuple[str, str | None], ...]


@dataclass(frozen=True)
class Round:
    """A round's outcome: the plans taken (indices) and each rendered file's bytes before and after."""

    taken: tuple[int, ...]
    rendered: dict[str, tuple[bytes, bytes]]


def apply_plans(plans: Sequence[FixPlan], sources: Sources, cache: SummaryCache | None) -> Round:
    """Carry ``plans`` out in order on ``sources`` (a plan that does not fit, or overlaps one taken
    before it, is skipped), from ``cache`` when the same plans met the same contents before."""
    if not plans:
        return Round((), {})
    with fewer_collections():
        return _applied(plans, sources, cache)


def _applied(plans: Sequence[FixPlan], sources: Sources, cache: SummaryCache | None) -> Round:
    groups = _groups(plans, sources)
    outcomes = [_apply_group([plans[i] for i in group], sources, cache) for group in groups]
    if len(groups) > 1 and not all(done.taken for done, _ in outcomes):
        # A group that took nothing renders nothing, where one pass over every plan would render
        # the files it touched too: that pass, then (the plans' edits came from these contents,
        # so every group takes one; this is for the round the contents do not explain).
        groups = [list(range(len(plans)))]
        outcomes = [_apply_group(plans, sources, cache)]
    taken: list[int] = []
    files: list[tuple[int, int, str, bytes, bytes]] = []
    for group, (done, first) in zip(groups, outcomes):
        taken += [group[i] for i in done.taken]
        files += [
            (group[first[display]], order, display, before, after)
            for order, (display, (before, after)) in enumerate(done.rendered.items())
        ]
    files.sort(key=lambda file: file[:2])
    return Round(tuple(sorted(taken)), {display: (before, after) for _, _, display, before, after in files})


def _groups(plans: Sequence[FixPlan], sources: Sources) -> list[list[int]]:
    """The plans' indices in groups linked by the files their cached edits were built from, in
    order; one group when some plan's edits are not cached."""
    from . import plan_reads

    reads = [plan_reads(plan, sources) for plan in plans]
    if any(read is None for read in reads):
        return [list(range(len(plans)))]
    group_of: dict[str, int] = {}
    parent = list(range(len(plans)))

    def top(index: int) -> int:
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    for index, read in enumerate(reads):
        for display in read or ():
            if display in group_of:
                parent[top(index)] = top(group_of[display])
            else:
                group_of[display] = index
    groups: dict[int, list[int]] = {}
    for index in range(len(plans)):
        groups.setdefault(top(index), []).append(index)
    return sorted(groups.values())


def _apply_group(
    plans: Sequence[FixPlan], sources: Sources, cache: SummaryCache | None
) -> tuple[Round, dict[str, int]]:
    """``apply_plans`` on one group, and the first plan to touch each file rendered."""
    key = _round_key(plans) if cache is not None else ""
    if cache is not None:
        stored = cache.load(key, RoundRecord)
        replayed = _replay(stored, sources) if stored is not None else None
        if replayed is not None:
            return replayed, {file.display: file.first for file in stored.files}
    single = _from_edits(plans, sources)
    if single is not None:
        done, read = single
        if cache is not None:
            files = tuple(
                RenderedFile(display, content_digest(before), content_digest(after), line_hunks(before, after), 0)
                for display, (before, after) in done.rendered.items()
            )
            cache.store(key, RoundRecord(done.taken, files, read))
        return done, dict.fromkeys(done.rendered, 0)
    from . import ops_for
    from .transform import Changes, PlanError

    sources.start_reading()
    changes = Changes(sources)
    taken = []
    first: dict[str, int] = {}
    for position, plan in enumerate(plans):
        try:
            changes.add(ops_for(plan, sources))
        except PlanError:
            continue  # overlaps a plan taken before it: the next round tries again
        finally:
            for display in changes.displays:
                first.setdefault(display, position)
        taken.append(position)
    rendered = (
        {display: (parsed.data, parsed.encode(text)) for display, (parsed, text) in changes.render().items()}
        if taken
        else {}
    )
    read = sources.read_since_start()
    if cache is not None and all(sources.fresh(display) for display, _ in read):
        files = tuple(
            RenderedFile(
                display, content_digest(before), content_digest(after), line_hunks(before, after), first[display]
            )
            for display, (before, after) in rendered.items()
        )
        cache.store(key, RoundRecord(tuple(taken), files, read))
    return Round(tuple(taken), rendered), first


def _from_edits(plans: Sequence[FixPlan], sources: Sources) -> tuple[Round, tuple[tuple[str, str | None], ...]] | None:
    """A round of one plan whose cached edits change the one file they were built from: that
    file's text with those edits, as carrying the plan out gives (its edits are the difference
    between the two), without LibCST. With what the round read; None otherwise."""
    from . import stored_plan

    if len(plans) != 1:
        return None
    stored = stored_plan(plans[0], sources)
    if stored is None or not stored.edits or len(stored.read) != 1:
        return None
    [(display, _)] = stored.read
    before = sources.data(display)
    if before is None or any(edit.path != display for edit in stored.edits):
        return None
    decoded = source_text(before)
    if decoded is None:
        return None
    text, encoding = decoded
    try:
        after = apply_edits(text, stored.edits).encode(encoding)
    except (UnicodeError, ValueError):
        return None
    return Round((0,), {display: (before, after)}), stored.read


def _round_key(plans: Sequence[FixPlan]) -> str:
    # Plans name files by display path, which is relative to the working directory.
    text = f"fix-round\0{build_digest()}\0{os.getcwd()}\0".encode() + codec.dumps(tuple(plans))
    return hashlib.sha256(text).hexdigest()


def _replay(record: RoundRecord, sources: Sources) -> Round | None:
    """The recorded round, when every file it read still has its content and is fresh; else None."""
    if not all(sources.digest(display) == digest and sources.fresh(display) for display, digest in record.read):
        return None
    rendered: dict[str, tuple[bytes, bytes]] = {}
    for file in record.files:
        before = sources.data(file.display)
        if before is None or content_digest(before) != file.before:
            return None
        after = apply_hunks(before, file.hunks)
        if after is None or content_digest(after) != file.after:
            return None
        rendered[file.display] = (before, after)
    return Round(record.taken, rendered)


def line_hunks(before: bytes, after: bytes) -> tuple[Hunk, ...]:
    """The runs of lines (``bytes.splitlines``, ends kept) that differ from ``before`` to ``after``."""
    if before == after:
        return ()
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return tuple(Hunk(i1, i2, b"".join(new[j1:j2])) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")


def apply_hunks(before: bytes, hunks: Sequence[Hunk]) -> bytes | None:
    """``before`` with ``hunks`` (in order, not overlapping) applied; None when they do not fit it."""
    old = before.splitlines(keepends=True)
    pieces, at = [], 0
    for hunk in hunks:
        if not at <= hunk.start <= hunk.end <= len(old):
            return None
        pieces += [*old[at : hunk.start], hunk.lines]
        at = hunk.end
    pieces += old[at:]
    return b"".join(pieces)
