"""``compile-ad-lint``: a thin command line over ``compile_ad_lint.api``.

Exit codes: 0 no findings, 1 findings, 2 usage, configuration or internal error. A run that checks
no file at all (every path missing, nothing to analyze under a folder) is a usage error: it says so
on stderr and exits 2 instead of passing silently.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TextIO, TypeVar

from ._version import __version__
from .command.scope import STDIN, Scope, build_scope, narrowed, reader, stdin_failure, stdin_lines
from .command.usage import Parser, add_output_format, concise_report
from .config import (
    CALL_DEPTHS,
    FUNCTION_WALKS,
    integer_range_text,
    load_config,
    parse_codes,
    parse_selection,
    read_config_file,
)
from .core.codes import CODES
from .core.paths import real_path
from .core.settings import DEFAULT_RULE_DOCS_URL, Config, ConfigError, valid_prefixes
from .core.torch_versions import TargetError
from .project import default_root
from .target import with_target

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
_N = TypeVar("_N", int, float)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="compile-ad-lint", description="Find autograd hazards that torch.compile introduces silently.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    check = commands.add_parser("check", help="analyze files, directories and notebooks")
    check.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="Python files, notebooks (.ipynb), directories, or - for stdin (default: .)",
    )
    rules = check.add_argument_group("rule selection")
    rules.add_argument(
        "--select",
        type=_codes("select"),
        metavar="CODES",
        help="comma-separated codes or prefixes to report, or ALL (default: the config's select, else ALL)",
    )
    rules.add_argument(
        "--extend-select",
        type=_codes("extend-select"),
        metavar="CODES",
        help="codes or prefixes to report on top of the selection (default: none)",
    )
    rules.add_argument(
        "--ignore",
        type=_codes("ignore"),
        metavar="CODES",
        help="comma-separated codes or prefixes to skip, added to the config's ignore (default: none)",
    )
    rules.add_argument(
        "--per-file-ignores",
        type=_per_file_ignores,
        metavar="GLOB:CODES",
        help="codes not reported in files matching GLOB, e.g. 'tests/*:CAL001,CAL002'; replaces the config's (default: the config's per-file-ignores)",
    )
    report = check.add_argument_group("report")
    report.add_argument("--format", choices=_format_names(), default="text", help="report format (default: text)")
    add_output_format(report, _format_names())
    report.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    report.add_argument("--concise", action="store_true", help="text: one line per finding, without the chain under it")
    report.add_argument("--show-source", action="store_true", help="text: print the flagged line with a caret range")
    report.add_argument("--statistics", action="store_true", help="text: a count per code instead of the findings")
    report.add_argument(
        "--quiet", "-q", action="store_true", help="print the findings only: no summary, notes or progress"
    )
    report.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    scope = check.add_argument_group("what is analyzed")
    scope.add_argument(
        "--stdin-filename",
        metavar="PATH",
        help="with - (or no PATH): the project file stdin stands for; its imports and the project's other files are used",
    )
    scope.add_argument(
        "--dependents",
        action="store_true",
        help="also report findings in other files of the project whose evidence (region, call hops, compile site, config, autocast source) is in one of PATHS (the pre-commit hook uses it)",
    )
    scope.add_argument("--config", metavar="PYPROJECT", help="use this pyproject.toml instead of the nearest one")
    scope.add_argument(
        "--target-torch",
        metavar="VERSION",
        help="the torch version (2.14, 2.14.1) or specifier (>=2.4) the findings speak for (default: the config's "
        "target-torch, else the installed torch, else the project's pins, else the newest known)",
    )
    scope.add_argument(
        "--exclude",
        type=_globs,
        metavar="GLOBS",
        help="comma-separated globs of files and folders to skip, replacing the config's exclude (default: the config's, after the built-in ones)",
    )
    scope.add_argument(
        "--extend-exclude",
        type=_globs,
        metavar="GLOBS",
        help="comma-separated globs to skip on top of exclude (default: none)",
    )
    scope.add_argument(
        "--force-exclude",
        action="store_true",
        default=None,
        help="apply the excludes to files named on the command line too (the pre-commit hook names every staged file)",
    )
    gitignore = scope.add_mutually_exclusive_group()
    gitignore.add_argument(
        "--respect-gitignore",
        action="store_true",
        default=None,
        help="skip files .gitignore ignores in a git work tree (default: the config's respect-gitignore, else on)",
    )
    gitignore.add_argument(
        "--no-respect-gitignore", dest="respect_gitignore", action="store_false", help="check files .gitignore ignores"
    )
    scope.add_argument(
        "--show-files", action="store_true", help="list the files that would be checked, one per line, and exit"
    )
    scope.add_argument(
        "--show-settings", action="store_true", help="print the settings that apply to the first PATH and exit"
    )
    scope.add_argument(
        "--max-call-depth",
        type=_depth,
        metavar="N",
        help="how many calls deep to follow from each anchor (default: the config's max-call-depth, else 8)",
    )
    scope.add_argument(
        "--max-function-walks",
        type=_walks,
        metavar="N",
        help="function walks each analyzed file may take before it is CAL900 'analysis incomplete' (default: the config's max-function-walks, else 20000)",
    )
    scope.add_argument(
        "--no-cache", action="store_true", help="neither read nor write the summary cache (.compile_ad_lint_cache/)"
    )
    scope.add_argument(
        "--jobs",
        "-j",
        type=_positive_int,
        metavar="N",
        help="worker processes (default: CPU count); with --confirm also the runs at a time (default: CPU count, at most 4)",
    )
    fixes = check.add_argument_group("fixes (write files only when asked)")
    fixes.add_argument(
        "--fix", action="store_true", help="apply the safe fixes in place, re-analyze, and report what remains"
    )
    fixes.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="apply the unsafe fixes too with --fix or --diff (they change more than the hazard: speed, other compiled calls, a guessed value); alone, mark them fixable in the report",
    )
    fixes.add_argument(
        "--diff", action="store_true", help="print the changes --fix would make as a unified diff; write nothing"
    )
    fixes.add_argument(
        "--show-fixes",
        action="store_true",
        help="with --fix: list what was fixed per file and code; without: show each fix's change under its finding",
    )
    fixes.add_argument(
        "--add-noqa",
        action="store_true",
        help="add `# noqa: CODE` to the line of every finding reported (codes already listed are kept, not repeated)",
    )
    baseline = check.add_argument_group("baseline")
    baseline.add_argument(
        "--baseline",
        metavar="FILE",
        help="report only findings that FILE does not record (default: the config's baseline)",
    )
    baseline.add_argument(
        "--write-baseline",
        metavar="FILE",
        help="record every current finding in FILE (the baseline is ignored), report them, and exit 0",
    )
    confirm = check.add_argument_group("confirm mode (runs your code)")
    confirm.add_argument(
        "--confirm", action="store_true", help="run each finding's code eagerly and compiled and attach a verdict"
    )
    confirm.add_argument(
        "--devices",
        metavar="DEVICES",
        help="comma-separated devices for --confirm: cpu,cuda (default: cpu, plus cuda if available)",
    )
    confirm.add_argument(
        "--confirm-timeout",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="per-run timeout for --confirm (default: 300)",
    )
    confirm.add_argument(
        "--entry",
        action="append",
        default=[],
        metavar="MODULE:FUNCTION",
        help="entry point for --confirm (repeatable; default: the config's entry-points, then found ones)",
    )

    run = commands.add_parser(
        "confirm",
        help="check PATHS, then run your command (after --) and attach verdicts from its own run",
        usage="%(prog)s [PATH...] [options] -- COMMAND [ARG...]",
    )
    run.add_argument("paths", nargs="*", metavar="PATH", help="what the static check covers (default: .)")
    run.add_argument(
        "--select",
        type=_codes("select"),
        metavar="CODES",
        help="codes or prefixes to report (default: the config's select, else ALL)",
    )
    run.add_argument(
        "--ignore", type=_codes("ignore"), metavar="CODES", help="codes or prefixes to skip (default: none)"
    )
    run.add_argument("--format", choices=_format_names(), default="text", help="report format (default: text)")
    add_output_format(run, _format_names(), text_variants=False)
    run.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    run.add_argument(
        "--quiet", "-q", action="store_true", help="print the findings only; the command's output is not shown"
    )
    run.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    run.add_argument("--config", metavar="PYPROJECT", help="use this pyproject.toml instead of the nearest one")
    run.add_argument(
        "--target-torch",
        metavar="VERSION",
        help="the torch the findings speak for (default: as for check); the run uses the torch it imports",
    )
    run.add_argument("--no-cache", action="store_true", help="neither read nor write the summary cache")
    run.add_argument(
        "--max-seconds",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="stop the command after this long (default: 900)",
    )
    run.add_argument(
        "--until-exit",
        action="store_true",
        help="let the command run until it exits or --max-seconds (default: stop once every site it reached is measured and a measured site runs again)",
    )

    cache = commands.add_parser("cache", help="manage the summary cache")
    cache.add_argument("action", choices=["clean"], help="clean: delete the cache directory")
    cache.add_argument("path", nargs="?", default=".", metavar="PATH", help="a path inside the project (default: .)")

    commands.add_parser("rules", help="list the rules")
    explain = commands.add_parser("explain", help="print a rule's documentation")
    explain.add_argument("code", help="a rule code such as CAL001, or its name")
    lsp = commands.add_parser("lsp", help="run the language server on stdin/stdout (needs pygls)")
    lsp.add_argument(
        "--debounce-ms",
        type=_non_negative_int,
        default=300,
        metavar="MS",
        help="wait this long after an edit before analyzing (default: 300)",
    )
    return parser


def _format_names() -> list[str]:
    from .output import FORMATS

    return sorted(FORMATS)


def _codes(key: str):  # type: ignore[no-untyped-def]
    """The ``type=`` of ``--select``/``--ignore``: validated codes; errors name the flag, not the config."""

    def convert(text: str) -> frozenset[str]:
        try:
            return parse_selection(text, f"--{key}", key) if key == "select" else parse_codes(text, f"--{key}", key)
        except ConfigError as error:
            raise argparse.ArgumentTypeError(error.reason) from None

    convert.__name__ = key
    return convert


def _globs(text: str) -> tuple[str, ...]:
    """The ``type=`` of ``--exclude``/``--extend-exclude``: comma-separated globs."""
    globs = tuple(part.strip() for part in text.split(",") if part.strip())
    if not globs:
        raise argparse.ArgumentTypeError("expected comma-separated globs such as 'data/*,*_pb2.py'")
    return globs


def _per_file_ignores(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """``--per-file-ignores``: ``GLOB:CODES`` pairs, comma-separated; a code after a comma without
    its own glob belongs to the glob before it (``tests/*:CAL001,CAL002`` and Ruff's
    ``tests/*:CAL001,tests/*:CAL002`` say the same)."""
    pairs: dict[str, set[str]] = {}
    glob = None
    for part in (part.strip() for part in text.split(",")):
        if not part:
            continue
        if ":" in part:
            glob, _, code = part.rpartition(":")
            glob = glob.strip()
        elif glob is None:
            raise argparse.ArgumentTypeError(f"expected GLOB:CODES such as 'tests/*:CAL001', got {text!r}")
        else:
            code = part
        if not glob:
            raise argparse.ArgumentTypeError(f"an empty glob matches no file: {text!r}")
        try:
            pairs.setdefault(glob, set()).update(parse_codes(code, "--per-file-ignores", "per-file-ignores"))
        except ConfigError as error:
            raise argparse.ArgumentTypeError(error.reason) from None
    return tuple((glob, frozenset(codes)) for glob, codes in pairs.items())


def _number(parse: Callable[[str], _N], accept: Callable[[_N], bool], expected: str) -> Callable[[str], _N]:
    """The ``type=`` of a numeric option: ``parse(text)`` when ``accept`` takes it, else a usage error."""

    def convert(text: str) -> _N:
        try:
            value = parse(text)
        except ValueError:
            pass
        else:
            if accept(value):
                return value
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")

    return convert


_positive_int = _number(int, lambda value: value >= 1, "a positive integer")
_non_negative_int = _number(int, lambda value: value >= 0, "a number of milliseconds (0 or more)")
_seconds = _number(float, lambda value: 0 < value < float("inf"), "a positive number of seconds")
_depth = _number(int, lambda value: value in CALL_DEPTHS, integer_range_text(CALL_DEPTHS))
_walks = _number(int, lambda value: value in FUNCTION_WALKS, integer_range_text(FUNCTION_WALKS))


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    command: list[str] = []
    if arguments[:1] == ["confirm"] and "--" in arguments:  # confirm [PATHS] -- COMMAND: the command is not ours
        split = arguments.index("--")
        arguments, command = arguments[:split], arguments[split + 1 :]
    args = build_parser().parse_args(arguments)
    if args.command == "confirm":
        from .cli_confirm import run_confirm

        return run_confirm(args, command)
    if args.command == "rules":
        return _list_rules()
    if args.command == "explain":
        return _explain(args.code)
    if args.command == "lsp":
        return _lsp(args.debounce_ms)
    if args.command == "cache":
        return _clean_cache(args.path)
    return _check(args)


class _Progress:
    """A one-line progress bar on stderr, shown only on a terminal and only after the first second."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.started = time.monotonic()
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        if time.monotonic() - self.started < 1 or total <= 0:
            return
        filled = 30 * done // total
        self.stream.write(f"\rcompile-ad-lint [{'#' * filled}{'.' * (30 - filled)}] {done}/{total} anchor files")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()


def _error(message: str) -> int:
    print(f"compile-ad-lint: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def _clean_cache(path: str) -> int:
    from . import cache

    if not os.path.lexists(path):
        return _error(f"cache clean: {path}: path does not exist")
    try:
        root = load_config(Path(path)).root or default_root([path])
    except ConfigError as error:
        print(f"compile-ad-lint: configuration error: {error}", file=sys.stderr)
        return EXIT_ERROR
    try:
        print(cache.clear(root))
    except cache.NotACache as error:
        print(f"compile-ad-lint: {error}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_CLEAN


def _list_rules() -> int:
    from .rules import ALL_RULES

    for rule in ALL_RULES:
        print(f"{rule.code}  {rule.name:34s} {rule.fix_label():16s} {rule.summary}")
    return EXIT_CLEAN


def _lsp(debounce_ms: int) -> int:
    try:
        from .integrations import lsp  # pygls is imported here only
    except ImportError as error:
        print(f"compile-ad-lint: the language server needs pygls ({error}); pip install pygls", file=sys.stderr)
        return EXIT_ERROR
    lsp.start(debounce=max(debounce_ms, 0) / 1000)
    return EXIT_CLEAN


def _explain(code: str) -> int:
    from .rules import ALL_RULES

    for rule in ALL_RULES:
        if code.upper() == rule.code or code == rule.name:
            print(rule.documentation(), end="")
            try:
                docs_url = load_config(Path(".")).rule_docs_url
            except ConfigError:
                docs_url = DEFAULT_RULE_DOCS_URL
            print(f"\nThis page: {rule.docs_url(docs_url)} (docs/rules/{rule.code}.md in the source tree).")
            return EXIT_CLEAN
    print(f"compile-ad-lint: unknown rule {code!r}; `compile-ad-lint rules` lists them", file=sys.stderr)
    return EXIT_ERROR


def _use_color(args: argparse.Namespace, stream: TextIO) -> bool:
    """Colors in the text report on a terminal only; ``NO_COLOR`` turns them off, ``FORCE_COLOR``
    on (also when piped); never in a file, and never in JSON, SARIF or GitHub output."""
    if args.format != "text" or args.output:
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR", "") not in ("", "0", "false"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _no_file_checked(report, args: argparse.Namespace) -> str:  # type: ignore[no-untyped-def]
    reasons = [f"{f.location.path}: {f.message}" for f in report.findings if f.code == "CAL900"]
    message = "no file was checked"
    if reasons:
        message += " (" + "; ".join(reasons) + ")"
    else:
        message += f": no Python file or notebook under {', '.join(args.paths or ['.'])} (after excludes)"
    codes = [p for p in args.paths if p.upper() in valid_prefixes() and not os.path.lexists(p)]
    if codes:
        message += f"; {', '.join(codes)} looks like a rule code: write the codes of --select/--ignore without spaces (CAL001,CAL002)"
    return message


class _Stop(Exception):
    """Ends a check early with ``code``; whatever it had to say is printed already."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _check(args: argparse.Namespace) -> int:
    """``compile-ad-lint check``: each step below, in order; a step that ends the run raises ``_Stop``."""
    try:
        return _run_check(args)
    except _Stop as stop:
        return stop.code


def _run_check(args: argparse.Namespace) -> int:
    from .output import write_report

    started = time.perf_counter()
    _refuse_inapplicable_options(args)
    start = _config_start(args)
    config = _check_config(args, start)
    if args.show_settings:
        from .command.listing import show_settings

        return show_settings(start, config, args.config)
    if args.show_files:
        from .command.listing import show_files

        return show_files([p for p in args.paths if p != STDIN], config)
    if _only_excluded_files(args, config):
        if not args.quiet:  # the pre-commit hook with only excluded files staged: nothing to do, as Ruff
            print("compile-ad-lint: warning: no file to check: every path given is excluded", file=sys.stderr)
        return EXIT_CLEAN
    try:
        scope = build_scope(args, config)
    except ValueError as error:
        return _error(str(error))
    baseline = _load_baseline(args, config)
    analyzer, report = _analyze(args, config, scope)
    baseline_result = None
    if baseline is not None:  # on the whole analysis, so that fingerprints rank findings as when it was written
        baseline_result = baseline.filter(report.findings, reader(scope))
        report = replace(report, findings=baseline_result.findings)
    report = narrowed(report, scope)
    if scope.stdin_failure is not None and config.enables("CAL900"):
        report = replace(report, findings=(stdin_failure(scope), *report.findings))
    checked = _checked_count(scope, report)
    if baseline is not None:
        _note_baseline(args, baseline, baseline_result, report)
    if args.write_baseline:
        _write_baseline(args, report, reader(scope))
    fixed_lines: tuple[str, ...] = ()
    if args.fix or args.diff:
        report, fixed_lines = _fix(args, scope, report, analyzer, baseline, config)
    if args.add_noqa:
        from .command.fixing import run_add_noqa

        run_add_noqa(report, args.quiet, config.root or default_root(scope.paths))
        return EXIT_CLEAN if checked else _error(_no_file_checked(report, args))
    if args.confirm and checked:
        report = _confirmed(args, report, config)
    # The summary's time is the whole run's: configuration, discovery, analysis and confirm.
    report = replace(
        report, stats=replace(report.stats, files=checked, seconds=round(time.perf_counter() - started, 3))
    )
    if args.format in ("json", "sarif") or args.show_fixes:  # they carry (or show) each fix's edits
        report = _with_fixes(report, scope, analyzer)
    if not write_report(_rendered(args, report, scope, config, fixed_lines), args.output):
        return EXIT_ERROR
    if (args.devices or args.confirm_timeout or args.entry) and not args.confirm and not args.quiet:
        print(
            "compile-ad-lint: note: --devices, --confirm-timeout and --entry only apply with --confirm", file=sys.stderr
        )
    if not checked:
        return _error(_no_file_checked(report, args))
    if report.findings and not (args.exit_zero or args.write_baseline):
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _refuse_inapplicable_options(args: argparse.Namespace) -> None:
    """Text-only flags with another format, and fix options that contradict each other."""
    if args.format != "text":
        for flag, given in (
            ("--concise", args.concise),
            ("--show-source", args.show_source),
            ("--statistics", args.statistics),
        ):
            if given:
                raise _Stop(_error(f"{flag} applies to --format text, not {args.format}"))
    problem = _fix_options_problem(args)
    if problem is not None:
        raise _Stop(_error(problem))


def _config_start(args: argparse.Namespace) -> str:
    """Where the configuration is looked for: the first path, or the file stdin stands for."""
    if args.stdin_filename is not None and args.paths in ([], [STDIN]):
        return args.stdin_filename  # the configuration of the file stdin stands for
    return args.paths[0] if args.paths and args.paths[0] != STDIN else "."


def _check_config(args: argparse.Namespace, start: str) -> Config:
    """The configuration file's settings with the command line's over them, and the torch they speak for."""
    try:
        config = read_config_file(Path(args.config)) if args.config else load_config(Path(start))
        config = config.with_overrides(
            select=args.select,
            extend_select=args.extend_select or (),
            extend_ignore=args.ignore or (),
            per_file_ignores=args.per_file_ignores,
            exclude=args.exclude,
            extend_exclude=config.extend_exclude + (args.extend_exclude or ()),
            respect_gitignore=args.respect_gitignore,
            force_exclude=args.force_exclude,
            max_call_depth=args.max_call_depth,
            max_function_walks=args.max_function_walks,
        )
    except ConfigError as error:
        print(f"compile-ad-lint: configuration error: {error}", file=sys.stderr)
        raise _Stop(EXIT_ERROR) from None
    try:
        config = with_target(config, args.paths or ["."], setting=args.target_torch, source="--target-torch")
    except TargetError as error:
        raise _Stop(_error(f"--target-torch: {error}")) from None
    if not any(config.enables(row.code) for row in CODES):
        select = ",".join(sorted(config.select or ["ALL"]))
        raise _Stop(
            _error(f"no rule is enabled: select {select} with ignore {','.join(sorted(config.ignore))} leaves none")
        )
    return config


def _only_excluded_files(args: argparse.Namespace, config: Config) -> bool:
    """``--force-exclude`` and every path named is an excluded file."""
    named = [p for p in args.paths if p != STDIN]
    return bool(
        config.force_exclude and named and all(os.path.isfile(p) and config.excludes_file(Path(p)) for p in named)
    )


def _load_baseline(args: argparse.Namespace, config: Config):  # type: ignore[no-untyped-def]
    """The baseline whose findings are not reported (none while ``--write-baseline`` writes one)."""
    baseline_path = None if args.write_baseline else (Path(args.baseline) if args.baseline else config.baseline)
    if baseline_path is None:
        return None
    from .baseline import BaselineError, load_baseline

    try:
        return load_baseline(baseline_path)
    except BaselineError as error:
        raise _Stop(_error(str(error))) from None


def _analyze(args: argparse.Namespace, config: Config, scope: Scope):  # type: ignore[no-untyped-def]
    """The analyzer and its report on ``scope``; an internal error ends the run (exit 2)."""
    from .api import Analyzer

    progress = _Progress(sys.stderr) if sys.stderr.isatty() and not args.quiet else None
    analyzer = Analyzer(config, use_cache=not args.no_cache, jobs=args.jobs, progress=progress)
    try:
        report = analyzer.check(scope.paths, sources=scope.sources or None)
    except Exception:
        print("compile-ad-lint: internal error, please report it:", file=sys.stderr)
        traceback.print_exc()
        raise _Stop(EXIT_ERROR) from None
    finally:
        if progress is not None:
            progress.close()
    return analyzer, report


def _checked_count(scope: Scope, report) -> int:  # type: ignore[no-untyped-def]
    """How many files the run checked: the scope's, and with ``--dependents`` the files whose findings it reports."""
    checked = scope.checked if scope.checked is not None else report.stats.files
    if scope.related_too and scope.keep is not None:  # --dependents: files whose findings it reports were checked too
        reported = {f.location.file for f in report.findings if f.location.path not in scope.problems}
        checked = len(scope.keep | reported)
    return checked


def _note_baseline(args: argparse.Namespace, baseline, baseline_result, report) -> None:  # type: ignore[no-untyped-def]
    """Say how many findings the baseline hid and how many of its entries no longer occur."""
    analyzed_files = {path for path, _ in report.digests}
    gone = (
        [e for e in baseline_result.gone if str(real_path(baseline.file_of(e))) in analyzed_files]
        if baseline_result
        else []
    )  # gone entries: only those of files this run analyzed
    if not args.quiet and baseline_result is not None:
        note = f"compile-ad-lint: note: {_count(baseline_result.matched, 'finding')} in the baseline {baseline.path} not reported"
        note += f"; {_count(len(gone), 'baseline entry', 'baseline entries')} no longer {'occurs' if len(gone) == 1 else 'occur'}"
        print(note, file=sys.stderr)


def _write_baseline(args: argparse.Namespace, report, read) -> None:  # type: ignore[no-untyped-def]
    from .baseline import BaselineError, write_baseline

    try:
        written = write_baseline(Path(args.write_baseline), report.findings, read)
    except BaselineError as error:
        raise _Stop(_error(str(error))) from None
    if not args.quiet:
        print(
            f"compile-ad-lint: wrote {_count(written, 'finding')} to the baseline {args.write_baseline}",
            file=sys.stderr,
        )


def _fix(args: argparse.Namespace, scope: Scope, report, analyzer, baseline, config: Config):  # type: ignore[no-untyped-def]
    """``--fix`` / ``--diff``: the report after the fixes, and the lines that say what they did."""
    from .command.fixing import Fixed, run_fix
    from .output import write_report

    def reanalyze(contents):  # type: ignore[no-untyped-def]
        # Fixed contents are a function of the files and the fixes: their results may be kept.
        again = analyzer.check(scope.paths, sources={**scope.sources, **contents} or None, derived=not scope.sources)
        if baseline is not None:
            again = replace(again, findings=baseline.filter(again.findings, reader(scope, contents)).findings)
        return narrowed(again, scope)

    root = config.root or default_root(scope.paths)
    fixed = run_fix(args, scope, report, reanalyze, write_report, root, analyzer.cache_for(scope.paths))
    if not isinstance(fixed, Fixed):
        raise _Stop(fixed)
    return fixed.report, fixed.lines


def _confirmed(args: argparse.Namespace, report, config: Config):  # type: ignore[no-untyped-def]
    """``--confirm``: the report with the runtime verdicts attached; an error ends the run (exit 2)."""
    try:
        from .cli_confirm import attach_check_verdicts

        return attach_check_verdicts(report, config, args)
    except ValueError as error:  # bad --devices / --entry / entry-points
        print(f"compile-ad-lint: {error}", file=sys.stderr)
        raise _Stop(EXIT_ERROR) from None
    except Exception:
        print("compile-ad-lint: internal error in confirm mode, please report it:", file=sys.stderr)
        traceback.print_exc()
        raise _Stop(EXIT_ERROR) from None


def _with_fixes(found, scope: Scope, analyzer):  # type: ignore[no-untyped-def]
    """``found`` with its fixes' edits (what marks a finding fixable, and JSON/SARIF carry)."""
    from .fixes import Sources, resolve

    if not any(f.fixes for f in found.findings):
        return found
    sources = Sources(scope.sources, dict(found.digests), cache=analyzer.cache_for(scope.paths))
    return replace(found, findings=resolve(found.findings, sources, jobs=analyzer.jobs))


def _rendered(args: argparse.Namespace, report, scope: Scope, config: Config, fixed_lines: tuple[str, ...]) -> str:  # type: ignore[no-untyped-def]
    """The report in the chosen format (what ``--fix`` did goes to stderr for the other formats)."""
    from .output import render as render_format
    from .output.text import TextOptions
    from .output.text import render as render_text

    if args.format == "text":
        options = TextOptions(
            concise=concise_report(args),
            show_source=args.show_source,
            statistics=args.statistics,
            quiet=args.quiet,
            color=_use_color(args, sys.stdout),
            source_line=stdin_lines(scope) if scope.stdin is not None else None,
            unsafe_fixes=args.unsafe_fixes,
            fix_preview=_fix_preview(scope) if args.show_fixes and not args.fix else None,
            fixed=fixed_lines,
        )
        return render_text(report, options)
    rendered = render_format(args.format, report, docs_url=config.rule_docs_url)
    for line in fixed_lines if not args.quiet else ():
        print(f"compile-ad-lint: {line}", file=sys.stderr)
    return rendered


def _fix_preview(scope: Scope):  # type: ignore[no-untyped-def]
    """``--show-fixes`` without ``--fix``: each fix's change, read from stdin's text or the disk."""
    from .fixes.apply import fix_preview

    read = reader(scope)
    return lambda finding: fix_preview(finding, read)


def _count(number: int, noun: str, plural: str | None = None) -> str:
    return f"{number} {noun if number == 1 else (plural or noun + 's')}"


def _fix_options_problem(args: argparse.Namespace) -> str | None:
    """Combinations of the fix and baseline options that make no sense (a usage error)."""
    writes = [
        flag for flag, given in (("--fix", args.fix), ("--diff", args.diff), ("--add-noqa", args.add_noqa)) if given
    ]
    if args.add_noqa and (args.fix or args.diff):
        return "--add-noqa cannot be combined with --fix or --diff: run them one after the other"
    if args.write_baseline and writes:
        return f"--write-baseline records findings; it cannot be combined with {writes[0]}"
    stdin = args.paths == [STDIN] or (not args.paths and args.stdin_filename is not None)
    if stdin and (args.add_noqa or args.write_baseline):
        return f"{'--add-noqa' if args.add_noqa else '--write-baseline'} works on files on disk; it cannot be used with stdin"
    if stdin and args.fix and args.format != "text":
        return "--fix on stdin prints the fixed source; the report of what remains is text (on stderr)"
    if args.diff and args.format != "text":
        return f"--diff prints a diff, not a {args.format} report"
    if args.add_noqa and args.confirm:
        return "--add-noqa cannot be combined with --confirm"
    return None
