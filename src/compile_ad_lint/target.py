"""Which torch the findings speak for: ``target-torch``, else the installed torch, else the project's pins.

Resolution order (Ruff's ``target-version`` is the model):

1. ``--target-torch`` on the command line, then ``target-torch`` in ``[tool.compile-ad-lint]``;
2. the torch installed where the tool runs, from its distribution metadata (torch is never imported);
3. the project's own pins: lock files first (``uv.lock``, ``poetry.lock``: what is installed), else
   every declared requirement at once (``pyproject.toml`` dependencies, optional dependencies and
   dependency groups, Poetry's dependencies, ``requirements*.txt``, ``setup.cfg``, ``environment.yml``);
4. the newest torch the knowledge has facts for.

A version (``2.14.1``, ``2.14``) or a specifier (``>=2.4``, ``>=2.4,<2.15``) admits a set of release
series; the knowledge answers for each known series it admits (``knowledge.versions``). Project files
are input: each is read only if it is a regular file under 1 MiB, and one that cannot be read or
parsed is skipped.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from importlib import metadata
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from .core.settings import Config
from .core.torch_versions import Series, TargetError, TorchTarget, parse_setting
from .knowledge.versions import NEWEST, default_target, target_of
from .project import default_root

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

#: A project file larger than this is not read for pins.
MAX_PIN_FILE_BYTES = 1 << 20
#: The distributions that are torch (conda's package is ``pytorch``).
TORCH_NAMES = frozenset({"torch", "pytorch"})
#: Series tried when finding which ones a specifier admits: every 1.x and 2.x, and 3.0 to 3.9.
_CANDIDATE_SERIES = tuple(Series(major, minor) for major, top in ((1, 14), (2, 40), (3, 10)) for minor in range(top))
_PATCHES = range(12)


@dataclass(frozen=True)
class Pin:
    """One requirement on torch found in a project file."""

    file: str
    specifier: SpecifierSet
    #: From a lock file: the version actually resolved.
    locked: bool = False


def admitted(specifier: SpecifierSet) -> list[Series]:
    """The release series (of 1.x, 2.x and 3.0-3.9) with at least one release the specifier admits."""
    return list(_admitted(str(specifier)))


@lru_cache(maxsize=64)
def _admitted(specifier: str) -> tuple[Series, ...]:
    # Kept per spelling: the language server resolves the target at every edit (760 versions).
    admits = SpecifierSet(specifier)
    return tuple(
        series
        for series in _CANDIDATE_SERIES
        if any(admits.contains(version, prereleases=True) for version in _candidate_versions(series))
    )


@cache
def _candidate_versions(series: Series) -> tuple[Version, ...]:
    return tuple(Version(f"{series}.{patch}") for patch in _PATCHES)


def target_from(specifier: SpecifierSet, spec: str, source: str) -> TorchTarget:
    series = admitted(specifier)
    if not series:
        raise TargetError(f"{spec!r} ({source}) admits no torch release")
    return target_of(series, spec, source)


def installed_torch() -> str | None:
    """The version of the torch distribution installed in this environment (never imports torch)."""
    for name in ("torch", "pytorch"):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        except Exception:  # a broken dist-info: no answer from the environment
            return None
    return None


def resolve(setting: str | None, setting_source: str, root: Path | None) -> TorchTarget:
    """The target, in the order the module docstring gives. ``setting``: the command line's or the
    configuration's value (``setting_source`` names which); ``root``: the project's folder."""
    if setting is not None:
        return target_from(parse_setting(setting), setting.strip(), setting_source)
    installed = installed_torch()
    if installed is not None:
        try:
            return target_from(SpecifierSet(f"=={Version(installed).public}"), installed, "installed torch")
        except (InvalidVersion, TargetError):
            pass
    if root is not None:
        found = project_pins(root)
        if found is not None:
            return found
    return default_target(f"default: no torch installed or pinned, the newest with recorded facts ({NEWEST})")


def project_pins(root: Path) -> TorchTarget | None:
    """The target the project's own files pin, or None when none mentions torch."""
    pins = list(_pins(root))
    locked = [pin for pin in pins if pin.locked]
    chosen = locked or pins
    if not chosen:
        return None
    files = ", ".join(dict.fromkeys(pin.file for pin in chosen))
    if locked:  # every locked version (a lock may hold one per platform)
        series = sorted({s for pin in locked for s in admitted(pin.specifier)})
        spec = " or ".join(dict.fromkeys(str(pin.specifier).lstrip("=") for pin in locked))
    else:  # every declared requirement holds at once; contradicting ones: any of them
        combined = SpecifierSet()
        for pin in chosen:
            combined &= pin.specifier
        series = admitted(combined)
        spec = str(combined) or "any version"
        if not series:
            series = sorted({s for pin in chosen for s in admitted(pin.specifier)})
            spec = " or ".join(dict.fromkeys(str(pin.specifier) or "any version" for pin in chosen))
    if not series:
        return None
    return target_of(series, spec, f"project pins: {files}")


def _read(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_PIN_FILE_BYTES:
            return None
        with path.open("rb") as handle:
            return handle.read(MAX_PIN_FILE_BYTES + 1).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _toml(path: Path) -> dict | None:
    text = _read(path)
    if text is None:
        return None
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError, ValueError):
        return None


def _requirement(line: str, file: str) -> Pin | None:
    text = line.split(" #", 1)[0].strip()
    if not text or text.startswith(("#", "-")):
        return None
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return None
    if requirement.name.lower() not in TORCH_NAMES:
        return None
    return Pin(file, requirement.specifier)


def _requirements(lines: Iterable[object], file: str) -> Iterator[Pin]:
    for line in lines:
        if isinstance(line, str):
            pin = _requirement(line, file)
            if pin is not None:
                yield pin


def _pins(root: Path) -> Iterator[Pin]:
    for lock in ("uv.lock", "poetry.lock"):
        document = _toml(root / lock)
        packages = document.get("package", []) if isinstance(document, dict) else []
        for package in packages if isinstance(packages, list) else []:
            if isinstance(package, dict) and str(package.get("name", "")).lower() in TORCH_NAMES:
                try:
                    yield Pin(lock, SpecifierSet(f"=={Version(str(package.get('version'))).public}"), locked=True)
                except (InvalidVersion, InvalidSpecifier):
                    continue
    yield from _pyproject(root / "pyproject.toml")
    for path in sorted(root.glob("requirements*.txt")) + sorted(root.glob("requirements/*.txt")):
        text = _read(path)
        if text is not None:
            yield from _requirements(text.splitlines(), path.relative_to(root).as_posix())
    yield from _setup_cfg(root / "setup.cfg")
    for name in ("environment.yml", "environment.yaml"):
        yield from _environment(root / name)


def _pyproject(path: Path) -> Iterator[Pin]:
    document = _toml(path)
    if not isinstance(document, dict):
        return
    project = document.get("project")
    if isinstance(project, dict):
        dependencies = project.get("dependencies")
        if isinstance(dependencies, list):
            yield from _requirements(dependencies, "pyproject.toml")
        optional = project.get("optional-dependencies")
        for group in optional.values() if isinstance(optional, dict) else ():
            if isinstance(group, list):
                yield from _requirements(group, "pyproject.toml")
    groups = document.get("dependency-groups")
    for group in groups.values() if isinstance(groups, dict) else ():
        if isinstance(group, list):
            yield from _requirements(group, "pyproject.toml")
    poetry = document.get("tool", {}).get("poetry", {}) if isinstance(document.get("tool"), dict) else {}
    tables = [poetry.get("dependencies")] if isinstance(poetry, dict) else []
    poetry_groups = poetry.get("group", {}) if isinstance(poetry, dict) else {}
    if isinstance(poetry_groups, dict):
        tables += [g.get("dependencies") for g in poetry_groups.values() if isinstance(g, dict)]
    for table in tables:
        if not isinstance(table, dict):
            continue
        for name, value in table.items():
            if name.lower() in TORCH_NAMES:
                written = value.get("version") if isinstance(value, dict) else value
                specifier = _poetry_specifier(written) if isinstance(written, str) else None
                if specifier is not None:
                    yield Pin("pyproject.toml", specifier)


def _poetry_specifier(text: str) -> SpecifierSet | None:
    """Poetry's ``^2.4`` / ``~2.4`` / ``2.4.*`` / ``>=2.4`` as a PEP 440 specifier."""
    parts = []
    for piece in text.split(","):
        item = piece.strip()
        if item in ("*", ""):
            continue
        if item[0] in "^~" and item[1:2] != "=":
            try:
                release = Version(item[1:]).release
            except InvalidVersion:
                return None
            if item[0] == "^":
                first = next((i for i, n in enumerate(release) if n), len(release) - 1)
                upper = [*release[:first], release[first] + 1]
            else:
                upper = [release[0], release[1] + 1] if len(release) > 1 else [release[0] + 1]
            parts += [f">={item[1:]}", f"<{'.'.join(map(str, upper))}"]
        elif item[0].isdigit():
            parts.append(f"=={item}")
        else:
            parts.append(item)
    try:
        return SpecifierSet(",".join(parts))
    except InvalidSpecifier:
        return None


def _setup_cfg(path: Path) -> Iterator[Pin]:
    import configparser

    text = _read(path)
    if text is None:
        return
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return
    values = []
    if parser.has_option("options", "install_requires"):
        values.append(parser.get("options", "install_requires"))
    if parser.has_section("options.extras_require"):
        values += [parser.get("options.extras_require", key) for key in parser.options("options.extras_require")]
    for value in values:
        yield from _requirements(value.replace(";", "\n;").splitlines(), "setup.cfg")


#: ``- pytorch=2.14``, ``- torch==2.14.1``, ``- pytorch>=2.4,<2.15`` (conda or its pip section).
_CONDA_LINE = re.compile(r"^\s*-\s*(?:[\w.-]+::)?(?P<name>pytorch|torch)\s*(?P<spec>[=<>!~][^#\s]*)?\s*(?:#.*)?$")


def _environment(path: Path) -> Iterator[Pin]:
    text = _read(path)
    if text is None:
        return
    for line in text.splitlines():
        match = _CONDA_LINE.match(line)
        if match is None or not match.group("spec"):
            continue
        spec = match.group("spec")
        if spec.startswith("=") and not spec.startswith("=="):  # conda's ``=2.14[=build]``: any 2.14 release
            spec = f"=={spec[1:].split('=', 1)[0].rstrip('.*')}.*"
        try:
            yield Pin(path.name, SpecifierSet(spec))
        except InvalidSpecifier:
            continue


def with_target(config: Config, paths: Sequence[str] = (), *, setting: str | None = None, source: str = "") -> Config:
    """``config`` with its torch target resolved (kept when it has one): ``setting`` (a command-line
    value, named by ``source``), else the configuration's ``target-torch``, else the environment and the
    pins of the project holding ``paths`` (``resolve``)."""
    if setting is not None:
        return replace(config, target_torch=setting.strip(), torch=resolve(setting, source or "--target-torch", None))
    if config.torch is not None:
        return config
    if config.target_torch is not None:
        where = "pyproject.toml" if config.root is None else str(config.root / "pyproject.toml")
        return replace(config, torch=resolve(config.target_torch, f"{where} target-torch", None))
    try:
        root = config.root or default_root(paths)
    except (OSError, RuntimeError):
        root = None
    return replace(config, torch=resolve(None, "", root))
