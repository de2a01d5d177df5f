"""``.gitignore`` matching for discovery, as git does it (Ruff skips ignored files by default too).

Inside a git work tree (a folder with ``.git`` above the walked folder), a folder's entries are
matched against the ``.gitignore`` of every folder from the work tree's top down to it, the deepest
file first, then ``.git/info/exclude``; within a file the last matching pattern decides, and ``!``
re-includes. Outside a work tree ``.gitignore`` files mean nothing (git's behaviour, and Ruff's).
The global excludes file (``core.excludesFile``) is not read: it belongs to one user's machine, and
a check must find the same files on every machine.

The pattern grammar (``gitignore(5)``): blank lines and ``#`` comments; ``\\`` escapes a leading
``#`` or ``!`` and a trailing space; a trailing ``/`` matches folders only; a pattern with a ``/``
at its start or in its middle is anchored to the ``.gitignore``'s folder, one without matches a
name at any depth; ``*``, ``?`` and ``[...]`` never match ``/``; ``**/`` leading, ``/**/`` inside and
``/**`` trailing span folders. A folder that is ignored is pruned (git cannot re-include a file in
an ignored folder either).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

#: How many bytes of one ignore file are read: a generated one is a few hundred KB at most.
MAX_IGNORE_FILE_BYTES = 1_000_000


@dataclass(frozen=True)
class Pattern:
    regex: re.Pattern[str]
    negated: bool
    directory_only: bool
    #: Matched against the path relative to the ignore file's folder (else against the name).
    anchored: bool


def parse_line(line: str) -> Pattern | None:
    """One line of an ignore file as a pattern; None for blank lines and comments."""
    line = line.rstrip("\r\n")
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated or line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    stripped = line.rstrip(" ")  # trailing spaces are ignored unless escaped
    if stripped.endswith("\\") and len(line) > len(stripped):
        stripped += " "
    line = stripped
    directory_only = line.endswith("/") and not line.endswith("\\/")
    line = line.rstrip("/") if directory_only else line
    if not line:
        return None
    anchored = "/" in line
    line = line.removeprefix("/")
    try:
        regex = re.compile(_translate(line) + r"\Z", re.DOTALL)
    except re.error:
        return None  # git ignores a pattern it cannot read (an unclosed [)
    return Pattern(regex, negated, directory_only, anchored)


def _translate(pattern: str) -> str:
    """The regular expression of a pattern (its leading ``/`` removed): ``**`` segments span folders."""
    parts = pattern.split("/")
    out: list[str] = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            if last:
                out.append(".*")  # "a/**": everything inside a
            elif index == 0:
                out.append("(?:.*/)?")  # "**/a": a at any depth
            else:
                out.append("(?:.*/)?")  # "a/**/b": zero or more folders between
            continue
        out.append(_segment(part) + ("" if last else "/"))
    return "".join(out)


def _segment(part: str) -> str:
    """One path segment: ``*`` and ``?`` never match ``/``; ``[...]`` is a character class."""
    out: list[str] = []
    i = 0
    while i < len(part):
        char = part[i]
        if char == "\\" and i + 1 < len(part):
            out.append(re.escape(part[i + 1]))
            i += 2
            continue
        if char == "*":
            while i + 1 < len(part) and part[i + 1] == "*":
                i += 1  # "a**b" is "a*b"
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = part.find("]", i + 2 if part[i + 1 : i + 2] in ("!", "^", "]") else i + 1)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = part[i + 1 : end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


@dataclass(frozen=True)
class IgnoreFile:
    """The patterns of one ignore file, matched relative to ``folder``."""

    folder: Path
    patterns: tuple[Pattern, ...]

    @cached_property
    def prefix(self) -> str:
        """``folder`` as the start of the paths below it (``/`` separated, ending in ``/``)."""
        return self.folder.as_posix().rstrip("/") + "/"

    def decide(self, relative: str, is_dir: bool) -> bool | None:
        """True (ignored), False (re-included) by the last pattern matching ``relative`` (a
        ``/``-separated path below ``folder``), or None when no pattern matches."""
        name = relative.rsplit("/", 1)[-1]
        for pattern in reversed(self.patterns):
            if pattern.directory_only and not is_dir:
                continue
            if pattern.regex.match(relative if pattern.anchored else name):
                return not pattern.negated
        return None


def read_ignore_file(path: Path, folder: Path) -> IgnoreFile | None:
    """The ignore file at ``path`` (its patterns relative to ``folder``); None if absent or unreadable."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_IGNORE_FILE_BYTES)
    except OSError:
        return None
    patterns = tuple(p for p in map(parse_line, data.decode("utf-8", "replace").splitlines()) if p is not None)
    return IgnoreFile(folder, patterns) if patterns else None


class GitIgnore:
    """Which entries of the folders a walk visits git ignores (``ignored``); one per walk."""

    def __init__(self) -> None:
        #: Folder -> (its work tree's top, the ignore files that apply in it, deepest first).
        self._stacks: dict[Path, tuple[IgnoreFile, ...]] = {}
        self._tops: dict[Path, Path | None] = {}

    def ignored(self, folder: Path, name: str, is_dir: bool) -> bool:
        """Whether git ignores entry ``name`` of ``folder`` (an absolute, resolved folder)."""
        stack = self._stack(folder)
        if not stack:
            return False
        below = f"{folder.as_posix().rstrip('/')}/{name}"
        for ignore_file in stack:
            relative = below[len(ignore_file.prefix) :]
            decided = ignore_file.decide(relative, is_dir)
            if decided is not None:
                return decided
        return False

    def _stack(self, folder: Path) -> tuple[IgnoreFile, ...]:
        found = self._stacks.get(folder)
        if found is not None:
            return found
        if os.path.lexists(folder / ".git"):  # the top of a work tree (a submodule's too)
            top: Path | None = folder
            above: tuple[IgnoreFile, ...] = ()
            exclude = read_ignore_file(folder / ".git" / "info" / "exclude", folder)
            base = (exclude,) if exclude is not None else ()
        elif folder.parent == folder:
            top, above, base = None, (), ()
        else:
            parent_stack = self._stack(folder.parent)
            top = self._tops.get(folder.parent)
            above, base = parent_stack, ()
        self._tops[folder] = top
        own = read_ignore_file(folder / ".gitignore", folder) if top is not None else None
        stack = ((own,) if own is not None else ()) + above + base
        self._stacks[folder] = stack
        return stack
