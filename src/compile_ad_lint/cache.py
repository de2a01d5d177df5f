"""On-disk cache of module outlines and block summaries, keyed by content and tool version.

Entries are written to a temporary file and renamed into place, so concurrent runs sharing the cache
never see half-written entries; an entry that fails to load (truncated, corrupt, from another
version) is ignored and rebuilt.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import tempfile
from pathlib import Path

from . import __version__

CACHE_DIRECTORY = ".compile_ad_lint_cache"
_FORMAT = 2


def content_digest(source: bytes) -> str:
    """Identity of a file's content, for cache keys and dependency checks."""
    return hashlib.sha256(source).hexdigest()


def cache_key(source: bytes, module: str, is_package: bool) -> str:
    digest = hashlib.sha256()
    digest.update(f"{__version__}\0{_FORMAT}\0{module}\0{is_package}\0".encode("utf-8", "surrogateescape"))
    digest.update(source)
    return digest.hexdigest()


class SummaryCache:
    def __init__(self, root: Path) -> None:
        self.directory = root / CACHE_DIRECTORY

    def _entry(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.pickle"

    def load(self, key: str) -> object | None:
        try:
            with open(self._entry(key), "rb") as handle:
                summary = pickle.load(handle)
        except FileNotFoundError:
            return None
        except Exception:  # noqa: BLE001 - any unreadable entry is rebuilt
            return None
        return summary

    def store(self, key: str, summary: object) -> None:
        entry = self._entry(key)
        try:
            self._ensure_directory()
            entry.parent.mkdir(parents=True, exist_ok=True)
            descriptor, temporary = tempfile.mkstemp(dir=entry.parent, suffix=".tmp")
        except OSError:
            return  # a read-only tree still gets analyzed, just without a cache
        try:
            with os.fdopen(descriptor, "wb") as handle:
                pickle.dump(summary, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, entry)
        except (OSError, RecursionError, pickle.PicklingError):
            Path(temporary).unlink(missing_ok=True)

    def _ensure_directory(self) -> None:
        if not self.directory.is_dir():
            self.directory.mkdir(parents=True, exist_ok=True)
            (self.directory / ".gitignore").write_text("# Created by compile-ad-lint\n*\n", encoding="utf-8")

    def clear(self) -> bool:
        if not self.directory.is_dir():
            return False
        shutil.rmtree(self.directory)
        return True
