"""Discovery and module resolution: which files to check, and which file an import names.

Modules are identified by path, not by dotted name, because one project can hold several scripts
that each import a sibling ``model.py``; an import is resolved from the importing file outward
(its own directory, its package root, then the project roots), the way ``python train.py`` would.
The index that serves module views on demand during an analysis (so that only the modules a
question reaches are ever read and parsed) is the interpreter's: ``linking/index.py``.
"""

from __future__ import annotations

import os
import re
import stat
import string
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .config import find_pyproject
from .core.paths import real_path
from .core.settings import Config
from .gitignore import GitIgnore
from .layout import PackageLayout

#: What ``\w`` matches in a bytes pattern.
WORD_BYTES = frozenset((string.ascii_letters + string.digits + "_").encode())


@dataclass(frozen=True)
class SourceFile:
    #: The path as the user should see it (relative paths stay relative to the working directory).
    display: str
    #: The resolved absolute path, used as the module's identity.
    path: Path


@dataclass(frozen=True)
class DiscoveryProblem:
    display: str
    reason: str


def discover(
    paths: Sequence[str], config: Config, virtual: Collection[Path] = ()
) -> tuple[list[SourceFile], list[DiscoveryProblem]]:
    """Python files and notebooks under ``paths`` (explicit files are taken unless ``force-exclude``
    excludes them), minus excluded ones and, in a git work tree, what ``.gitignore`` ignores
    (unless ``respect-gitignore = false``).

    ``virtual`` holds resolved paths whose contents the caller supplies (stdin, an unsaved editor
    buffer): such a path is taken even when no file exists there yet.
    """
    files: dict[Path, SourceFile] = {}
    problems: list[DiscoveryProblem] = []
    for given in paths:
        root = Path(given)
        if not root.exists() and not root.is_symlink():
            standing_for = real_path(root)
            if standing_for in virtual:
                files.setdefault(standing_for, SourceFile(given, standing_for))
            else:
                problems.append(DiscoveryProblem(given, "path does not exist"))
            continue
        if not root.is_dir():
            if not (config.force_exclude and config.excludes_file(root)):
                _add(files, problems, root)
            continue
        excluded = config.exclusion(root)  # globs match relative to the project root, whatever the spelling
        ignored = GitIgnore().ignored if config.respect_gitignore else None
        for directory, subdirs, names in os.walk(
            root,
            followlinks=False,
            onerror=lambda e: problems.append(
                DiscoveryProblem(str(e.filename), f"cannot list directory: {e.strerror}")
            ),
        ):
            base = Path(directory)
            folder = Path(os.path.abspath(directory))
            subdirs[:] = sorted(
                d for d in subdirs if not excluded(base, d) and not (ignored and ignored(folder, d, True))
            )
            real_folder: str | None = None
            for name in sorted(names):
                if (
                    not name.endswith(SOURCE_SUFFIXES)
                    or excluded(base, name)
                    or (ignored and ignored(folder, name, False))
                ):
                    continue
                candidate = base / name
                try:
                    mode = os.lstat(os.path.join(directory, name)).st_mode
                except OSError:
                    mode = None
                if mode is None or stat.S_ISLNK(mode):
                    if not candidate.is_dir():
                        _add(files, problems, candidate)
                    continue
                if stat.S_ISDIR(mode):
                    continue
                # Not a link: the file's resolved path is its folder's, resolved once per folder
                # (resolving each file's path again took most of a warm check's discovery).
                if real_folder is None:
                    real_folder = os.path.realpath(directory)
                _add(files, problems, candidate, Path(os.path.join(real_folder, name)), mode)
    return sorted(files.values(), key=lambda f: f.display), problems


#: What discovery takes from a directory: Python files and Jupyter notebooks.
SOURCE_SUFFIXES = (".py", ".ipynb")


def _add(
    files: dict[Path, SourceFile],
    problems: list[DiscoveryProblem],
    path: Path,
    resolved: Path | None = None,
    mode: int | None = None,
) -> None:
    """Take ``path``; ``resolved`` and ``mode``: its resolved path and ``lstat`` mode when known
    (not a link), else they are asked of the file system."""
    if resolved is None or mode is None:
        try:
            resolved = path.resolve(strict=True)
            mode = resolved.stat().st_mode
        except (OSError, RuntimeError) as error:
            problems.append(DiscoveryProblem(str(path), f"cannot resolve path: {error}"))
            return
    regular = stat.S_ISREG(mode)
    if not regular:  # a named pipe would block the read forever; sockets and devices cannot be read
        problems.append(DiscoveryProblem(str(path), "not a regular file"))
        return
    files.setdefault(resolved, SourceFile(str(path), resolved))


PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def project_root(path: Path, workspace: Sequence[Path] = ()) -> tuple[Path | None, Path | None]:
    """(folder to analyze for ``path``, the pyproject.toml holding our config if any): the one
    answer the CLI, flake8 and the language server share, so that they analyze the same project.

    In order: the folder of the nearest pyproject.toml with our section; the innermost of the
    ``workspace`` folders (an editor's, resolved) holding ``path``; the nearest folder with a project
    marker; the top-level package around ``path``. The folder is None for a loose script outside any
    project, workspace or package: analyze it alone.
    """
    pyproject = find_pyproject(path)
    if pyproject is not None:
        return pyproject.parent, pyproject
    holding = [folder for folder in workspace if path.is_relative_to(folder)]
    if holding:
        return max(holding, key=lambda folder: len(folder.parts)), None
    folder = path if path.is_dir() else path.parent
    for directory in [folder, *folder.parents]:
        if any((directory / marker).exists() for marker in PROJECT_MARKERS):
            return directory, None
    package_top = module_identity(folder / "__init__.py" if path.is_dir() else path)[2]
    if package_top != folder:  # inside a package: analyze the top-level package
        top_package = folder
        while top_package.parent != package_top:
            top_package = top_package.parent
        return top_package, None
    return None, None


def default_root(paths: Sequence[str]) -> Path:
    """Where a run on ``paths`` keeps its cache: the first path's project root, else its folder."""
    first = Path(paths[0]) if paths else Path(".")
    try:
        root = project_root(first.resolve())[0]
    except (OSError, RuntimeError):
        root = None
    return root or (first if first.is_dir() else first.parent)


def display_path(path: Path) -> str:
    """How to show a file that the user did not name (reached through an import): relative to the
    working directory. Kept per directory: each check of the language server shows the ~160 files
    the edited trainer reaches again (``relpath`` makes both paths absolute and splits them)."""
    return _relative_to(str(path), os.getcwd())


@lru_cache(maxsize=1 << 16)
def _relative_to(path: str, directory: str) -> str:
    try:
        return os.path.relpath(path, directory)
    except ValueError:  # another drive on Windows
        return path


def module_identity(path: Path, layout: PackageLayout | None = None) -> tuple[str, bool, Path]:
    """(dotted module name, is package, directory that must be on sys.path to import it), asked
    of ``layout`` (one check's) or of the file system now (``layout.PackageLayout``)."""
    identity = (layout or PackageLayout()).identity(path)
    return identity.module, identity.is_package, identity.root


def import_roots(files: Collection[SourceFile], layout: PackageLayout | None = None) -> list[Path]:
    """The folders an analysis of ``files`` resolves absolute imports in (after the importing
    file's own package root): each checked file's package root, then each one's project's root and
    ``src/`` folder (a src layout), where an installed project's packages are found whether or not
    they are checked: ``check examples/train.py`` in a src-layout repository (diffusers) imports the
    package from ``src/`` as ``check .`` does, and finds what ``check .`` finds in that file."""
    layout = layout or PackageLayout()
    package_roots = sorted({layout.identity(f.path).root for f in files})
    projects = sorted({folder for root in package_roots if (folder := project_root(root)[0]) is not None})
    layouts = [folder / "src" for folder in projects if _is_source_layout(folder / "src")]
    return list(dict.fromkeys([*package_roots, *projects, *layouts]))


def _is_source_layout(folder: Path) -> bool:
    """A ``src/`` folder holding packages, not itself one."""
    return folder.is_dir() and not (folder / "__init__.py").exists()


def read_source(path: Path) -> bytes:
    """A file's source; for a notebook, the module its code cells make (``notebook.module_source``).

    A notebook that is not valid JSON raises ``NotebookError``, an ``OSError`` like any unreadable file.
    """
    with open(path, "rb") as handle:
        data = handle.read()
    if path.suffix.lower() == ".ipynb":
        from .notebook import module_source

        return module_source(path, data)
    return data


def matches_starting(
    pattern: re.Pattern[bytes], source: bytes, where: Callable[[bytes, int], bool]
) -> Iterator[re.Match[bytes]]:
    """The matches of ``pattern`` (searched one after another, as ``finditer`` does) whose start
    passes ``where``: what the pattern with that condition in front finds. A pattern that begins
    with its literal text gets the regex engine's literal-prefix scan; one that begins with an
    anchor or ``\\b`` made the engine try every position of the text (docs/performance.md,
    "discovery"). A rejected match is searched again from its next position: the text it spans may
    hold one that starts where it should."""
    position = 0
    while (match := pattern.search(source, position)) is not None:
        start = match.start()
        if where(source, start):
            yield match
            position = match.end()
        else:
            position = start + 1


def at_word_boundary(source: bytes, position: int) -> bool:
    """Where ``\\b`` matches in a bytes pattern: a word byte on one side of ``position`` only."""
    before = position > 0 and source[position - 1] in WORD_BYTES
    after = position < len(source) and source[position] in WORD_BYTES
    return before != after
