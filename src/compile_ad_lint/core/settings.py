"""The settings of a check as one value (``Config``), and what its code selections mean.

``config.py`` reads them from ``[tool.compile-ad-lint]`` in ``pyproject.toml``; the front ends add
their command-line options with ``Config.with_overrides``. Errors name the file and the key so a
user can fix them directly.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path, PurePath
from typing import Any

from .codes import CODES
from .torch_versions import TorchTarget

SECTION = "compile-ad-lint"
#: The project's repository: rule links (SARIF ``helpUri``, the editor's ``codeDescription``,
#: ``explain``) point into its ``docs/rules/`` unless ``rule-docs-url`` says where a copy is.
REPOSITORY_URL = "https://github.com/compile-ad-lint/compile-ad-lint"
DEFAULT_RULE_DOCS_URL = f"{REPOSITORY_URL}/blob/main/docs/rules/"
DEFAULT_EXCLUDES = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "__pycache__",
    "node_modules",
    "build",
    "dist",
    ".compile_ad_lint_cache",
    ".ipynb_checkpoints",  # Jupyter's autosaved copies of every notebook
    ".eggs",
    "*.egg-info",
)


class ConfigError(Exception):
    """A configuration problem; ``str()`` names the source and the key.

    ``reason`` is the message alone, for front ends that name the source their own way (a
    command-line flag such as ``--select``, a flake8 option).
    """

    def __init__(self, source: str, key: str | None, message: str) -> None:
        self.source, self.key, self.reason = source, key, message
        where = f"{source}: [tool.{SECTION}] {key}" if key else source
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class Config:
    select: frozenset[str] | None = None  # None: every rule
    #: Codes or prefixes selected on top of ``select`` (Ruff's ``extend-select``).
    extend_select: frozenset[str] = frozenset()
    ignore: frozenset[str] = frozenset()
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    #: Skip what ``.gitignore`` files (and ``.git/info/exclude``) ignore when walking folders.
    respect_gitignore: bool = True
    #: Apply ``exclude``/``extend-exclude`` to files named on the command line too (the pre-commit
    #: hook names every staged file).
    force_exclude: bool = False
    #: ``(glob, codes)`` pairs: codes or prefixes not reported in files matching the glob (relative
    #: to the project root, matched like ``exclude``).
    per_file_ignores: tuple[tuple[str, frozenset[str]], ...] = ()
    extend_safe_backends: frozenset[str] = frozenset()
    max_call_depth: int = 8
    #: Function walks one root's analysis may take before it stops (``CAL900`` says where): the
    #: largest roots of the real training repositories measured take under 9,000.
    max_function_walks: int = 20_000
    compile_wrappers: frozenset[str] = frozenset()
    entry_points: tuple[str, ...] = ()
    #: ``target-torch``: the torch version or specifier the findings speak for (``target.resolve``
    #: falls back to the installed torch, then the project's pins); as written, checked.
    target_torch: str | None = None
    #: The resolved target (``target.resolve``); None until a front end or the analyzer resolves it.
    #: Part of every cache key through ``repr``: findings differ by torch version.
    torch: TorchTarget | None = None
    #: Where rule pages are: ``{rule_docs_url}CAL001.md`` (a mirror, an internal wiki's copy).
    rule_docs_url: str = DEFAULT_RULE_DOCS_URL
    #: A baseline file (``baseline = "..."``, relative to the pyproject.toml): findings recorded in it
    #: are not reported. Not part of the analysis (its cache keys ignore it).
    baseline: Path | None = field(default=None, compare=False, repr=False)
    #: Directory holding the pyproject.toml the values came from (the project root), if any.
    root: Path | None = None

    def enables(self, code: str) -> bool:
        """Whether rule ``code`` runs: selected and not ignored, unless ``extend-select`` names it
        at least as specifically as ``ignore`` does (Ruff's rule: the more specific selector wins,
        so ``ignore = ["CAL00"]`` with ``--extend-select CAL002`` runs CAL002)."""
        extended = _specificity(code, self.extend_select)
        if extended is not None and extended >= (_specificity(code, self.ignore) or 0):
            return True
        selected = self.select is None or code_matches(code, self.select)
        return selected and not code_matches(code, self.ignore)

    def ignored_in(self, relative: PurePath) -> frozenset[str]:
        """The codes ``per-file-ignores`` turns off in the file at ``relative`` (to the project root)."""
        found: set[str] = set()
        for pattern, codes in self.per_file_ignores:
            if matches_any(relative, (pattern,)):
                found |= codes
        return frozenset(found)

    @property
    def excludes(self) -> tuple[str, ...]:
        return DEFAULT_EXCLUDES + self.exclude + self.extend_exclude

    def exclusion(self, top: Path) -> Callable[[Path, str], bool]:
        """Whether entry ``name`` of ``directory``, a folder that walking ``top`` yields, is excluded.

        Exclude globs see an entry's path relative to the project root, never the folders above
        it, so ``check .``, ``check $PWD`` and the flake8 plugin (which names the root absolutely)
        take the same files. An entry outside the root (a second path named elsewhere, or no
        configuration file at all) is matched relative to ``top`` as given: nothing above what the
        user named is part of what they asked to check, so it must not exclude anything either.
        """
        project = _resolved(self.root) if self.root is not None else None
        start = _resolved(top)
        patterns = self.excludes

        @lru_cache(maxsize=1)  # a walk asks about all entries of one folder, then moves on
        def relative(directory: Path) -> PurePath:
            inside = directory.relative_to(top)
            where = start / inside
            return where.relative_to(project) if project is not None and where.is_relative_to(project) else inside

        def excluded(directory: Path, name: str) -> bool:
            return matches_any(relative(directory) / name, patterns)

        return excluded

    def excludes_file(self, path: Path) -> bool:
        """Whether the exclude globs cover ``path`` (a file named directly, as ``force-exclude``
        asks): the file or a folder above it, matched relative to the project root (or the
        working directory outside it), as a walk would have pruned it."""
        resolved = _resolved(path)
        relative: PurePath
        for base in (self.root, Path.cwd()):
            if base is not None and resolved.is_relative_to(_resolved(base)):
                relative = resolved.relative_to(_resolved(base))
                break
        else:
            relative = PurePath(resolved.name)
        parts = relative.parts
        return any(matches_any(PurePath(*parts[: end + 1]), self.excludes) for end in range(len(parts)))

    def with_overrides(
        self, *, extend_ignore: Iterable[str] = (), extend_select: Iterable[str] = (), **overrides: Any
    ) -> Config:
        """Stage two: options from a command line (ours, flake8's) over the file's values; a None
        value keeps the file's. ``extend_ignore`` adds codes to the file's ``ignore`` (``--ignore``
        and ``--cal-ignore`` extend it, they do not replace it); ``extend_select`` adds codes to
        ``extend-select`` (see ``enables``). Each value is checked by the dataclass's field type."""
        values = {k: v for k, v in overrides.items() if v is not None}
        if extend_ignore:
            values["ignore"] = self.ignore | frozenset(extend_ignore)
        if extend_select:
            values["extend_select"] = self.extend_select | frozenset(extend_select)
        return replace(self, **values)


def _resolved(path: Path) -> Path:
    """``path`` absolute with symlinks resolved, as ``find_pyproject`` finds the project root."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symlink loop
        return path.absolute()


#: Selects every rule (Ruff's spelling).
ALL = "ALL"


def code_matches(code: str, prefixes: Iterable[str]) -> bool:
    return any(prefix == ALL or code.startswith(prefix) for prefix in prefixes)


def _specificity(code: str, prefixes: Iterable[str]) -> int | None:
    """How specifically ``prefixes`` name ``code``: the longest matching prefix's length (``ALL``
    is 0), None when none matches."""
    lengths = [0 if prefix == ALL else len(prefix) for prefix in prefixes if code_matches(code, (prefix,))]
    return max(lengths) if lengths else None


def known_codes() -> tuple[str, ...]:
    return tuple(row.code for row in CODES)


def valid_prefixes() -> frozenset[str]:
    """``ALL``, every code, and every prefix of one from its letters on (``CAL``, ``CAL0``, ``CAL00``)."""
    return frozenset({ALL} | {code[:end] for code in known_codes() for end in range(3, len(code) + 1)})


def check_code(code: str, shown: str | None = None) -> str | None:
    """None when ``code`` (upper case) selects at least one rule, else why not, naming the closest
    codes; ``shown`` is the value as the user wrote it."""
    if code in valid_prefixes():
        return None
    codes = known_codes()
    close = difflib.get_close_matches(code, codes, n=len(codes), cutoff=0.6)
    if close:
        best = difflib.SequenceMatcher(None, code, close[0]).ratio()
        close = [c for c in close if difflib.SequenceMatcher(None, code, c).ratio() >= best - 1e-9]
        suggestion = f"did you mean {' or '.join(close)}?"
    else:
        suggestion = f"the codes are {', '.join(codes)} (or a prefix such as CAL or CAL00, or ALL)"
    return f"{shown if shown is not None else repr(code)} is not a compile-ad-lint rule code or prefix; {suggestion}"


def matches_any(path: PurePath, patterns: Iterable[str]) -> bool:
    """True when ``path``, relative to the project root, is excluded by one of the globs.

    The path must be relative (``Config.exclusion`` makes it so): the folders above the project root
    are not part of the project, so a project checked out under ``.../experiments/proj`` analyzes
    the same files with ``exclude = ["experiments/*"]`` whether it is named as ``.`` or absolutely.

    A name pattern (no ``/``, such as ``build`` or ``*.egg-info``) matches the last component;
    discovery prunes excluded folders as it walks, so that covers everything below them too. A
    pattern with a ``/`` matches the whole relative path or any tail of it that starts at a folder
    (``experiments/*`` also excludes ``sub/experiments/x.py``); a trailing ``/`` is ignored.
    """
    return _compiled(tuple(patterns))(path.name, path.as_posix())


@lru_cache(maxsize=32)
def _compiled(patterns: tuple[str, ...]) -> Callable[[str, str], bool]:
    names = [fnmatch.translate(p) for p in patterns if "/" not in p]
    tails = [p.rstrip("/") for p in patterns if "/" in p]
    paths = [fnmatch.translate(tail) for tail in tails] + [fnmatch.translate(f"*/{tail}") for tail in tails]
    name_regex = re.compile("|".join(names)) if names else None
    path_regex = re.compile("|".join(paths)) if paths else None

    def match(name: str, text: str) -> bool:
        return bool((name_regex and name_regex.match(name)) or (path_regex and path_regex.match(text)))

    return match
