"""What analyzing one root found (``RootResult``) and what it read (``ResultReads``), as the result
cache keeps them: decoding them needs the engine's event types, which a warm check never loads."""

from __future__ import annotations

from dataclasses import dataclass

from ..cache import SummaryCache
from ..layout import LayoutFacts
from ..linking.events import Event
from .results import reads_key


@dataclass(frozen=True)
class RootResult:
    """What analyzing one anchor file found, and the files (with content digests) it depended on."""

    events: tuple[Event, ...]
    #: (defining file, qualified name) of the functions whose callers should be analyzed.
    caller_requests: frozenset[tuple[str, str]]
    dependencies: tuple[tuple[str, str], ...]
    #: Where imports looked for files and found none: (folder, entries that do not exist in it)
    #: (``ModuleIndex.absent``); the result is stale once one of the entries exists.
    absent: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: False when a recursion limit shaped the result: it holds for this run only.
    cacheable: bool = True
    #: Names (beyond the mentions) whose callers in this file were analyzed as entry points here:
    #: the file is not asked about them again.
    covered: frozenset[str] = frozenset()
    #: Which folders were packages and where links pointed (``layout``): stale once one changes.
    layout: LayoutFacts = LayoutFacts()


@dataclass(frozen=True)
class ResultReads:
    """What a stored ``RootResult`` read (its ``dependencies`` and ``absent``), stored beside it
    under its own key (``store_result``): a check finds a stale result from this small entry and
    never decodes the result itself. Decoding is most of a lookup, and the stale results are the
    large ones (the roots that reach an edited trainer): after an edit of the generated
    framework's trainer, a ``check .`` spent 1.9 s in the main process decoding the 28 results
    it then analyzed again (68 ms each), and the language server's first edit after an open
    decoded the trainer's for 0.1 s."""

    dependencies: tuple[tuple[str, str], ...]
    absent: tuple[tuple[str, tuple[str, ...]], ...] = ()
    layout: LayoutFacts = LayoutFacts()


def store_result(cache: SummaryCache, key: str, result: RootResult, *, to_disk: bool = True) -> None:
    """Keep ``result`` under ``key``, and what it read under ``reads_key(key)``. Either entry can
    be missing or older than the other (a run killed between the two writes, concurrent runs):
    the reads only ever rule a result out, and a result whose own reads are not the ones checked
    is checked again whole."""
    cache.store(key, result, to_disk=to_disk)
    cache.store(reads_key(key), ResultReads(result.dependencies, result.absent, result.layout), to_disk=to_disk)
