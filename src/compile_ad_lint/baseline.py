"""Fingerprints that survive moved lines, and baselines built on them (``--write-baseline``/``--baseline``).

A fingerprint hashes the rule, the file and the flagged source text (whitespace collapsed), plus
the finding's rank among identical (rule, file, text) ones; never a line number. Adding lines above
a finding, or editing other lines of the file, keeps it; editing the flagged text itself makes it
a new finding. SARIF's ``partialFingerprints`` are this fingerprint with the path as displayed
(``output/sarif.py``); a baseline uses the path relative to the baseline file's folder, so it matches
from any working directory (run from that folder, both are the same value).

A baseline file is JSON: ``{"compile-ad-lint-baseline": 1, "findings": [{"code", "path",
"fingerprint", "line", "message"}, ...]}``; ``line`` and ``message`` are for people reading it.
Matching uses (code, path, fingerprint), each entry at most once.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath

from .core.findings import Finding
from .core.locations import Location
from .core.text import LINE_END
from .inputs import MAX_BASELINE_BYTES, InputError, read_regular

FORMAT_KEY = "compile-ad-lint-baseline"
FORMAT_VERSION = 1

#: The bytes of a displayed file (None when it cannot be read).
Reader = Callable[[str], "bytes | None"]


def _read_disk(display: str) -> bytes | None:
    try:
        return Path(display).read_bytes()
    except OSError:
        return None


class Fingerprints:
    """Line-independent fingerprints; identical (rule, file, source text) findings are numbered.

    ``path_key`` is how a file enters the hash (default: the displayed path, with ``/``);
    ``read`` gives a file's bytes (default: the disk; editors and stdin pass their buffers).
    Findings are numbered in the order they are asked for, so ask in report order.
    """

    def __init__(self, path_key: Callable[[str], str] | None = None, read: Reader | None = None) -> None:
        self._path_key = path_key or (lambda display: PurePath(display).as_posix())
        self._read = read or _read_disk
        self._lines: dict[str, list[str] | None] = {}
        self._seen: dict[str, int] = {}

    def of(self, finding: Finding) -> str:
        location = finding.location
        snippet = self._snippet(location)
        if snippet is None:  # the file cannot be read: the message, with its line numbers dropped
            snippet = "message:" + re.sub(r"\d+", "#", finding.message)
        base = "\0".join((finding.code, self._path_key(location.path), snippet))
        occurrence = self._seen.get(base, 0)
        self._seen[base] = occurrence + 1
        return hashlib.sha256(f"{base}\0{occurrence}".encode("utf-8", "surrogatepass")).hexdigest()[:32]

    def _snippet(self, location: Location) -> str | None:
        if location.cell is not None:  # the cell's own lines, not the JSON around them
            from .notebook import load

            notebook = load(location.path)
            cell = notebook.cell(location.cell) if notebook is not None else None
            if cell is None or not 1 <= location.line <= len(cell.lines):
                return None
            return " ".join(" ".join(cell.lines[location.line - 1 : max(location.line, location.end_line)]).split())
        if location.path not in self._lines:
            data = self._read(location.path)
            self._lines[location.path] = (
                LINE_END.split(data.decode("utf-8", errors="replace")) if data is not None else None
            )
        lines = self._lines[location.path]
        if lines is None or not 1 <= location.line <= len(lines):
            return None
        chosen = lines[location.line - 1 : max(location.line, location.end_line)]
        return " ".join(" ".join(chosen).split())


class BaselineError(Exception):
    """A baseline file that cannot be read or is not one; ``str()`` names the file."""


@dataclass(frozen=True)
class Entry:
    code: str
    path: str
    fingerprint: str


@dataclass(frozen=True)
class Filtered:
    """What applying a baseline left: the new findings, how many it matched, and its entries that
    match nothing any more (fixed, or their code changed)."""

    findings: tuple[Finding, ...]
    matched: int
    gone: tuple[Entry, ...]


def _relative_key(folder: Path) -> Callable[[str], str]:
    def key(display: str) -> str:
        try:
            absolute = Path(os.path.abspath(display)).resolve()
        except (OSError, RuntimeError):
            absolute = Path(os.path.abspath(display))
        try:
            return Path(os.path.relpath(absolute, folder)).as_posix()
        except ValueError:  # another drive
            return absolute.as_posix()

    return key


def _entries(findings: Iterable[Finding], folder: Path, read: Reader | None) -> list[tuple[Entry, Finding]]:
    key = _relative_key(folder)
    fingerprints = Fingerprints(key, read)
    return [(Entry(f.code, key(f.location.path), fingerprints.of(f)), f) for f in findings]


def write_baseline(path: Path, findings: Sequence[Finding], read: Reader | None = None) -> int:
    """Record ``findings`` in ``path`` (written atomically); the number of entries."""
    folder = _folder(path)
    entries = _entries(findings, folder, read)
    document = {
        FORMAT_KEY: FORMAT_VERSION,
        "findings": [
            {
                "code": e.code,
                "path": e.path,
                "fingerprint": e.fingerprint,
                "line": f.location.line,
                "message": f.message,
            }
            for e, f in sorted(
                entries, key=lambda pair: (pair[0].path, pair[1].location.line, pair[0].code, pair[0].fingerprint)
            )
        ],
    }
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    temporary = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise BaselineError(f"{path}: cannot write: {error.strerror or error}") from error
    return len(entries)


def _folder(path: Path) -> Path:
    try:
        return Path(os.path.abspath(path)).resolve().parent
    except (OSError, RuntimeError):
        return Path(os.path.abspath(path)).parent


@dataclass(frozen=True)
class Baseline:
    path: Path
    entries: tuple[Entry, ...]

    def file_of(self, entry: Entry) -> Path:
        """The file an entry names (its path is relative to the baseline's folder)."""
        return _folder(self.path) / entry.path

    def filter(self, findings: Sequence[Finding], read: Reader | None = None) -> Filtered:
        """``findings`` minus those the baseline records (each entry matches one finding)."""
        left = Counter(self.entries)
        kept = []
        matched = 0
        for entry, finding in _entries(findings, _folder(self.path), read):
            if left[entry] > 0:
                left[entry] -= 1
                matched += 1
            else:
                kept.append(finding)
        gone = []
        for entry in self.entries:
            if left[entry] > 0:
                left[entry] -= 1
                gone.append(entry)
        return Filtered(tuple(kept), matched, tuple(gone))


def load_baseline(path: Path) -> Baseline:
    try:
        document = json.loads(read_regular(path, MAX_BASELINE_BYTES).decode("utf-8"))
    except InputError as error:
        raise BaselineError(f"{path}: cannot read the baseline: {error}") from error
    except OSError as error:
        raise BaselineError(f"{path}: cannot read the baseline: {error.strerror or error}") from error
    except (UnicodeDecodeError, ValueError) as error:
        raise BaselineError(f"{path}: not a compile-ad-lint baseline (invalid JSON: {error})") from error
    except (RecursionError, MemoryError):
        raise BaselineError(f"{path}: not a compile-ad-lint baseline (invalid JSON: nested too deeply)") from None
    if (
        not isinstance(document, dict)
        or document.get(FORMAT_KEY) != FORMAT_VERSION
        or not isinstance(document.get("findings"), list)
    ):
        raise BaselineError(f"{path}: not a compile-ad-lint baseline (write one with --write-baseline)")
    entries = []
    for number, item in enumerate(document["findings"], start=1):
        if not isinstance(item, dict) or not all(
            isinstance(item.get(key), str) for key in ("code", "path", "fingerprint")
        ):
            raise BaselineError(f"{path}: entry {number} needs string code, path and fingerprint")
        entries.append(Entry(item["code"], item["path"], item["fingerprint"]))
    return Baseline(Path(path), tuple(entries))


__all__ = ["Baseline", "BaselineError", "Entry", "Filtered", "Fingerprints", "load_baseline", "write_baseline"]
