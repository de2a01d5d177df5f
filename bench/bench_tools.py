"""The measured tools, each run as a process on one corpus: compile-ad-lint (JSON, text, --diff), TorchFix,
the parse-only pass, flake8 and the language server; and how their findings are read."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import lsp_client
from bench_common import CACHE_DIRNAME, FLAKE8_WITHOUT_CAL_SCRIPT, PARSE_ONLY, TORCHFIX_REQUIREMENTS, TORCHFIX_VENV
from bench_corpora import Corpus
from bench_measure import Measurement, measure

# -- the tools -------------------------------------------------------------------------------


@dataclass
class Run:
    measurement: Measurement
    stats: dict | None = None  # ours: the JSON stats
    findings: list | None = None  # ours: the JSON findings
    files_checked: int | None = None
    findings_count: int | None = None
    diff_files: list[str] | None = None  # ours --diff: the files its diff changes


def clear_cache(corpus: Corpus) -> None:
    shutil.rmtree(corpus.directory / CACHE_DIRNAME, ignore_errors=True)


def run_ours(
    corpus: Corpus, *, jobs: int | None = None, cold: bool, no_cache: bool = False, python: str = sys.executable
) -> Run:
    if cold or no_cache:
        clear_cache(corpus)
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        report_path = Path(handle.name)
    try:
        command = [
            python,
            "-m",
            "compile_ad_lint",
            "check",
            corpus.path,
            "--format",
            "json",
            "--output",
            str(report_path),
        ]
        if jobs is not None:
            command += ["--jobs", str(jobs)]
        if no_cache:
            command.append("--no-cache")
        measurement = measure(command, corpus.cwd)
        if measurement.returncode not in (0, 1):
            raise RuntimeError(f"compile-ad-lint exited {measurement.returncode}:\n{measurement.stderr[-4000:]}")
        document = json.loads(report_path.read_text(encoding="utf-8"))
    finally:
        report_path.unlink(missing_ok=True)
    if not no_cache and not (corpus.directory / CACHE_DIRNAME).is_dir():
        print(
            f"run_bench: warning: no {CACHE_DIRNAME}/ in {corpus.directory} after the run; warm numbers may be cold",
            file=sys.stderr,
        )
    stats = document["stats"]
    return Run(measurement, stats, document["findings"], stats["files"], len(document["findings"]))


_TEXT_SUMMARY = re.compile(r"^(?:Found (\d+) findings?|No findings) in (\d+) files?", re.MULTILINE)


def run_ours_text(corpus: Corpus, python: str = sys.executable) -> Run:
    """``compile-ad-lint check <corpus>`` with the default text report, what a user runs; cache kept.

    The JSON runs are the ones whose findings are compared; this one only counts them (from the
    summary line), but JSON output costs more than text (each finding's fixes are resolved for the
    report), so the warm targets are judged on this run and show the JSON figure beside it.
    """
    measurement = measure([python, "-m", "compile_ad_lint", "check", corpus.path], corpus.cwd)
    if measurement.returncode not in (0, 1):
        raise RuntimeError(f"compile-ad-lint exited {measurement.returncode}:\n{measurement.stderr[-4000:]}")
    summary = _TEXT_SUMMARY.findall(measurement.stdout + measurement.stderr)
    count = int(summary[-1][0] or 0) if summary else None
    return Run(measurement, files_checked=int(summary[-1][1]) if summary else None, findings_count=count)


_DIFF_SUMMARY = re.compile(r"would fix (\d+) findings? in (\d+) files?")
_DIFF_FILE = re.compile(r"^--- (.+)$", re.MULTILINE)


def run_ours_diff(corpus: Corpus, python: str = sys.executable) -> Run:
    """``compile-ad-lint check <corpus> --diff``, cache kept: the fixes as a unified diff, nothing written.

    ``findings_count`` is how many findings it would fix (its summary line), ``diff_files`` the files
    its diff changes (the ``--- path`` headers).
    """
    measurement = measure([python, "-m", "compile_ad_lint", "check", corpus.path, "--diff"], corpus.cwd)
    if measurement.returncode not in (0, 1):
        raise RuntimeError(f"compile-ad-lint --diff exited {measurement.returncode}:\n{measurement.stderr[-4000:]}")
    summary = _DIFF_SUMMARY.search(measurement.stderr)
    return Run(
        measurement,
        findings_count=int(summary.group(1)) if summary else 0,
        diff_files=sorted(set(_DIFF_FILE.findall(measurement.stdout))),
    )


def safe_fix_files(findings: Sequence[dict]) -> set[str]:
    """The files the safe fixes of a JSON report edit: what ``--diff`` may change (overlapping fixes
    of a round are left to the next one, where the finding may be gone)."""
    return {
        edit["path"]
        for f in findings
        if f.get("fix") and f["fix"].get("applicability") == "safe"
        for edit in f["fix"].get("edits", ())
    }


_TORCHFIX_VIOLATION = re.compile(r":\d+:\d+: TOR\d+", re.MULTILINE)
_TORCHFIX_CHECKED = re.compile(r"Finished checking (\d+) files")


def find_torchfix(explicit: str | None) -> str | None:
    if explicit:
        return explicit
    candidates = [TORCHFIX_VENV / "bin" / "torchfix", Path(sys.executable).parent / "torchfix"]
    for candidate in candidates:
        if candidate.is_file():
            return str(candidate)
    return shutil.which("torchfix")


def install_torchfix() -> str:
    """TorchFix pins libcst<1.6 and we need libcst>=1.8: it gets a venv of its own, TORCHFIX_VENV."""
    print(
        f"run_bench: installing TorchFix into {TORCHFIX_VENV} (from {TORCHFIX_REQUIREMENTS.name}) ...", file=sys.stderr
    )
    TORCHFIX_VENV.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(TORCHFIX_VENV)], check=True)
    subprocess.run(
        [str(TORCHFIX_VENV / "bin" / "python"), "-m", "pip", "install", "-q", "-r", str(TORCHFIX_REQUIREMENTS)],
        check=True,
    )
    return str(TORCHFIX_VENV / "bin" / "torchfix")


def torchfix_version(executable: str) -> str:
    result = subprocess.run([executable, "--version"], capture_output=True, text=True)
    return result.stdout.strip() or result.stderr.strip()


def run_torchfix(corpus: Corpus, executable: str) -> Run:
    # No --fix: TorchFix only reports (and prints diffs); --select ALL enables every rule.
    measurement = measure([executable, "--select", "ALL", corpus.path], corpus.cwd)
    if measurement.returncode not in (0, 1):
        raise RuntimeError(f"torchfix exited {measurement.returncode}:\n{measurement.stderr[-4000:]}")
    checked = _TORCHFIX_CHECKED.search(measurement.stderr)
    return Run(
        measurement,
        files_checked=int(checked.group(1)) if checked else None,
        findings_count=len(_TORCHFIX_VIOLATION.findall(measurement.stdout)),
    )


def run_parse_only(corpus: Corpus, procs: int, python: str = sys.executable) -> Run:
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as handle:
        handle.write("".join(f"{f}\n" for f in corpus.files))
        list_path = Path(handle.name)
    try:
        measurement = measure([python, str(PARSE_ONLY), str(list_path), "--procs", str(procs)], corpus.cwd)
    finally:
        list_path.unlink(missing_ok=True)
    if measurement.returncode != 0:
        raise RuntimeError(f"parse_only exited {measurement.returncode}:\n{measurement.stderr[-4000:]}")
    summary = json.loads(measurement.stdout.strip().splitlines()[-1])
    return Run(measurement, stats=summary, files_checked=summary["parsed"])


_FLAKE8_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<column>\d+): (?P<code>[A-Z]+[0-9]+) (?P<text>.*)$")


def relative_to_root(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def parse_flake8(stdout: str, cwd: Path, root: Path) -> list[dict]:
    """flake8's default ``path:line:col: CODE text`` lines as (root-relative path, line, column, code, message)."""
    found = []
    for line in stdout.splitlines():
        match = _FLAKE8_LINE.match(line)
        if match:
            found.append(
                {
                    "path": relative_to_root(cwd / match["path"], root),
                    "line": int(match["line"]),
                    "column": int(match["column"]),
                    "code": match["code"],
                    "message": match["text"],
                }
            )
    return sorted(found, key=lambda f: (f["path"], f["line"], f["column"], f["code"], f["message"]))


def _printable(text: str) -> str:
    """How the flake8 plugin escapes a message (compile_ad_lint.output.escape.printable)."""
    try:
        from compile_ad_lint.output.escape import printable
    except ImportError:  # the bench runs with the project's venv; this is only a fallback
        return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return printable(text)


def as_flake8(findings: Sequence[dict], cwd: Path, root: Path, only: Path | None = None) -> list[dict]:
    """Our JSON findings (paths relative to ``cwd``) in the shape ``parse_flake8`` returns."""
    shaped = []
    for f in findings:
        path = (cwd / f["path"]).resolve()
        if only is not None and path != only.resolve():
            continue
        shaped.append(
            {
                "path": relative_to_root(path, root),
                "line": f["line"],
                "column": f["column"],
                "code": f["code"],
                "message": _printable(f["message"]),
            }
        )
    return sorted(shaped, key=lambda f: (f["path"], f["line"], f["column"], f["code"], f["message"]))


def run_flake8(
    corpus: Corpus, targets: Sequence[str] = (".",), python: str = sys.executable, *, with_ours: bool = True
) -> Run:
    """``flake8 --select CAL TARGETS`` at the corpus root (flake8's own jobs default: one worker per
    CPU); without ``with_ours``, with every installed plugin but ours: what flake8 costs before
    our plugin does anything (pyflakes and pycodestyle run on every file whatever ``--select``
    says)."""
    command = [python, "-m", "flake8"] if with_ours else [python, str(FLAKE8_WITHOUT_CAL_SCRIPT)]
    measurement = measure([*command, "--select", "CAL", *targets], corpus.cwd)
    if measurement.returncode not in (0, 1):
        raise RuntimeError(f"flake8 exited {measurement.returncode}:\n{measurement.stderr[-4000:]}")
    findings = parse_flake8(measurement.stdout, corpus.cwd, corpus.directory)
    return Run(measurement, findings=findings, findings_count=len(findings))


def run_lsp(
    corpus: Corpus,
    file: Path,
    *,
    edits: int,
    debounce_ms: int,
    timeout: float,
    ready: bool = True,
    pause_s: float = 0.0,
    python: str = sys.executable,
) -> lsp_client.LspSession:
    """One language-server session on ``file``: open, then (once the server is idle, with ``ready``)
    ``edits`` one-line edits (see bench/lsp_client.py)."""
    return lsp_client.measure_session(
        corpus.directory,
        file,
        edits=edits,
        debounce_ms=debounce_ms,
        ready=ready,
        pause_s=pause_s,
        edit_line=corpus.edit_line if corpus.lsp_file is not None and file == corpus.lsp_file else None,
        edit_text=corpus.edit_text if corpus.lsp_file is not None and file == corpus.lsp_file else None,
        python=python,
        timeout=timeout,
    )


def choose_lsp_file(corpus: Corpus, findings: Sequence[dict]) -> Path | None:
    """The file the client opens: the corpus's own choice, else the file with most findings, else the touched file."""
    if corpus.lsp_file is not None:
        return corpus.lsp_file
    counts: dict[Path, int] = {}
    for f in findings:
        path = (corpus.cwd / f["path"]).resolve()
        if path.suffix == ".py" and path.is_relative_to(corpus.directory.resolve()):
            counts[path] = counts.get(path, 0) + 1
    if counts:
        return min(counts, key=lambda p: (-counts[p], str(p)))
    return corpus.anchor_file
