"""flake8 plugin: reports CAL findings as flake8 errors (entry point ``CAL`` in ``flake8.extension``).

flake8 checks one file at a time, but CAL001/CAL002 follow calls across modules, so each file is
analyzed in the context of its project: the folder holding the nearest ``pyproject.toml`` with a
``[tool.compile-ad-lint]`` section, else the nearest folder with a project marker
(``pyproject.toml``, ``setup.py``, ``setup.cfg``, ``.git``), else the top of the file's package; a
loose script outside any of these is analyzed on its own. One report per project (and options) is
computed per flake8 process and shared by every file of that project.

Positions: flake8 takes 0-based columns and prints ``column + 1``, so we hand it ``column - 1``
and flake8 shows the same 1-based column as ``compile-ad-lint check``. A notebook (flake8 reads one
when told to: ``--filename '*.ipynb'``) is reported where the cell's text is in the ``.ipynb`` JSON
flake8 read, the message starting with ``cell N:LINE:COLUMN:`` (the cell's own position). stdin
without ``--stdin-display-name`` is analyzed as ``compile-ad-lint check -`` analyzes it. flake8's ``# noqa`` applies
as usual. Messages are escaped like the text output (``printable``): they quote the checked code,
and a newline or terminal escape in a string literal must not forge a flake8 line.

The plugin shares the project's ``.compile_ad_lint_cache/`` with the CLI and the language server
(the only thing it writes; the user's files never): right after ``compile-ad-lint check .`` a
``flake8`` run is served from the cache. The project is named as the CLI would name it from the
working directory (``.`` when flake8 runs at the project root), because cached results are keyed
by how paths are shown. It runs the analyzer in-process: in flake8's worker processes with one
process each (flake8 spreads the files over them, and they share the project's roots through the
cache), where flake8 checks in its own process (one file, stdin, ``-j 1``) over flake8's ``--jobs``
processes like the CLI (``auto``: one per CPU).

Options (command line or the ``[flake8]`` config section): ``--cal-select``, ``--cal-ignore``
(codes or prefixes, comma-separated), ``--cal-max-call-depth`` and ``--cal-baseline`` (a file written
by ``check --write-baseline``; findings it records are not reported); they override
``[tool.compile-ad-lint]``, whose ``baseline`` applies otherwise.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import threading
import time
import tokenize
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

from .._version import __version__
from ..api import Analyzer
from ..config import CALL_DEPTHS, find_pyproject, integer_range_text, parse_codes, read_config_file
from ..core.findings import Finding
from ..core.paths import as_the_cli_names_it, is_notebook, real_path
from ..core.settings import Config, ConfigError
from ..notebook import Notebook, NotebookError
from ..notebook import load as load_notebook
from ..notebook import parse as parse_notebook
from ..notebook import read as read_notebook
from ..output.escape import printable
from ..project import project_root

_Result = tuple[int, int, str, type]
#: The file names flake8 gives stdin without ``--stdin-display-name``.
_STDIN_NAMES = ("stdin", "-")


class _ProjectReport:
    """Findings of one analysis of a project, by resolved file path."""

    def __init__(self, findings: Sequence[Finding], started_ns: int) -> None:
        self.started_ns = started_ns
        self.by_file: dict[Path, list[Finding]] = {}
        for finding in findings:
            self.by_file.setdefault(finding.location.file, []).append(finding)


class CompileAdLintChecker:
    """The flake8 checker; flake8 instantiates it once per file."""

    name = "compile-ad-lint"
    version = __version__

    #: Overrides from flake8 options, set by ``parse_options``.
    _overrides: ClassVar[dict[str, Any]] = {}
    #: (project root, analyzed paths, config) -> report, shared by all files of one flake8 process.
    _reports: ClassVar[dict[tuple, _ProjectReport]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()
    #: flake8's ``--jobs`` when given as a number (None for ``auto``), set by ``parse_options``.
    _jobs: ClassVar[int | None] = None

    def __init__(self, tree: object, filename: str, lines: Sequence[str] | None = None) -> None:
        self.tree = tree  # unused: the analysis needs LibCST and the rest of the project
        self.filename = filename
        self.lines = lines

    # -- options ----------------------------------------------------------------------------

    @classmethod
    def add_options(cls, option_manager: Any) -> None:
        option_manager.add_option(
            "--cal-select",
            default=None,
            parse_from_config=True,
            comma_separated_list=True,
            help="compile-ad-lint: comma-separated rule codes or prefixes to run (default: all, or [tool.compile-ad-lint] select)",
        )
        option_manager.add_option(
            "--cal-ignore",
            default=None,
            parse_from_config=True,
            comma_separated_list=True,
            help="compile-ad-lint: comma-separated rule codes or prefixes to skip",
        )
        option_manager.add_option(
            "--cal-max-call-depth",
            default=None,
            type=int,
            parse_from_config=True,
            help="compile-ad-lint: how many calls deep to follow from each anchor (0-64, default 8)",
        )
        option_manager.add_option(
            "--cal-baseline",
            default=None,
            parse_from_config=True,
            help="compile-ad-lint: a baseline file (check --write-baseline); findings it records are not reported (default: [tool.compile-ad-lint] baseline)",
        )

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        overrides: dict[str, Any] = {}
        for option, key, override in (("cal_select", "select", "select"), ("cal_ignore", "ignore", "extend_ignore")):
            value = getattr(options, option, None)
            if not value:
                continue
            try:
                overrides[override] = parse_codes(list(value), "flake8", key)
            except ConfigError as error:
                reason = str(error).split(f"{key}: ", 1)[-1]
                raise _execution_error(f"--cal-{key}: {reason}") from error
        depth = getattr(options, "cal_max_call_depth", None)
        if depth is not None:
            if depth not in CALL_DEPTHS:
                raise _execution_error(
                    f"flake8 option --cal-max-call-depth: expected {integer_range_text(CALL_DEPTHS)}, got {depth}"
                )
            overrides["max_call_depth"] = depth
        baseline = getattr(options, "cal_baseline", None)
        if baseline:
            overrides["baseline"] = Path(baseline)
        cls._overrides = overrides
        jobs = getattr(options, "jobs", None)
        cls._jobs = None if jobs is None or jobs.is_auto else max(1, jobs.n_jobs)
        cls._reports.clear()
        problem = _unreadable_project_files(getattr(options, "filenames", None) or ["."], overrides)
        if problem is not None:  # a usage error, before flake8 starts its workers
            print(f"compile-ad-lint: configuration error: {problem}", file=sys.stderr)
            raise SystemExit(2)

    @classmethod
    def _analysis_jobs(cls) -> int | None:
        """The processes one analysis of the project may use. In flake8's worker processes, one:
        flake8 already spreads the files over them, each analyzes the project and the cache's
        claims share its roots between them (and a daemonic pool worker cannot start processes).
        Where flake8 checks in its own process (one file, stdin, ``-j 1``), flake8's ``--jobs``,
        one per CPU for ``auto``: ``flake8 train.py`` in a fresh clone analyzes the whole project
        (docs/performance.md, "flake8"). Also one where flake8 runs in a process with other
        threads (an editor extension's server running flake8 in-process): starting worker
        processes forks it, and a lock another thread holds at that moment stays held in them."""
        if multiprocessing.current_process().daemon or threading.active_count() > 1:
            return 1
        return cls._jobs

    # -- checking ---------------------------------------------------------------------------

    def run(self) -> Iterator[_Result]:
        path = Path(self.filename)
        resolved = real_path(path)
        findings = self._findings_for(resolved) if path.is_file() else self._stdin_findings(resolved)
        notebook = self._notebook(resolved) if is_notebook(path) else None
        for finding in findings:
            location = finding.location
            line, column, message = location.line, location.column, printable(finding.message)
            if location.cell is not None:
                # flake8 shows positions in the file it read: the .ipynb's JSON. Point at the cell's
                # text there, and name the cell and the line in it as the text report does.
                found = notebook.raw_position(location.cell, location.line, location.column) if notebook else None
                line, column = found if found is not None else (1, 1)
                message = f"cell {location.cell}:{location.line}:{location.column}: {message}"
            yield line, max(0, column - 1), f"{finding.code} {message}", type(self)

    def _stdin_findings(self, resolved: Path) -> list[Finding]:
        """stdin (``flake8 -``), or a ``--stdin-display-name`` that is no file on disk: what
        ``compile-ad-lint check -`` reports (with ``--stdin-filename NAME`` for such a name: the
        project around it is analyzed with it)."""
        if self.lines is None:
            return []
        data = "".join(self.lines).encode("utf-8", "surrogateescape")
        named = self.filename not in _STDIN_NAMES
        root, pyproject = project_root(resolved) if named else (None, find_pyproject(Path.cwd()))
        config = self._config(pyproject)
        source = data
        if is_notebook(resolved):
            try:
                source = read_notebook(resolved, data).text.encode("utf-8", "surrogatepass")
            except NotebookError:
                return []  # flake8 already reports what it cannot read
        paths = [self.filename, *([as_the_cli_names_it(root)] if root is not None else [])]
        report = Analyzer(config, jobs=self._analysis_jobs()).check(paths, sources={resolved: source})
        findings = _without_baselined(report.findings, config, {resolved: source})
        return list(_ProjectReport(findings, 0).by_file.get(resolved, ()))

    def _notebook(self, resolved: Path) -> Notebook | None:
        """The notebook flake8 read (its buffer when given one), for positions in its JSON."""
        if self.lines is not None:
            try:
                return parse_notebook("".join(self.lines).encode("utf-8", "surrogateescape"))
            except NotebookError:
                return None
        return load_notebook(resolved)

    def _findings_for(self, resolved: Path) -> list[Finding]:
        root, pyproject = project_root(resolved)
        try:
            config = self._config(pyproject)
        except ConfigError as error:  # a project below the paths flake8 was given (parse_options)
            raise _execution_error(f"configuration error: {error}") from error
        target = as_the_cli_names_it(root if root is not None else resolved)
        source = self._unsaved_source(resolved)
        if source is not None:  # stdin / editor buffer that differs from the file on disk
            report = Analyzer(config, jobs=self._analysis_jobs()).check(
                [target], sources={resolved: source}, evidence=False
            )
            findings = _without_baselined(report.findings, config, {resolved: source})
            return list(_ProjectReport(findings, 0).by_file.get(resolved, ()))
        key = (target, config, config.baseline)
        with self._lock:
            cached = self._reports.get(key)
            if cached is None or _modified_since(resolved, cached.started_ns):
                started = time.time_ns()
                # Findings are shown as lines: a check served from its record loads no rule.
                report = Analyzer(config, jobs=self._analysis_jobs()).check([target], evidence=False)
                cached = self._reports[key] = _ProjectReport(_without_baselined(report.findings, config, {}), started)
        return list(cached.by_file.get(resolved, ()))

    def _config(self, pyproject: Path | None) -> Config:
        config = read_config_file(pyproject) if pyproject is not None else Config()
        return config.with_overrides(**self._overrides)

    def _unsaved_source(self, resolved: Path) -> bytes | None:
        """The text flake8 checks, when it is not what is on disk (``flake8 -`` with a display name);
        for a notebook, the module its cells make."""
        if self.lines is None:
            return None
        checked = "".join(self.lines)
        try:
            with tokenize.open(resolved) as handle:
                on_disk = handle.read()
        except (OSError, SyntaxError, UnicodeError):
            return None
        if checked.lstrip("\ufeff") == on_disk.lstrip("\ufeff"):
            return None
        if is_notebook(resolved):
            try:
                return read_notebook(resolved, checked.encode("utf-8")).text.encode("utf-8", "surrogatepass")
            except NotebookError:
                return None
        return checked.encode("utf-8")


def _without_baselined(findings: Sequence[Finding], config: Config, sources: dict[Path, bytes]) -> Sequence[Finding]:
    """``findings`` minus those the baseline (``--cal-baseline`` or the config's) records; matched
    on the whole project's findings, as ``check --baseline`` does, so fingerprints agree."""
    if config.baseline is None:
        return findings
    from ..baseline import BaselineError, load_baseline

    try:
        baseline = load_baseline(config.baseline)
    except BaselineError as error:
        raise _execution_error(str(error)) from error

    def read(display: str) -> bytes | None:
        path = real_path(display)
        if path in sources:
            return sources[path]
        try:
            return path.read_bytes()
        except OSError:
            return None

    return baseline.filter(findings, read).findings


def _unreadable_project_files(paths: Sequence[str], overrides: dict[str, Any]) -> str | None:
    """What is wrong with the configuration and baseline of the projects of ``paths`` (the files
    and folders flake8 was given), if anything: the same errors ``compile-ad-lint check`` reports."""
    from ..baseline import BaselineError, load_baseline

    for given in paths:
        if given == "-":
            continue
        try:
            root, pyproject = project_root(real_path(given))
            config = (read_config_file(pyproject) if pyproject is not None else Config()).with_overrides(**overrides)
            if config.baseline is not None:
                load_baseline(config.baseline)
        except (ConfigError, BaselineError) as error:
            return str(error)
    return None


def _modified_since(path: Path, started_ns: int) -> bool:
    try:
        return path.stat().st_mtime_ns > started_ns
    except OSError:
        return False


def _execution_error(message: str) -> Exception:
    from flake8.exceptions import ExecutionError  # only ever called from inside flake8

    return ExecutionError(f"compile-ad-lint: {message}")
