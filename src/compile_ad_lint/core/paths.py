"""The one way to get from a path as shown (``Location.path``, a CLI argument, flake8's file name) to
the file it names.

Findings show paths as the user named them (relative to the working directory), and every front end
(the CLI, flake8, the language server, SARIF, fixes, confirm) needs the real file behind one: to
match it against an editor buffer, read it, or copy it for a run. They used to each resolve it their
own way, with small differences (lexical ``..`` first or symlinks first, a symlink loop raising or
not); one function keeps them agreeing on which file a finding is in.
"""

from __future__ import annotations

import os
from pathlib import Path


def real_path(path: str | os.PathLike[str]) -> Path:
    """The absolute path of the file ``path`` names, symlinks resolved the way ``open`` follows them
    (relative paths are relative to the working directory).

    A path that cannot be resolved (a symlink loop) is still made absolute: callers compare and
    look up with it, and a loop is reported where the file is read, not here.
    """
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):
        return Path(os.path.abspath(path))


def as_the_cli_names_it(path: Path) -> str:
    """``path`` as a user at the working directory names it on the command line: relative when
    inside it, ``.`` for the directory itself. Cached results are keyed by how paths are shown, so
    flake8 and the language server name a project this way to share the CLI's results."""
    try:
        relative = path.relative_to(Path.cwd().resolve())
    except (ValueError, OSError):
        return str(path)
    return str(relative) if relative.parts else "."


NOTEBOOK_SUFFIX = ".ipynb"


def is_notebook(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a Jupyter notebook (findings in one are in the module its cells make)."""
    return str(path).lower().endswith(NOTEBOOK_SUFFIX)


#: One ``Path`` object per file, process-wide (``interned``).
_INTERNED: dict[Path, Path] = {}


def interned(path: Path) -> Path:
    """The one ``Path`` object this process uses for ``path``. Paths are in every heap cell, memo
    key and value (``ClassVal``, ``FunctionVal``) the interpreter hashes and compares, and
    ``Path.__eq__`` is Python code: equal paths made by separate lookups, analyses or cache
    decodes cost a call per comparison (docs/performance.md, "paths"). With one object per file,
    tuples and dictionaries compare them by identity. The table grows with the files analyzed, not
    with the analyses."""
    return _INTERNED.setdefault(path, path)


def file_status(path: str | os.PathLike[str]) -> tuple[int, ...]:
    """What changes when a file is written: device, inode, size, modification and change times
    (``OSError`` when there is no file). What a long-lived process compares before reading again."""
    found = os.stat(path)
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)
