"""The result cache's keys and a whole check's record (``CheckRecord``): what a warm check reads,
without the engine's event types (a root's own result is ``root_results``)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..cache import build_digest
from ..core.findings import Finding
from ..core.settings import Config
from ..layout import LayoutFacts
from ..project import SourceFile


def derived_key(key: str) -> str:
    """Where the result of a root under ``key`` is kept when it read derived contents (``--fix``'s)."""
    return hashlib.sha256(f"derived\0{key}".encode()).hexdigest()


def reads_key(key: str) -> str:
    """The key of what the result stored under ``key`` read (``ResultReads``)."""
    return hashlib.sha256(f"reads\0{key}".encode()).hexdigest()


#: What a check served from its record leaves undecoded when its caller shows findings only as
#: lines (flake8): each finding's typed evidence, whose classes are the rules' (a third of a warm
#: flake8 run of one file went to importing them). ``Finding.facts`` holds its rendering.
WITHOUT_EVIDENCE = frozenset({(Finding, "evidence")})


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
    return sorted_groups(grouped)


def sorted_groups(grouped: dict[str, set[str]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Entries grouped by folder as a stable record: folders and their entries sorted."""
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


def anchored_key(scope: str) -> str:
    """The key of which of a check's files can hold an anchor, by digest (``Run.entry_points``)."""
    return hashlib.sha256(f"anchored\0{scope}".encode()).hexdigest()
