#!/usr/bin/env python
"""Benchmark of compile-ad-lint against TorchFix and a LibCST parse-only pass, on the same files in
one run, cold and warm cache (parsing every file with LibCST cannot be fast: the reference says by how much).

One run prepares the corpora in a temporary folder (the installed torch package, copies of the
fixtures, a generated project with the shape of a training framework, and any project given with
``--corpus DIR``), measures every tool on the same files as separate processes (wall time, CPU time
of the process tree, peak memory of the process tree), times flake8 and the language server on the
project corpora, prints tables, ratios, the growth check and the targets of issue 12 with
met / not met, checks that our findings are identical across cold, warm, touched, one-job,
parallel, flake8 and language-server runs, and exits 1 if they are not. See bench/README.md.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.metadata
import importlib.util
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

import compile_ad_lint

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:  # the smoke test loads this file by path
    sys.path.insert(0, str(BENCH_DIR))

import examples_corpus  # noqa: E402  (bench/examples_corpus.py)
import framework_corpus  # noqa: E402  (bench/framework_corpus.py)
import lsp_client  # noqa: E402  (bench/lsp_client.py)
from bench_common import (  # noqa: E402
    ANCHOR_MARKER,
    FIXTURES,
    FLAKE8_AGAIN,
    FLAKE8_COLD,
    FLAKE8_FILE,
    FLAKE8_WITHOUT_CAL,
    LSP_COLD,
    LSP_COLD_AT_ONCE,
    LSP_SESSIONS,
    LSP_WARM,
    LSP_WARM_AT_ONCE,
    OURS_COLD,
    OURS_COLD_J1,
    OURS_COLD_TEXT,
    OURS_DIFF_WARM,
    OURS_TOUCHED,
    OURS_WARM,
    OURS_WARM_TEXT,
    PARSE_1,
    PARSE_2,
    TORCHFIX,
)
from bench_compare import CorpusResult, compare_findings, describe_difference, marked_mismatches, same_findings, touch  # noqa: E402
from bench_corpora import (  # noqa: E402
    Corpus,
    prepare_dir_corpus,
    prepare_examples_corpus,
    prepare_fixtures_corpus,
    prepare_framework_corpus,
    prepare_torch_corpus,
    replicate,
)
from bench_measure import measure  # noqa: E402
from bench_rows import Row, format_ratios, format_table, ratios  # noqa: E402
from bench_scaling import format_lsp, format_scaling, scaling  # noqa: E402
from bench_targets import format_targets, targets  # noqa: E402
from bench_tools import (  # noqa: E402
    Run,
    as_flake8,
    choose_lsp_file,
    clear_cache,
    find_torchfix,
    install_torchfix,
    parse_flake8,
    relative_to_root,
    run_flake8,
    run_lsp,
    run_ours,
    run_ours_diff,
    run_ours_text,
    run_parse_only,
    run_torchfix,
    safe_fix_files,
    torchfix_version,
)

# -- the measurements on one corpus ------------------------------------------------------------


def measure_corpus(
    corpus: Corpus,
    *,
    repeat: int = 1,
    torchfix: str | None = None,
    parse_only: bool = True,
    parse_two: bool = True,
    flake8: bool = True,
    lsp: bool = True,
    lsp_edits: int = 10,
    lsp_debounce_ms: int = 300,
    lsp_pause_s: float = 0.0,
    lsp_timeout: float = 1800.0,
    lsp_sessions: Sequence[tuple[str, bool, bool]] = LSP_SESSIONS,
    jobs1: bool = True,
    diff: bool = True,
    log: Callable[[str], None] = lambda s: None,
) -> CorpusResult:
    """Every row of one corpus; ``--diff``, flake8 and the language server only where ``corpus.project``."""
    rows: list[Row] = []
    labelled: list[tuple[str, list]] = []
    mismatches: list[str] = []
    errors: list[str] = []
    lsp_results: dict[str, dict] = {}
    interim: list[str] = []  # language-server publishes before a project pass that differ from the CLI

    def ours_row(name: str, make: Callable[[int], Run]) -> Row:
        runs = []
        for i in range(repeat):
            log(f"[{corpus.name}] {name} ({i + 1}/{repeat}) ...")
            run = make(i)
            runs.append(run)
            labelled.append((f"{name} #{i + 1}", run.findings or []))
            log(
                f"    {run.measurement.wall_s:.2f} s wall, {run.measurement.cpu_s:.2f} s CPU, {run.measurement.peak_mb:.0f} MB, stats {run.stats}"
            )
        row = Row(name, runs)
        rows.append(row)
        return row

    def other_row(name: str, make: Callable[[int], Run]) -> Row:
        runs = []
        for i in range(repeat):
            log(f"[{corpus.name}] {name} ({i + 1}/{repeat}) ...")
            run = make(i)
            runs.append(run)
            log(
                f"    {run.measurement.wall_s:.2f} s wall, {run.measurement.cpu_s:.2f} s CPU, {run.measurement.peak_mb:.0f} MB"
            )
        row = Row(name, runs)
        rows.append(row)
        return row

    project = corpus.project
    cold = ours_row(OURS_COLD, lambda i: run_ours(corpus, cold=True))
    reference = cold.runs[0].findings or []
    ours_row(OURS_WARM, lambda i: run_ours(corpus, cold=False))
    text = other_row(OURS_WARM_TEXT, lambda i: run_ours_text(corpus))
    if text.runs[-1].findings_count is not None and text.runs[-1].findings_count != len(reference):
        mismatches.append(
            f"{OURS_WARM_TEXT}: {text.runs[-1].findings_count} findings in its summary line vs {len(reference)} in {OURS_COLD}"
        )
    lsp_file = choose_lsp_file(corpus, reference) if project else None
    flake8_reference = as_flake8(reference, corpus.cwd, corpus.directory) if project else []

    def flake8_row(name: str, make: Callable[[int], Run], want: list) -> None:
        try:
            row = other_row(name, make)
        except (RuntimeError, OSError) as error:
            errors.append(f"{name}: {error}")
            return
        for i, run in enumerate(row.runs):
            mismatches.extend(
                same_findings(f"{name} #{i + 1}", run.findings or [], want, f"{OURS_COLD} (as flake8 shows them)")
            )

    if project and flake8 and lsp_file is not None:
        shown = relative_to_root(lsp_file, corpus.directory)
        want = as_flake8(reference, corpus.cwd, corpus.directory, only=lsp_file)

        def flake8_file(i: int) -> Run:
            if i:  # every repetition right after a warm CLI run
                run_ours(corpus, cold=False)
            return run_flake8(corpus, [shown])

        flake8_row(FLAKE8_FILE, flake8_file, want)
    if project and diff:
        mismatches.extend(diff_row(corpus, reference, other_row, errors))
    anchor = corpus.anchor_file
    if anchor is not None:
        original = anchor.read_bytes()
        try:

            def touched(i: int) -> Run:
                touch(anchor, i)
                return run_ours(corpus, cold=False)

            ours_row(OURS_TOUCHED, touched)
        finally:
            anchor.write_bytes(original)
    else:
        log(f"[{corpus.name}] no file contains {ANCHOR_MARKER.decode()}; skipping the touched run")

    def cold_text(i: int) -> Run:
        clear_cache(corpus)
        return run_ours_text(corpus)

    cold_text_row = other_row(OURS_COLD_TEXT, cold_text)
    if cold_text_row.runs[-1].findings_count not in (None, len(reference)):
        mismatches.append(
            f"{OURS_COLD_TEXT}: {cold_text_row.runs[-1].findings_count} findings in its summary line vs {len(reference)} in {OURS_COLD}"
        )
    if jobs1:
        ours_row(OURS_COLD_J1, lambda i: run_ours(corpus, cold=True, jobs=1))

    if project and flake8:

        def flake8_cold(i: int) -> Run:
            clear_cache(corpus)
            return run_flake8(corpus)

        flake8_row(FLAKE8_COLD, flake8_cold, flake8_reference)
        flake8_row(FLAKE8_AGAIN, lambda i: run_flake8(corpus), flake8_reference)
        flake8_row(FLAKE8_WITHOUT_CAL, lambda i: run_flake8(corpus, with_ours=False), [])

    if project and lsp and lsp_file is not None:
        keys = lsp_client.finding_keys(reference, corpus.directory, corpus.cwd, lsp_file)
        for name, warm, ready in lsp_sessions:
            log(
                f"[{corpus.name}] {name}: open {relative_to_root(lsp_file, corpus.directory)}, {lsp_edits} edits, debounce {lsp_debounce_ms} ms"
                + (", edits once the server is idle" if ready else ", edits at once after the open")
                + (f", then {lsp_pause_s:g} s" if lsp_pause_s else "")
                + " ..."
            )
            warm_cli = None
            if not warm:
                clear_cache(corpus)
            else:
                warm_json = run_ours(corpus, cold=False)
                labelled.append((f"ours warm before {name}", warm_json.findings or []))
                warm_cli = run_ours_text(corpus)
            try:
                session = run_lsp(
                    corpus,
                    lsp_file,
                    edits=lsp_edits,
                    debounce_ms=lsp_debounce_ms,
                    ready=ready,
                    pause_s=lsp_pause_s,
                    timeout=lsp_timeout,
                )
            except (lsp_client.LspError, OSError, ValueError) as error:
                errors.append(f"{name}: {error}")
                log(f"    failed: {error}")
                continue
            summary = session.summary()
            if warm_cli is not None:
                summary["warm_cli_wall_s"] = warm_cli.measurement.wall_s  # text report
                summary["warm_cli_json_wall_s"] = warm_json.measurement.wall_s
            lsp_results[name] = summary
            log(
                f"    open {session.open_s:.3f} s (spawn to diagnostics {session.spawn_to_diagnostics_s:.3f} s), edits p50 {session.edit_p50_s} s, max {session.edit_max_s} s beyond the debounce"
            )
            # What the server shows once its project pass after the last edit ended must be the
            # CLI's (the pass published nothing new: the last edit's diagnostics stand). The
            # publishes before a project pass (the open files' own entry points) are reported.
            settled = session.settled_diagnostics
            if settled is None:
                settled = session.edit_diagnostics[-1] if session.edit_diagnostics else session.open_diagnostics
            got = lsp_client.diagnostic_keys(settled, corpus.directory)
            if got != keys:
                mismatches.append(
                    f"{name}, after the project pass: {describe_difference(got, keys, f'{OURS_COLD} (this file)')}"
                )
            publishes = [("didOpen", session.open_diagnostics)] + [
                (f"edit {k}", d) for k, d in enumerate(session.edit_diagnostics, start=1)
            ]
            groups: dict[str, list[str]] = {}
            for when, diagnostics in publishes:
                got = lsp_client.diagnostic_keys(diagnostics, corpus.directory)
                if got != keys:
                    groups.setdefault(describe_difference(got, keys, f"{OURS_COLD} (this file)"), []).append(when)
            for difference, whens in groups.items():
                interim.append(f"{name}, after {', '.join(whens)}: {difference}")

    if torchfix:
        other_row(TORCHFIX, lambda i: run_torchfix(corpus, torchfix))
    if parse_only:
        other_row(PARSE_1, lambda i: run_parse_only(corpus, 1))
        if parse_two:
            other_row(PARSE_2, lambda i: run_parse_only(corpus, 2))
    clear_cache(corpus)
    if corpus.expected is not None:
        mismatches.extend(marked_mismatches(corpus, reference))
    mismatches = compare_findings(labelled) + mismatches
    shown_file = relative_to_root(lsp_file, corpus.directory) if lsp_file is not None else None
    return CorpusResult(corpus, rows, not mismatches, mismatches, lsp_results, shown_file, errors, interim)


def diff_row(
    corpus: Corpus, reference: Sequence[dict], other_row: Callable[[str, Callable[[int], Run]], Row], errors: list[str]
) -> list[str]:
    """The ``--diff`` row on a warm cache, and how its diff compares with the cold JSON run's fixes:
    it changes only files that the safe fixes edit, something exactly when there is a safe fix, and
    the same files at every repetition."""
    try:
        row = other_row(OURS_DIFF_WARM, lambda i: run_ours_diff(corpus))
    except (RuntimeError, OSError) as error:
        errors.append(f"{OURS_DIFF_WARM}: {error}")
        return []
    want = safe_fix_files(reference)
    problems = []
    for i, run in enumerate(row.runs):
        got = set(run.diff_files or ())
        if not got <= want or bool(got) != bool(want):
            shown = lambda paths: ", ".join(sorted(paths)[:4]) + (" ..." if len(paths) > 4 else "") or "nothing"
            problems.append(
                f"{OURS_DIFF_WARM} #{i + 1}: its diff changes {len(got)} files ({shown(got - want) if got - want else shown(got)}),"
                f" the safe fixes of {OURS_COLD} edit {len(want)} ({shown(want)})"
            )
    if len({tuple(run.diff_files or ()) for run in row.runs}) > 1:
        problems.append(f"{OURS_DIFF_WARM}: the files its diff changes differ between repetitions")
    return problems


# -- main ------------------------------------------------------------------------------------


NAMED_CORPORA = ("fixtures", "framework", "examples", "torch")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="skip TorchFix, the 4x scale, the 2-process parse pass and the language-server sessions that edit at once",
    )
    parser.add_argument("--skip-torchfix", action="store_true", help="do not run TorchFix")
    parser.add_argument("--skip-flake8", action="store_true", help="no flake8 rows on the project corpora")
    parser.add_argument("--skip-lsp", action="store_true", help="no language-server sessions on the project corpora")
    parser.add_argument("--output", help="write machine-readable results (JSON) to this file")
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs of each measurement; the tables show medians (default 1)"
    )
    parser.add_argument(
        "--corpus",
        action="append",
        metavar="all|torch|fixtures|framework|examples|DIR",
        help="a corpus to measure (repeatable; default all = fixtures, framework, examples and torch). DIR: any project directory, "
        "measured on a copy like the framework corpus (write ./torch for a folder named like a corpus)",
    )
    parser.add_argument(
        "--fixtures-copies", type=int, default=20, help="copies of fixtures/ in the small corpus (default 20)"
    )
    parser.add_argument(
        "--examples",
        type=int,
        default=examples_corpus.DEFAULT_EXAMPLES,
        help=f"training-example scripts in the examples corpus at 1x (default {examples_corpus.DEFAULT_EXAMPLES})",
    )
    parser.add_argument(
        "--scales",
        default=None,
        help="comma-separated replication factors for the growth check, 1 first (default 1,2,4; --quick 1,2)",
    )
    parser.add_argument(
        "--scaling",
        default="torch,framework,examples",
        help="comma-separated corpora the growth check runs on (default torch,framework,examples; '' for none)",
    )
    parser.add_argument(
        "--lsp-edits", type=int, default=10, help="one-line edits per language-server session (default 10)"
    )
    parser.add_argument(
        "--lsp-debounce-ms",
        type=int,
        default=300,
        help="the server's --debounce-ms, subtracted from each edit's latency (default 300)",
    )
    parser.add_argument(
        "--lsp-pause-s",
        type=float,
        default=0.0,
        help="seconds from the open's diagnostics to the first edit, a user reading the file (default 0: at once)",
    )
    parser.add_argument(
        "--lsp-timeout",
        type=float,
        default=1800.0,
        help="seconds to wait for any one publishDiagnostics (default 1800)",
    )
    parser.add_argument(
        "--lsp-file",
        help="for --corpus DIR: the file (relative to DIR) to open in the language server and check with flake8 (default: the file with most findings)",
    )
    parser.add_argument(
        "--torchfix",
        help="the torchfix executable (default: ~/.cache/compile-ad-lint-bench/torchfix-venv, installed on first use)",
    )
    parser.add_argument("--workdir", help="prepare corpora here instead of a fresh temporary folder (kept afterwards)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    return parser


def selected_corpora(values: Sequence[str] | None) -> list[str]:
    """Corpus names and directories in run order: fixtures, framework, examples, directories, torch."""
    chosen: list[str] = []
    for value in values or ["all"]:
        for item in NAMED_CORPORA if value == "all" else [value]:
            if item not in chosen:
                chosen.append(item)
    named = [n for n in ("fixtures", "framework", "examples") if n in chosen]
    directories = [c for c in chosen if c not in NAMED_CORPORA]
    for directory in directories:
        if not Path(directory).is_dir():
            raise SystemExit(
                f"run_bench: --corpus {directory}: not a corpus name ({', '.join(('all',) + NAMED_CORPORA)}) nor a directory"
            )
    return named + directories + (["torch"] if "torch" in chosen else [])


def compile_bytecode() -> str:
    """Compile the package's bytecode before anything is measured, as ``pip install`` does: an
    editable install on a machine that sets ``PYTHONDONTWRITEBYTECODE`` (this one does) compiles
    every module from source in every process, a cost a user's installed copy never pays."""
    package = Path(compile_ad_lint.__file__).parent
    compiled = compileall.compile_dir(package, quiet=1)
    return f"{package}: {'compiled' if compiled else 'compile failed'}"


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.repeat < 1:
        raise SystemExit("run_bench: --repeat must be at least 1")
    if args.examples < len(examples_corpus.tasks()):
        raise SystemExit(f"run_bench: --examples must be at least the number of tasks, {len(examples_corpus.tasks())}")
    log = lambda message: print(message, file=sys.stderr, flush=True)
    scales = [int(s) for s in (args.scales or ("1,2" if args.quick else "1,2,4")).split(",") if s.strip()]
    if scales and scales[0] != 1:
        raise SystemExit("run_bench: --scales must start with 1")
    scaling_corpora = {c.strip() for c in args.scaling.split(",") if c.strip()}
    wanted = selected_corpora(args.corpus)

    torchfix = None
    if not (args.quick or args.skip_torchfix):
        torchfix = find_torchfix(args.torchfix) or install_torchfix()

    workdir = Path(args.workdir).resolve() if args.workdir else Path(tempfile.mkdtemp(prefix="cal-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    bytecode = compile_bytecode()
    results: dict = {
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_avg_start": os.getloadavg(),
            "bytecode": bytecode,
        },
        "versions": {
            "compile-ad-lint": importlib.metadata.version("compile-ad-lint"),
            "libcst": importlib.metadata.version("libcst"),
            "torch": importlib.metadata.version("torch") if importlib.util.find_spec("torch") else None,
            "torchfix": torchfix_version(torchfix) if torchfix else None,
            "flake8": _version("flake8"),
            "pygls": _version("pygls"),
        },
        "options": {
            "quick": args.quick,
            "skip_torchfix": args.skip_torchfix,
            "skip_flake8": args.skip_flake8,
            "skip_lsp": args.skip_lsp,
            "repeat": args.repeat,
            "scales": scales,
            "scaling": sorted(scaling_corpora),
            "fixtures_copies": args.fixtures_copies,
            "examples": args.examples,
            "corpora": wanted,
            "lsp_edits": args.lsp_edits,
            "lsp_debounce_ms": args.lsp_debounce_ms,
            "lsp_pause_s": args.lsp_pause_s,
        },
        "corpora": {},
        "scaling": {},
    }
    log(f"run_bench: working in {workdir}")
    all_consistent = True
    project_names: list[str] = []
    started = time.perf_counter()
    try:
        corpora: list[Corpus] = []
        for item in wanted:
            if item == "fixtures":
                corpora.append(prepare_fixtures_corpus(workdir, args.fixtures_copies))
            elif item == "framework":
                corpora.append(prepare_framework_corpus(workdir))
            elif item == "examples":
                corpora.append(prepare_examples_corpus(workdir, examples=args.examples))
            elif item == "torch":
                corpora.append(prepare_torch_corpus(workdir))
            else:
                corpus = prepare_dir_corpus(workdir, Path(item), args.lsp_file)
                if corpus.name in NAMED_CORPORA or corpus.name in {c.name for c in corpora}:
                    corpus.name = f"{corpus.name} (dir {len(corpora) + 1})"
                corpora.append(corpus)
        for corpus in corpora:
            info = corpus.describe()
            log(
                f"corpus {info['name']}: {info['files']} files, {info['lines']:,} lines, {info['mb']:.1f} MB, touched file {info['anchor_file']}"
            )
        for corpus in corpora:
            # The examples corpus is about many entry points: the CLI's rows only (its cold runs are
            # the long ones), with the parse-only reference.
            many = corpus.entry_points is not None
            result = measure_corpus(
                corpus,
                repeat=args.repeat,
                torchfix=None if many else torchfix,
                parse_two=not (args.quick or many),
                flake8=not (args.skip_flake8 or many),
                lsp=not (args.skip_lsp or many),
                jobs1=not many,
                lsp_edits=args.lsp_edits,
                lsp_debounce_ms=args.lsp_debounce_ms,
                lsp_pause_s=args.lsp_pause_s,
                lsp_timeout=args.lsp_timeout,
                lsp_sessions=LSP_SESSIONS[:2] if args.quick else LSP_SESSIONS,
                log=log,
            )
            all_consistent &= result.consistent
            if corpus.project:
                project_names.append(corpus.name)
            entry: dict = {
                "corpus": corpus.describe(),
                "rows": [r.to_dict() for r in result.rows],
                "ratios": ratios(result.rows),
                "findings_identical": result.consistent,
                "mismatches": result.mismatches,
                "lsp_before_project_pass": result.lsp_interim,
                "lsp": result.lsp,
                "lsp_file": result.lsp_file,
                "errors": result.errors,
            }
            if corpus.expected is not None:
                entry["expected_findings"] = len(corpus.expected)
            results["corpora"][corpus.name] = entry
            info = corpus.describe()
            print()
            print(
                format_table(
                    result.rows,
                    f"corpus {info['name']}: {info['files']} files, {info['lines']:,} lines, {info['mb']:.1f} MB ({info['path']})",
                )
            )
            print(format_ratios(entry["ratios"]))
            if result.lsp:
                print(format_lsp(result))
            paths = ["cold", "warm", "touched", *(["--jobs 1"] if not many else []), "parallel runs"]
            paths += ["--diff"] if corpus.project else []
            paths += ["flake8"] if corpus.project and not (many or args.skip_flake8) else []
            paths += ["the language server"] if corpus.project and not (many or args.skip_lsp) else []
            checked = ", ".join(paths[:-1]) + " and " + paths[-1]
            checked += " (and the corpus's marks)" if corpus.expected is not None else ""
            print(f"findings identical across {checked}: {'yes' if result.consistent else 'NO'}")
            for problem in result.mismatches:
                print(f"  MISMATCH {problem}")
            for problem in result.lsp_interim:
                print(f"  before the language server's project pass: {problem}")
            for problem in result.errors:
                print(f"  NOT MEASURED {problem}")
            sys.stdout.flush()
            if corpus.name in scaling_corpora and len(scales) > 1:
                unit = "mb"
                if corpus.name == "torch":
                    make = lambda factor, base=corpus: base if factor == 1 else replicate(base, factor, workdir)
                elif many:  # N times the example scripts over the same library
                    unit = "entry_points"
                    make = lambda factor, base=corpus: (
                        base
                        if factor == 1
                        else prepare_examples_corpus(
                            workdir,
                            examples=factor * args.examples,
                            dirname=f"examples_scale_{factor}x",
                            name=f"examples x{factor}",
                        )
                    )
                else:  # the framework: N sibling copies of the package in one project
                    make = lambda factor, base=corpus: (
                        base
                        if factor == 1
                        else prepare_framework_corpus(workdir, copies=factor, dirname=f"framework_scale_{factor}x")
                    )
                cleanup = lambda c, factor: shutil.rmtree(c.directory, ignore_errors=True) if factor != 1 else None
                results["scaling"][corpus.name] = scaling(
                    make, scales, args.repeat, log, label=corpus.name, cleanup=cleanup, unit=unit
                )
                all_consistent &= results["scaling"][corpus.name]["findings_as_marked"] is not False
                print()
                print(format_scaling(results["scaling"][corpus.name]))
                sys.stdout.flush()
        results["targets"] = [
            asdict(t) | {"status": t.status} for t in targets(results, project_names or ("framework",))
        ]
        print()
        print(format_targets(targets(results, project_names or ("framework",))))
    finally:
        results["machine"]["load_avg_end"] = os.getloadavg()
        results["machine"]["total_s"] = round(time.perf_counter() - started, 1)
        print(
            f"load average at start {_load(results['machine']['load_avg_start'])}, at end {_load(results['machine']['load_avg_end'])} ({os.cpu_count()} CPUs); whole run {results['machine']['total_s']:.0f} s"
        )
        if args.output:
            Path(args.output).write_text(json.dumps(results, indent=2, default=str) + "\n", encoding="utf-8")
            log(f"run_bench: results written to {args.output}")
        if not args.workdir and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    if not all_consistent:
        print("run_bench: FAIL: findings differ between runs of the same corpus", file=sys.stderr)
        return 1
    return 0


def _load(values: Sequence[float]) -> str:
    return " / ".join(f"{v:.2f}" for v in values)


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


#: What the smoke test (tests/robustness/test_bench_smoke.py) reads of this script, most of it
#: defined in the bench_*.py modules it imports.
__all__ = [
    "FIXTURES",
    "FLAKE8_AGAIN",
    "FLAKE8_COLD",
    "FLAKE8_FILE",
    "FLAKE8_WITHOUT_CAL",
    "LSP_COLD",
    "LSP_COLD_AT_ONCE",
    "LSP_WARM",
    "LSP_WARM_AT_ONCE",
    "OURS_COLD",
    "OURS_COLD_J1",
    "OURS_COLD_TEXT",
    "OURS_DIFF_WARM",
    "OURS_TOUCHED",
    "OURS_WARM",
    "OURS_WARM_TEXT",
    "PARSE_1",
    "as_flake8",
    "compare_findings",
    "examples_corpus",
    "format_lsp",
    "format_scaling",
    "format_table",
    "framework_corpus",
    "lsp_client",
    "main",
    "measure",
    "measure_corpus",
    "parse_flake8",
    "prepare_dir_corpus",
    "prepare_examples_corpus",
    "prepare_fixtures_corpus",
    "ratios",
    "safe_fix_files",
    "same_findings",
    "scaling",
    "selected_corpora",
]


if __name__ == "__main__":
    sys.exit(main())
