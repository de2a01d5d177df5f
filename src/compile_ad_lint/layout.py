"""What an analysis depends on besides file contents: which folders are packages, and where symlinks point.

A module's identity (its dotted name, whether it is a package, the folder its imports start from)
follows from the ``__init__.py`` files in the folders above it; an import found through a symlink
follows the link. Both can change without any analyzed file changing (``scripts/__init__.py``
created, ``helpers.py -> impl/a.py`` re-targeted), so a result records what it found
(``LayoutFacts``) and is used again only while every fact holds (``LayoutProbe``).

A ``PackageLayout`` answers identities for one check and is then dropped: a process that lives
across checks (the language server) sees a marker created between them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

#: The file that makes a folder a regular package.
PACKAGE_MARKER = "__init__.py"


@dataclass(frozen=True)
class ModuleIdentity:
    #: The dotted module name.
    module: str
    is_package: bool
    #: The folder that must be on ``sys.path`` to import it (a script's own folder).
    root: Path


class PackageLayout:
    """Which folders are packages, asked of the file system once per folder for one check.

    Kept per folder: asked per file, the walk up stat-ed each folder's ``__init__.py`` once per
    file below it (docs/performance.md, "discovery")."""

    def __init__(self) -> None:
        self._packages: dict[Path, tuple[tuple[str, ...], Path]] = {}
        self._markers: dict[Path, tuple[tuple[str, bool], ...]] = {}

    def identity(self, path: Path) -> ModuleIdentity:
        """``path``'s module identity. A notebook is never part of a package: its kernel starts in
        the notebook's folder, so that folder is where its imports are found."""
        if path.suffix.lower() == ".ipynb":
            return ModuleIdentity(path.stem, False, path.parent)
        is_package = path.name == PACKAGE_MARKER
        packages, directory = self._enclosing(path.parent)
        parts = packages if is_package else (*packages, path.stem)
        return ModuleIdentity(".".join(parts) or path.stem, is_package, directory)

    def markers(self, path: Path) -> Iterable[tuple[str, bool]]:
        """The folders whose ``__init__.py`` decided ``path``'s identity, each with whether it has
        one: the packages above it and the first folder that is not one."""
        known = self._markers.get(path)  # asked again for every file each analysis read
        if known is not None:
            return known
        if path.suffix.lower() == ".ipynb":
            return ()
        packages, top = self._enclosing(path.parent)
        folder = path.parent
        found = [(str(top), False)] if top.parent != top else []
        for _ in packages:
            found.append((str(folder), True))
            folder = folder.parent
        known = self._markers[path] = tuple(found)
        return known

    def _enclosing(self, directory: Path) -> tuple[tuple[str, ...], Path]:
        """The names of the packages ``directory`` is in, outermost first (itself last, when it is
        one), and the folder above the outermost."""
        known = self._packages.get(directory)
        if known is None:
            if directory.parent == directory or not (directory / PACKAGE_MARKER).is_file():
                known = ((), directory)
            else:
                outer, top = self._enclosing(directory.parent)
                known = ((*outer, directory.name), top)
            self._packages[directory] = known
        return known


@dataclass(frozen=True)
class LayoutFacts:
    """What a result found about the layout (besides the import candidates it found missing,
    which it records as ``absent``), sorted: a stable record."""

    #: (folder, whether it holds an ``__init__.py``) for the folders that decided the identities
    #: of the files it read.
    packages: tuple[tuple[str, bool], ...] = ()
    #: (path an import found, the file it resolved to) where a symlink made them differ.
    links: tuple[tuple[str, str], ...] = ()

    @staticmethod
    def of(packages: Iterable[tuple[str, bool]], links: Iterable[tuple[str, str]]) -> LayoutFacts:
        return LayoutFacts(tuple(sorted(set(packages))), tuple(sorted(set(links))))

    def union(self, other: LayoutFacts) -> LayoutFacts:
        return LayoutFacts.of((*self.packages, *other.packages), (*self.links, *other.links))


class LayoutProbe:
    """Checks ``LayoutFacts`` against the file system, asking it once per folder and link per run."""

    def __init__(self) -> None:
        self._markers: dict[str, bool] = {}
        self._targets: dict[str, str | None] = {}

    def holds(self, facts: LayoutFacts) -> bool:
        return all(self._has_marker(folder) == has for folder, has in facts.packages) and all(
            self._target(path) == target for path, target in facts.links
        )

    def _has_marker(self, folder: str) -> bool:
        known = self._markers.get(folder)
        if known is None:
            known = self._markers[folder] = os.path.isfile(os.path.join(folder, PACKAGE_MARKER))
        return known

    def _target(self, path: str) -> str | None:
        if path not in self._targets:
            self._targets[path] = resolved(path)
        return self._targets[path]


def resolved(path: str) -> str | None:
    """The file ``path`` names with every symlink followed, None when that fails (a loop)."""
    try:
        return str(Path(path).resolve(strict=True))
    except (OSError, RuntimeError):
        return None
