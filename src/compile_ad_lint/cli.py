"""``compile-ad-lint``: a thin command line over ``compile_ad_lint.api``.

Exit codes: 0 no findings, 1 findings, 2 usage, configuration or internal error.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path
from typing import Sequence, TextIO

from . import __version__
from .config import ConfigError, load_config, parse_codes, parse_selection, read_config_file
from .project import default_root

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits with 2 too; keep its message format
        self.print_usage(sys.stderr)
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="compile-ad-lint", description="Find autograd hazards that torch.compile introduces silently.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    check = commands.add_parser("check", help="analyze files and directories")
    check.add_argument("paths", nargs="*", default=["."], help="files or directories (default: .)")
    check.add_argument("--select", help="comma-separated codes or prefixes to report (default: all)")
    check.add_argument("--ignore", help="comma-separated codes or prefixes to skip")
    check.add_argument("--format", choices=_format_names(), default="text")
    check.add_argument("--output", "-o", help="write the report to FILE instead of stdout")
    check.add_argument("--no-cache", action="store_true", help="neither read nor write the summary cache")
    check.add_argument("--jobs", "-j", type=_positive_int, help="worker processes (default: CPU count); with --confirm also the runs at a time (default: CPU count, at most 4)")
    check.add_argument("--max-call-depth", type=_depth, help="how many calls deep to follow from each anchor")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("--config", help="use this pyproject.toml instead of the nearest one")
    confirm = check.add_argument_group("confirm mode (runs your code)")
    confirm.add_argument("--confirm", action="store_true", help="run each finding's code eagerly and compiled and attach a verdict")
    confirm.add_argument("--devices", help="comma-separated devices for --confirm: cpu,cuda (default: cpu, plus cuda if available)")
    confirm.add_argument("--confirm-timeout", type=_seconds, default=None, metavar="SECONDS", help="per-run timeout for --confirm (default: 300)")
    confirm.add_argument("--entry", action="append", default=[], metavar="MODULE:FUNCTION", help="entry point for --confirm (repeatable)")

    cache = commands.add_parser("cache", help="manage the summary cache")
    cache.add_argument("action", choices=["clean"], help="clean: delete the cache directory")
    cache.add_argument("path", nargs="?", default=".", help="a path inside the project (default: .)")

    commands.add_parser("rules", help="list the rules")
    explain = commands.add_parser("explain", help="print a rule's documentation")
    explain.add_argument("code", help="a rule code such as CAL001, or its name")
    lsp = commands.add_parser("lsp", help="run the language server on stdin/stdout (needs pygls)")
    lsp.add_argument("--debounce-ms", type=int, default=300, help="wait this long after an edit before analyzing (default: 300)")
    return parser


def _format_names() -> list[str]:
    from .output import FORMATS

    return sorted(FORMATS)


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


def _depth(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 64:
        raise argparse.ArgumentTypeError("must be from 0 to 64")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
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


def _clean_cache(path: str) -> int:
    from . import cache

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
        print(f"{rule.code}  {rule.name:34s} {rule.summary}")
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
            return EXIT_CLEAN
    print(f"compile-ad-lint: unknown rule {code!r}; `compile-ad-lint rules` lists them", file=sys.stderr)
    return EXIT_ERROR


def _confirm(report, config, args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """Attach confirm verdicts (the confirm package imports torch only in the subprocesses it starts)."""
    from dataclasses import replace

    from .confirm import DEFAULT_TIMEOUT, ConfirmOptions, confirm_findings, parse_devices, parse_entry

    devices = parse_devices(args.devices)
    entries = [parse_entry(text, Path.cwd()) for text in args.entry]
    entries += [parse_entry(text, config.root) for text in config.entry_points]
    root = config.root or default_root(args.paths)
    options = ConfirmOptions(
        devices=devices,
        timeout=args.confirm_timeout or DEFAULT_TIMEOUT,
        entries=entries,
        project_root=root.resolve(),
        use_cache=not args.no_cache,
        jobs=args.jobs,
        log=lambda message: print(message, file=sys.stderr, flush=True),
    )
    return replace(report, findings=tuple(confirm_findings(report.findings, options)))


def _check(args: argparse.Namespace) -> int:
    from .api import Analyzer
    from .output import FORMATS

    try:
        config = read_config_file(Path(args.config)) if args.config else load_config(Path(args.paths[0]))
        config = config.with_overrides(
            select=parse_selection(args.select, "--select", "select") if args.select is not None else None,
            ignore=config.ignore | parse_codes(args.ignore, "--ignore", "ignore") if args.ignore else None,
            max_call_depth=args.max_call_depth,
        )
    except ConfigError as error:
        print(f"compile-ad-lint: configuration error: {error}", file=sys.stderr)
        return EXIT_ERROR
    progress = _Progress(sys.stderr) if sys.stderr.isatty() else None
    analyzer = Analyzer(config, use_cache=not args.no_cache, jobs=args.jobs, progress=progress)
    try:
        report = analyzer.check(args.paths)
    except Exception:  # noqa: BLE001 - an internal error must still exit 2 with a usable message
        print("compile-ad-lint: internal error, please report it:", file=sys.stderr)
        traceback.print_exc()
        return EXIT_ERROR
    finally:
        if progress is not None:
            progress.close()
    if args.confirm:
        try:
            report = _confirm(report, config, args)
        except ValueError as error:  # bad --devices / --entry / entry-points
            print(f"compile-ad-lint: {error}", file=sys.stderr)
            return EXIT_ERROR
        except Exception:  # noqa: BLE001
            print("compile-ad-lint: internal error in confirm mode, please report it:", file=sys.stderr)
            traceback.print_exc()
            return EXIT_ERROR
    # File names that are not valid UTF-8 reach us as surrogate escapes: show them escaped.
    rendered = FORMATS[args.format](report).encode("utf-8", "backslashreplace").decode("utf-8")
    if args.output:
        try:
            Path(args.output).write_text(rendered, encoding="utf-8")
        except OSError as error:
            print(f"compile-ad-lint: cannot write {args.output}: {error.strerror}", file=sys.stderr)
            return EXIT_ERROR
    else:
        sys.stdout.write(rendered)
    if (args.devices or args.confirm_timeout or args.entry) and not args.confirm:
        print("compile-ad-lint: note: --devices, --confirm-timeout and --entry only apply with --confirm", file=sys.stderr)
    if report.findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN
