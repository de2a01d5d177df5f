"""The command line of confirm mode: ``compile-ad-lint confirm [PATHS] -- COMMAND ...`` (verdicts from
the user's own run) and ``check --confirm`` (verdicts from entry points and probes).

Both import the confirm package only here; it imports torch only in the processes it starts.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any

from .config import load_config, read_config_file
from .core.settings import ConfigError
from .core.torch_versions import Series, TargetError, TorchTarget
from .project import default_root
from .target import with_target

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
USAGE = "compile-ad-lint confirm [PATH...] [options] -- COMMAND [ARG...]   (e.g. -- python train.py --max_iters=2)"


def attach_check_verdicts(report: Any, config: Any, args: argparse.Namespace) -> Any:
    """``check --confirm``: attach verdicts from entry points and probes.

    Notebook findings get ``skipped``: confirm mode runs modules and entry points, not notebooks.
    """
    from .confirm import DEFAULT_TIMEOUT, ConfirmOptions, confirm_findings, parse_devices, parse_entry
    from .confirm.verdicts import plain
    from .core.findings import Verdict
    from .core.paths import is_notebook

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
    in_notebook = [is_notebook(f.location.path) for f in report.findings]
    confirmed = iter(confirm_findings([f for f, skip in zip(report.findings, in_notebook) if not skip], options))
    findings = []
    for finding, skip in zip(report.findings, in_notebook):
        if skip:
            note = plain(Verdict.SKIPPED, "confirm mode does not run notebooks")
            finding = finding.with_confirm({device: note for device in devices or ["cpu"]})
        else:
            finding = next(confirmed)
        findings.append(finding)
    warning = torch_mismatch(findings, config.torch)
    if warning is not None:
        print(f"compile-ad-lint: confirm: warning: {warning}", file=sys.stderr)
    return replace(report, findings=tuple(findings))


def torch_mismatch(findings: Any, target: TorchTarget | None) -> str | None:
    """Why the verdicts may not speak for the target: the runs used a torch of another series."""
    if target is None:
        return None
    ran = sorted(
        {result.torch_version for finding in findings for _, result in finding.confirm or () if result.torch_version}
    )
    other = [version for version in ran if Series.parse(version) not in target.series]
    if not other:
        return None
    return (
        f"the runs used torch {', '.join(other)}, but the findings speak for {target.describe()}: the verdicts "
        f"show what torch {', '.join(other)} does"
    )


def run_confirm(args: argparse.Namespace, command: list[str]) -> int:
    """Check ``args.paths``, run ``command`` under instrumentation, report the findings with verdicts."""
    from .api import Analyzer
    from .confirm.command import DEFAULT_MAX_SECONDS, CommandOptions, confirm_command
    from .core.findings import Verdict
    from .output import FORMATS, write_report
    from .output.text import TextOptions
    from .output.text import render as render_text
    from .rules import ALL_RULES

    started = time.perf_counter()
    if not command:
        print(f"compile-ad-lint: error: confirm needs the command to run after --\nusage: {USAGE}", file=sys.stderr)
        return EXIT_ERROR
    paths = list(args.paths) or ["."]
    try:
        config = read_config_file(Path(args.config)) if args.config else load_config(Path(paths[0]))
        config = config.with_overrides(select=args.select, extend_ignore=args.ignore or ())
    except ConfigError as error:
        print(f"compile-ad-lint: configuration error: {error}", file=sys.stderr)
        return EXIT_ERROR
    try:
        config = with_target(config, paths, setting=args.target_torch, source="--target-torch")
    except TargetError as error:
        print(f"compile-ad-lint: error: --target-torch: {error}", file=sys.stderr)
        return EXIT_ERROR
    if not any(config.enables(rule.code) for rule in ALL_RULES):
        print("compile-ad-lint: error: no rule is enabled", file=sys.stderr)
        return EXIT_ERROR
    try:
        report = Analyzer(config, use_cache=not args.no_cache).check(paths)
    except Exception:
        print("compile-ad-lint: internal error, please report it:", file=sys.stderr)
        traceback.print_exc()
        return EXIT_ERROR
    if not report.stats.files:
        print(f"compile-ad-lint: error: no Python file under {', '.join(paths)} was checked", file=sys.stderr)
        return EXIT_ERROR
    shown = shlex.join(command)
    if not any(f.evidence is not None and f.code in ("CAL001", "CAL002", "CAL004", "CAL005") for f in report.findings):
        if not args.quiet:
            print(
                f"compile-ad-lint: confirm: no finding to confirm in {', '.join(paths)}; `{shown}` was not run",
                file=sys.stderr,
            )
    else:
        if not args.quiet:
            print(f"compile-ad-lint: confirm: running `{shown}` under instrumentation", file=sys.stderr, flush=True)
        options = CommandOptions(
            command,
            max_seconds=args.max_seconds or DEFAULT_MAX_SECONDS,
            until_exit=args.until_exit,
            echo=None if args.quiet else sys.stderr,
        )
        try:
            run = confirm_command(report.findings, options)
        except Exception:
            print("compile-ad-lint: internal error in confirm mode, please report it:", file=sys.stderr)
            traceback.print_exc()
            return EXIT_ERROR
        report = replace(report, findings=tuple(run.findings))
        warning = torch_mismatch(report.findings, config.torch)
        if warning is not None:
            print(f"compile-ad-lint: confirm: warning: {warning}", file=sys.stderr)
        if not args.quiet:
            counts: dict[str, int] = {}
            for finding in run.findings:
                for _, result in finding.confirm or ():
                    counts[result.verdict.value] = counts.get(result.verdict.value, 0) + 1
            tally = ", ".join(f"{count} {name}" for name, count in sorted(counts.items()))
            print(
                f"compile-ad-lint: confirm: `{shown}` ran {run.seconds:.1f} s ({run.ended}); {tally}", file=sys.stderr
            )
            for problem in run.problems:
                print(f"compile-ad-lint: confirm: {problem}", file=sys.stderr)
            if run.returncode not in (0, None) and not any(
                r.verdict is not Verdict.NOT_REACHED for f in run.findings for _, r in f.confirm or ()
            ):
                for line in run.output_tail[-5:]:
                    print(f"    {line}", file=sys.stderr)
    report = replace(report, stats=replace(report.stats, seconds=round(time.perf_counter() - started, 3)))
    if args.format == "text":
        rendered = render_text(report, TextOptions(quiet=args.quiet))
    else:
        rendered = FORMATS[args.format](report)
    if not write_report(rendered, args.output):
        return EXIT_ERROR
    return EXIT_FINDINGS if report.findings and not args.exit_zero else EXIT_CLEAN
