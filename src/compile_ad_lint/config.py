"""Configuration: ``[tool.compile-ad-lint]`` in the nearest ``pyproject.toml``, then CLI overrides.

Stage one finds and validates the file (``load_config``); stage two merges command-line options
(``Config.with_overrides``). Errors name the file and the key so a user can fix them directly.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path, PurePath
from typing import Any

from .inputs import MAX_CONFIG_BYTES, InputError, read_regular
from .torch_versions import TargetError, TorchTarget, parse_setting

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

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


def find_pyproject(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` with our section, walking up from ``start``.

    A file that mentions the tool but cannot be decoded or parsed is returned too, so that loading
    it reports the problem instead of silently dropping the user's settings.
    """
    try:
        start = start.resolve()
    except (OSError, RuntimeError):  # a symlink loop, a vanished directory
        start = Path.cwd()
    for directory in [start, *start.parents] if start.is_dir() else start.parents:
        candidate = directory / "pyproject.toml"
        try:
            raw = read_regular(candidate, MAX_CONFIG_BYTES) if candidate.is_file() else None
        except InputError:
            return candidate  # too large to read: report it rather than drop the user's settings
        except OSError:
            raw = None
        if raw is None or SECTION.encode() not in raw:
            continue
        try:
            document = tomllib.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError, MemoryError):
            return candidate
        tool = document.get("tool")
        if not isinstance(tool, dict) or SECTION in tool:  # ours, or too broken to tell: report it
            return candidate
    return None


def load_config(start: Path) -> Config:
    """Stage one: the validated configuration that applies to ``start`` (defaults if none)."""
    pyproject = find_pyproject(start)
    return Config() if pyproject is None else read_config_file(pyproject)


def read_config_file(pyproject: Path) -> Config:
    source = str(pyproject)
    try:
        document = tomllib.loads(read_regular(pyproject, MAX_CONFIG_BYTES).decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ConfigError(source, None, f"not valid UTF-8: {error}") from error
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(source, None, f"invalid TOML: {error}") from error
    except (RecursionError, MemoryError):
        raise ConfigError(source, None, "invalid TOML: nested too deeply") from None
    except InputError as error:
        raise ConfigError(source, None, f"cannot read: {error}") from error
    except OSError as error:
        raise ConfigError(source, None, f"cannot read: {error.strerror or error}") from error
    tool = document.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(source, None, "[tool] must be a table")
    section = tool.get(SECTION, {})
    if not isinstance(section, dict):
        raise ConfigError(source, None, f"[tool.{SECTION}] must be a table")
    return parse_section(section, source, pyproject.parent)


def parse_section(section: dict[str, object], source: str, root: Path | None = None) -> Config:
    values: dict[str, Any] = {}  # attribute -> value, each converted by its key's parser
    for key, raw in section.items():
        parser = _PARSERS.get(key)
        if parser is None:
            known = ", ".join(sorted(_PARSERS))
            raise ConfigError(source, key, f"unknown key (known keys: {known})")
        attribute, convert = parser
        values[attribute] = convert(raw, source, key)
    written = values.get("baseline")
    if isinstance(written, str):
        values["baseline"] = root / written if root is not None else Path(written)
    return Config(root=root, **values)


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
    from .rules import ALL_RULES  # the rules import this module

    return tuple(rule.code for rule in ALL_RULES)


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


def parse_codes(raw: object, source: str, key: str) -> frozenset[str]:
    """Codes or prefixes; one that selects no rule (``CAL01``, ``E501``, a typo) is an error."""
    codes = _string_list(raw, source, key)
    normalized = []
    for code in codes:
        upper = code.strip().upper()
        problem = check_code(upper, repr(code.strip())) if upper else "an empty code selects no rule"
        if problem is not None:
            raise ConfigError(source, key, problem)
        normalized.append(upper)
    return frozenset(normalized)


def parse_selection(raw: object, source: str, key: str) -> frozenset[str]:
    """Like ``parse_codes``, but an empty selection is an error: it would silently run no rule."""
    codes = parse_codes(raw, source, key)
    if not codes:
        raise ConfigError(
            source, key, "selects no rule; name codes or prefixes such as CAL001 or CAL, or ALL for every rule"
        )
    return codes


def _string_list(raw: object, source: str, key: str) -> tuple[str, ...]:
    if isinstance(raw, str):
        raw = [part.strip() for part in raw.split(",") if part.strip()]
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        raise ConfigError(source, key, f"expected a list of strings, got {raw!r}")
    return tuple(raw)


#: The values ``max-call-depth`` and ``max-function-walks`` take, wherever they are set (the
#: configuration, the command line, flake8's options).
CALL_DEPTHS = range(0, 65)
FUNCTION_WALKS = range(1, 10_000_001)


def integer_range_text(allowed: range) -> str:
    """How an error names ``allowed``: "an integer from 0 to 64"."""
    return f"an integer from {allowed.start} to {allowed.stop - 1}"


def _integer_in(allowed: range) -> Callable[[object, str, str], int]:
    def parse(raw: object, source: str, key: str) -> int:
        if isinstance(raw, bool) or not isinstance(raw, int) or raw not in allowed:
            raise ConfigError(source, key, f"expected {integer_range_text(allowed)}, got {raw!r}")
        return raw

    return parse


_depth = _integer_in(CALL_DEPTHS)
_walks = _integer_in(FUNCTION_WALKS)


def _strings(raw: object, source: str, key: str) -> tuple[str, ...]:
    return _string_list(raw, source, key)


def _string_set(raw: object, source: str, key: str) -> frozenset[str]:
    return frozenset(_string_list(raw, source, key))


def _boolean(raw: object, source: str, key: str) -> bool:
    if not isinstance(raw, bool):
        raise ConfigError(source, key, f"expected true or false, got {raw!r}")
    return raw


def _path_string(raw: object, source: str, key: str) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise ConfigError(source, key, f"expected a path (relative to the pyproject.toml), got {raw!r}")
    return raw


def _target_torch(raw: object, source: str, key: str) -> str:
    if not isinstance(raw, str):
        raise ConfigError(source, key, f'expected a torch version or specifier as a string (like "2.14"), got {raw!r}')
    try:
        parse_setting(raw)
    except TargetError as error:
        raise ConfigError(source, key, str(error)) from error
    return raw.strip()


def _base_url(raw: object, source: str, key: str) -> str:
    if not isinstance(raw, str) or not raw.startswith(("https://", "http://", "file://")):
        raise ConfigError(source, key, f"expected an http(s):// or file:// URL, got {raw!r}")
    return raw if raw.endswith("/") else raw + "/"


def _per_file_ignores(raw: object, source: str, key: str) -> tuple[tuple[str, frozenset[str]], ...]:
    if not isinstance(raw, dict):
        raise ConfigError(
            source, key, f'expected a table of globs to codes, like {{"tests/*" = ["CAL001"]}}, got {raw!r}'
        )
    pairs = []
    for pattern, codes in raw.items():
        if not pattern.strip():
            raise ConfigError(source, key, "an empty glob matches no file")
        pairs.append((pattern, parse_codes(codes, source, f"{key} {pattern!r}")))
    return tuple(pairs)


_PARSERS = {
    "select": ("select", parse_selection),
    "extend-select": ("extend_select", parse_codes),
    "ignore": ("ignore", parse_codes),
    "per-file-ignores": ("per_file_ignores", _per_file_ignores),
    "exclude": ("exclude", _strings),
    "extend-exclude": ("extend_exclude", _strings),
    "respect-gitignore": ("respect_gitignore", _boolean),
    "force-exclude": ("force_exclude", _boolean),
    "extend-safe-backends": ("extend_safe_backends", _string_set),
    "max-call-depth": ("max_call_depth", _depth),
    "max-function-walks": ("max_function_walks", _walks),
    "compile-wrappers": ("compile_wrappers", _string_set),
    "entry-points": ("entry_points", _strings),
    "baseline": ("baseline", _path_string),
    "target-torch": ("target_torch", _target_torch),
    "rule-docs-url": ("rule_docs_url", _base_url),
}


def settings_text(config: Config) -> str:
    """``config`` as the ``[tool.compile-ad-lint]`` table that would give it, every key spelled out
    (``check --show-settings``): ``select`` shows ``ALL`` for every rule, ``exclude`` the built-in
    globs too."""
    lines = [f"[tool.{SECTION}]"]
    for key, (attribute, _) in _PARSERS.items():
        value: Any = getattr(config, attribute)
        if key == "select" and value is None:
            value = [ALL]
        elif key == "exclude":
            value = [*DEFAULT_EXCLUDES, *value]
        elif key == "per-file-ignores":
            value = {glob: sorted(codes) for glob, codes in value}
        elif value is None:  # not set (baseline, target-torch)
            continue
        lines.append(f"{key} = {_toml(value)}")
    return "\n".join(lines) + "\n"


def _toml(value: object) -> str:
    """A TOML value (strings as JSON writes them, which TOML reads the same)."""
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (frozenset, set)):
        value = sorted(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(str(value))


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
