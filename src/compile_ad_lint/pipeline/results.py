"""The result cache's records and keys: what analyzing one root found, what it read, a whole
check's findings, and the keys they are stored under."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..cache import SummaryCache, build_digest
from ..core.findings import Finding
from ..core.settings import Config
from ..layout import LayoutFacts
from ..linking.events import Event
from ..project import SourceFile


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


def derived_key(key: str) -> str:
    """Where the result of a root under ``key`` is kept when it read derived contents (``--fix``'s)."""
    return hashlib.sha256(f"derived\0{key}".encode()).hexdigest()


def store_result(cache: SummaryCache, key: str, result: RootResult, *, to_disk: bool = True) -> None:
    """Keep ``result`` under ``key``, and what it read under ``reads_key(key)``. Either entry can
    be missing or older than the other (a run killed between the two writes, concurrent runs):
    the reads only ever rule a result out, and a result whose own reads are not the ones checked
    is checked again whole."""
    cache.store(key, result, to_disk=to_disk)
    cache.store(reads_key(key), ResultReads(result.dependencies, result.absent, result.layout), to_disk=to_disk)


def reads_key(key: str) -> str:
    """The key of what the result stored under ``key`` read (``ResultReads``)."""
    return hashlib.sha256(f"reads\0{key}".encode()).hexdigest()


@dataclass(frozen=True)
class CheckRecord:
    """A whole check's findings, stored under the contents of every checked file: a run that finds
    them all unchanged (and the files outside the check it read, and no newly created import
    candidate) reports these without reading one result or summary."""

    findings: tuple[Finding, ...]
    analyzed: tuple[str, ...]
    read: tuple[tuple[str, str], ...]
    absent: tuple[tuple[str, tuple[str, ...]], ...]
    layout: LayoutFacts = LayoutFacts()


def by_folder(entries: Iterable[tuple[str, str]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Missing (folder, entry) pairs as each folder with its entries, sorted (a stable record)."""
    grouped: dict[str, set[str]] = {}
    for folder, entry in entries:
        grouped.setdefault(folder, set()).add(entry)
    return tuple((folder, tuple(sorted(names))) for folder, names in sorted(grouped.items()))


def scope_digest(config: Config, paths: Sequence[str], files: list[SourceFile], roots: Sequence[Path]) -> str:
    """What a check's results depend on besides contents: how paths are shown, which files exist
    and where imports are looked for (a ``src/`` folder created makes one more root)."""
    scope = [
        build_digest(),
        repr(config),
        os.getcwd(),
        *paths,
        *sorted(f"{f.display}\0{f.path}" for f in files),
        "\0roots",
        *map(str, roots),
    ]
    return hashlib.sha256("\0".join(scope).encode("utf-8", "surrogateescape")).hexdigest()


def result_key(scope: str, path: Path, mentions: frozenset[str]) -> str:
    """The key of the result of analyzing ``path`` with ``mentions`` in a check of ``scope``."""
    return hashlib.sha256(f"result\0{scope}\0{path}\0{sorted(mentions)}".encode("utf-8", "surrogateescape")).hexdigest()


def check_key(scope: str, checked_contents: str) -> str:
    """The key of a whole check's record (``CheckRecord``)."""
    text = f"check\0{scope}\0{checked_contents}"
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def called_names_key(scope: str) -> str:
    """The key of the called names of a check's files (``Run.callers``)."""
    return hashlib.sha256(f"called-names\0{scope}".encode()).hexdigest()
