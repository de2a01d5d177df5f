"""A memoized function walk (``MemoEntry``) and the versions of the heap cells it read (``Versions``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..arguments import Values
from ..frames import PendingCall
from .cells import Cell
from .walks import WalkSummary


@dataclass(frozen=True, slots=True, eq=False)  # compared by identity: one walk's
class SharedVersions:
    """The versions a replayed summary's outcome depends on: its own, with those of the calls it
    ran, shared rather than merged (merging them at every level of a replayed call tree took a
    quarter of an edit of pytorch-image-models' ``train.py``)."""

    own: dict[Cell, int]
    calls: tuple[Versions, ...]


#: The heap cells a memoized walk depends on, with their versions then: a walk's own (its
#: callees' merged in), or, for a replayed summary, ``SharedVersions``.
Versions = dict[Cell, int] | SharedVersions


@dataclass(frozen=True, slots=True, eq=False)  # compared by identity: one walk's
class MemoEntry:
    """A memoized walk (``EngineState._memo``)."""

    returns: Values
    #: The compiled calls left pending.
    pending: tuple[PendingCall, ...]
    #: The heap cells it read, with their versions then: reused while each keeps its version.
    reads: Versions
    #: Its summary (with a walk memory).
    summary: WalkSummary | None
    #: Whether the summary may be kept across analyses: its outcome does not depend on the call
    #: stack above it.
    storable: bool
    #: Whether the walk asked for the callers of the entry it was walked from (an anchor that
    #: depends on a parameter): reused from another entry, it asks for that entry's callers too.
    requests: bool = False


def each_version(reads: Versions) -> Iterable[tuple[Cell, int]]:
    """Every (cell, version) ``reads`` holds, each shared part once (a walk's own: its items)."""
    return reads.items() if isinstance(reads, dict) else _each_shared_version(reads)


def _each_shared_version(reads: SharedVersions) -> Iterator[tuple[Cell, int]]:
    seen: set[int] = set()
    pending: list[Versions] = [reads]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            yield from node.items()
        elif id(node) not in seen:
            seen.add(id(node))
            pending.append(node.own)
            pending.extend(node.calls)
