"""Configuration: ``[tool.compile-ad-lint]`` in the nearest ``pyproject.toml``, then CLI overrides.

Stage one finds and validates the file (``load_config``); stage two merges command-line options
(``Config.with_overrides``, ``core/settings.py``). Errors name the file and the key so a user can
fix them directly.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .core.paths import file_status
from .core.settings import ALL, DEFAULT_EXCLUDES, SECTION, Config, ConfigError, check_code
from .core.torch_versions import TargetError, parse_setting
from .inputs import MAX_CONFIG_BYTES, InputError, read_regular

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib


def _searched(start: Path) -> list[Path]:
    """The folders ``find_pyproject`` looks in, nearest first."""
    try:
        start = start.resolve()
    except (OSError, RuntimeError):  # a symlink loop, a vanished directory
        start = Path.cwd()
    return [start, *start.parents] if start.is_dir() else list(start.parents)


def config_signature(start: Path) -> tuple[tuple[str, tuple[int, ...] | None], ...]:
    """What ``load_config(start)`` would read, as file system facts: each ``pyproject.toml`` it
    looks at with its ``file_status`` (None where there is none). A process that loads the
    configuration again and again (the language server, once per edit) loads it again only when
    this changes."""
    facts: list[tuple[str, tuple[int, ...] | None]] = []
    for directory in _searched(start):
        candidate = directory / "pyproject.toml"
        try:
            facts.append((str(candidate), file_status(candidate)))
        except OSError:
            facts.append((str(candidate), None))
    return tuple(facts)


def find_pyproject(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` with our section, walking up from ``start``.

    A file that mentions the tool but cannot be decoded or parsed is returned too, so that loading
    it reports the problem instead of silently dropping the user's settings.
    """
    for directory in _searched(start):
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
