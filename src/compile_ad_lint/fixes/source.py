"""The files fixes read and edit: their bytes (editor buffers first), read once.

Findings name files as displayed (relative to the working directory, or as the user named them);
``Sources`` resolves a display to the file, reads it once, and hands out its LibCST module
(``parsed.py``, imported only when a fix is built rather than read from the cache). ``fresh``
tells whether a file still has the content the analysis saw (``Report.digests``): fixes are never
built or applied on anything else.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from ..cache import SummaryCache, content_digest
from ..core.findings import Edit
from ..core.paths import real_path
from ..core.text import split_lines

if TYPE_CHECKING:
    from .parsed import ParsedModule

#: Files larger than this get no fixes: LibCST with positions takes seconds and a GB per MB of
#: source (docs/performance.md, "fixes"); the analysis itself uses ``ast``.
MAX_FIX_FILE_BYTES = 1_000_000


def source_text(data: bytes) -> tuple[str, str] | None:
    """Python source bytes decoded as the interpreter decodes them (a BOM, a coding cookie, else
    UTF-8), with that encoding; None when they cannot be."""
    try:
        encoding = tokenize.detect_encoding(io.BytesIO(data).readline)[0]
        return data.decode(encoding), encoding
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return None


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    """``text`` with ``edits`` (positions in ``text``, none overlapping) applied."""
    lines = split_lines(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, column: int) -> int:
        if line > len(lines):
            return len(text)
        return min(starts[line - 1] + column - 1, starts[line])

    pieces, at = [], 0
    for edit in sorted(edits, key=lambda e: (e.line, e.column, e.end_line, e.end_column)):
        start, end = offset(edit.line, edit.column), offset(edit.end_line, edit.end_column)
        if start < at:
            raise ValueError("overlapping edits")
        pieces += [text[at:start], edit.replacement]
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


@dataclass
class _File:
    path: Path
    data: bytes | None
    parsed: ParsedModule | None = None
    failed: bool = False

    @cached_property
    def digest(self) -> str | None:
        """The content digest, computed once: freshness, cached edits and parsed modules all key on it."""
        return content_digest(self.data) if self.data is not None else None


class Sources:
    """Files as fixes see them: ``overrides`` (by resolved path: editor buffers) first, then the disk.

    ``digests`` (resolved path string -> content digest, from ``Report.digests``) are the contents
    the analysis read; when given, a file whose content differs (or that the analysis did not read)
    is not ``fresh``, and fixes are neither built nor applied on it.
    """

    def __init__(
        self,
        overrides: Mapping[Path, bytes] | None = None,
        digests: Mapping[str, str] | None = None,
        cache: SummaryCache | None = None,
    ) -> None:
        self.overrides = dict(overrides or {})
        self.digests = dict(digests) if digests is not None else None
        #: Where resolved edits are kept (``resolve_fix``): building them parses files with LibCST,
        #: which costs more than the whole warm analysis.
        self.cache = cache
        self._files: dict[str, _File] = {}
        #: Displays read since ``start_reading`` (the files a plan's edits depend on).
        self._reading: set[str] = set()

    def start_reading(self) -> None:
        self._reading = set()

    def read_since_start(self) -> tuple[tuple[str, str | None], ...]:
        """The files read since ``start_reading``, each with its content digest (None: unreadable)."""
        return tuple(sorted((display, self.digest(display)) for display in self._reading))

    def digest(self, display: str) -> str | None:
        return self._file(display).digest

    def _file(self, display: str) -> _File:
        self._reading.add(display)
        found = self._files.get(display)
        if found is None:
            path = real_path(display)
            data = self.overrides.get(path)
            if data is None:
                try:
                    data = path.read_bytes() if path.is_file() else None
                except OSError:
                    data = None
            found = self._files[display] = _File(path, data)
        return found

    def path(self, display: str) -> Path:
        return self._file(display).path

    def data(self, display: str) -> bytes | None:
        return self._file(display).data

    def fresh(self, display: str) -> bool:
        """Whether the file holds what the analysis read (always, when no digests were given)."""
        file = self._file(display)
        if file.data is None:
            return False
        if self.digests is None:
            return True
        return self.digests.get(str(file.path)) == file.digest

    def parsed(self, display: str) -> ParsedModule | None:
        """The file's LibCST module; None for notebooks, unreadable, stale or unparsable files."""
        file = self._file(display)
        if file.parsed is not None or file.failed:
            return file.parsed
        if (
            file.data is None
            or file.digest is None
            or file.path.suffix.lower() == ".ipynb"
            or len(file.data) > MAX_FIX_FILE_BYTES
            or not self.fresh(display)
        ):
            file.failed = True
            return None
        from .parsed import parse

        file.parsed = parse(display, file.data, file.digest)
        file.failed = file.parsed is None
        return file.parsed
