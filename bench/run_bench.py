#!/usr/bin/env python
"""Benchmark of compile-ad-lint against TorchFix and a LibCST parse-only pass (design section 5).

One run prepares the corpora in a temporary folder, measures every tool on the same files as
separate processes (wall time, CPU time of the process tree, peak memory of the process tree),
prints tables and ratios, checks that our findings are identical across cold, warm, touched,
one-job and parallel runs, and exits 1 if they are not. See bench/README.md.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
FIXTURES = REPO / "fixtures"
CACHE_DIRNAME = ".compile_ad_lint_cache"
TORCHFIX_REQUIREMENTS = BENCH_DIR / "requirements-torchfix.txt"
#: Outside the repository, so that linters and tests run over the repo never walk into it.
TORCHFIX_VENV = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "compile-ad-lint-bench" / "torchfix-venv"
PARSE_ONLY = BENCH_DIR / "parse_only.py"
ANCHOR_MARKER = b".backward("
MB = 1024 * 1024

# Row names, in table order (the smoke test checks these).
OURS_COLD = "ours cold (default jobs)"
OURS_WARM = "ours warm (nothing changed)"
OURS_TOUCHED = "ours after touching 1 file"
OURS_COLD_J1 = "ours cold --jobs 1"
TORCHFIX = "TorchFix --select ALL"
PARSE_1 = "LibCST parse-only, 1 process"
PARSE_2 = "LibCST parse-only, 2 processes"


# -- measuring one process tree --------------------------------------------------------------


@dataclass
class Measurement:
    wall_s: float
    user_s: float
    sys_s: float
    peak_tree_rss_mb: float  # sum of VmRSS over the live process tree, max over samples
    peak_tree_pss_mb: float | None  # the same with PSS (shared pages divided), where readable
    max_process_rss_mb: float  # ru_maxrss from wait4: the largest single process of the tree
    samples: int
    returncode: int
    stdout: str = field(repr=False, default="")
    stderr: str = field(repr=False, default="")

    @property
    def cpu_s(self) -> float:
        return self.user_s + self.sys_s

    @property
    def peak_mb(self) -> float:
        """Peak memory of the tree: the polled RSS sum, never below the largest single process."""
        return max(self.peak_tree_rss_mb, self.max_process_rss_mb)


def _proc_children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'.
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry))
    return children


def _proc_kb(path: str, key: bytes) -> int | None:
    try:
        with open(path, "rb") as handle:
            for line in handle:
                if line.startswith(key):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _tree_memory_proc(root: int, with_pss: bool = True) -> tuple[int, int | None]:
    """(sum of RSS, sum of PSS or None) in KiB over ``root`` and its descendants."""
    children = _proc_children_map()
    pids, stack = [], [root]
    while stack:
        pid = stack.pop()
        pids.append(pid)
        stack.extend(children.get(pid, ()))
    rss, pss, pss_ok = 0, 0, True
    for pid in pids:
        rss += _proc_kb(f"/proc/{pid}/status", b"VmRSS:") or 0
        value = _proc_kb(f"/proc/{pid}/smaps_rollup", b"Pss:") if with_pss else None
        if value is None:
            pss_ok = False
        else:
            pss += value
    return rss, (pss if pss_ok else None)


def _tree_memory_psutil(root: int, with_pss: bool = True) -> tuple[int, int | None]:
    import psutil  # optional: only where /proc is missing (macOS)

    try:
        parent = psutil.Process(root)
        processes = [parent, *parent.children(recursive=True)]
    except psutil.Error:
        return 0, None
    rss = 0
    for process in processes:
        try:
            rss += process.memory_info().rss // 1024
        except psutil.Error:
            pass
    return rss, None


def _tree_sampler() -> Callable[[int, bool], tuple[int, int | None]] | None:
    if os.path.isdir("/proc/self") and os.path.exists("/proc/self/stat"):
        return _tree_memory_proc
    if importlib.util.find_spec("psutil") is not None:
        return _tree_memory_psutil
    return None


def measure(command: Sequence[str], cwd: Path, interval: float = 0.2, env: dict[str, str] | None = None, pss_every: int = 5) -> Measurement:
    """Run ``command`` to completion and measure it and everything it starts.

    CPU time and the largest single process come from ``os.wait4`` on the child: the kernel adds
    the usage of every descendant the child waited for (pool workers are), so this equals the
    RUSAGE_CHILDREN delta without being disturbed by anything else this process runs. The memory
    of the whole tree at once (parent plus workers) is sampled from /proc every ``interval`` s;
    PSS (smaps_rollup walks the page tables, costly for a big process) only every ``pss_every``-th
    sample, so that the sampler itself takes little of a 2-core machine.
    """
    sampler = _tree_sampler()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(list(command), cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
        peak = {"rss": 0, "pss": 0, "pss_ok": True, "samples": 0}
        done = threading.Event()

        def poll() -> None:
            while not done.is_set():
                with_pss = peak["samples"] % pss_every == 0
                rss, pss = sampler(process.pid, with_pss)  # type: ignore[misc]
                peak["samples"] += 1
                peak["rss"] = max(peak["rss"], rss)
                if with_pss and pss is None:
                    peak["pss_ok"] = False
                elif pss is not None:
                    peak["pss"] = max(peak["pss"], pss)
                done.wait(interval)

        poller = threading.Thread(target=poll, daemon=True) if sampler else None
        if poller:
            poller.start()
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        done.set()
        if poller:
            poller.join()
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    maxrss_kb = usage.ru_maxrss / 1024 if sys.platform == "darwin" else usage.ru_maxrss  # bytes on macOS
    return Measurement(
        wall_s=round(wall, 3),
        user_s=round(usage.ru_utime, 3),
        sys_s=round(usage.ru_stime, 3),
        peak_tree_rss_mb=round(peak["rss"] / 1024, 1),
        peak_tree_pss_mb=round(peak["pss"] / 1024, 1) if sampler and peak["pss_ok"] and peak["samples"] else None,
        max_process_rss_mb=round(maxrss_kb / 1024, 1),
        samples=int(peak["samples"]),
        returncode=process.returncode,
        stdout=stdout,
        stderr=stderr,
    )


# -- corpora ---------------------------------------------------------------------------------


@dataclass
class Corpus:
    name: str
    cwd: Path  # every tool runs here
    path: str  # the directory given to every tool, relative to cwd
    files: list[Path]  # absolute paths of the *.py files
    lines: int
    bytes: int
    anchor_file: Path | None  # the file the "touched" run appends a comment to

    @property
    def directory(self) -> Path:
        return self.cwd / self.path

    @property
    def megabytes(self) -> float:
        return self.bytes / MB

    def describe(self) -> dict:
        return {
            "name": self.name,
            "path": str(self.directory),
            "files": len(self.files),
            "lines": self.lines,
            "mb": round(self.megabytes, 2),
            "anchor_file": str(self.anchor_file.relative_to(self.cwd)) if self.anchor_file else None,
        }


def _scan(name: str, cwd: Path, path: str) -> Corpus:
    files = sorted((cwd / path).rglob("*.py"))
    files = [f for f in files if CACHE_DIRNAME not in f.parts and "__pycache__" not in f.parts]
    lines = size = 0
    anchor = None
    for file in files:
        data = file.read_bytes()
        size += len(data)
        lines += data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        if anchor is None and ANCHOR_MARKER in data:
            anchor = file
    return Corpus(name, cwd, path, files, lines, size, anchor)


def installed_torch_dir() -> Path:
    """The installed torch package, found without importing it (importing torch takes seconds)."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("run_bench: torch is not installed in this interpreter (pip install -e '.[test]')")
    return Path(list(spec.submodule_search_locations)[0])


def prepare_torch_corpus(workdir: Path, torch_dir: Path | None = None) -> Corpus:
    """Copy every *.py of the installed torch into ``workdir/torch_corpus/torch/...``."""
    torch_dir = torch_dir or installed_torch_dir()
    target = workdir / "torch_corpus"
    for source in torch_dir.rglob("*.py"):
        if "__pycache__" in source.parts:
            continue
        destination = target / "torch" / source.relative_to(torch_dir)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, destination)
    return _scan("torch", workdir, "torch_corpus")


def mark_copy(directory: Path, label: str) -> None:
    """Append a comment naming the copy to every *.py under ``directory``.

    The summary cache is keyed by file content and module name, and the copies' modules have the
    same names, so byte-identical copies would be parsed once and then served from the cache within
    the same "cold" run. Real projects do not repeat each other byte for byte: the comment makes
    every copy's files distinct, so each copy costs what a separate project would.
    """
    for path in directory.rglob("*.py"):
        data = path.read_bytes()
        suffix = b"" if not data or data.endswith(b"\n") else b"\n"
        path.write_bytes(data + suffix + f"# compile-ad-lint bench: {label}\n".encode())


def prepare_fixtures_corpus(workdir: Path, copies: int, fixtures: Path = FIXTURES) -> Corpus:
    """``copies`` copies of the repo's fixtures/ as sibling packages ``proj_k/`` (structure kept, so imports resolve)."""
    target = workdir / "fixtures_corpus"
    for k in range(1, copies + 1):
        shutil.copytree(fixtures, target / f"proj_{k}", ignore=shutil.ignore_patterns("__pycache__", CACHE_DIRNAME, "*.pyc"))
        mark_copy(target / f"proj_{k}", f"proj_{k}")
    return _scan("fixtures", workdir, "fixtures_corpus")


def replicate(corpus: Corpus, factor: int, workdir: Path) -> Corpus:
    """``factor`` copies of ``corpus``'s directory as siblings ``scale_Nx/copyK/...``, each analyzed as separate files."""
    target = workdir / f"scale_{factor}x"
    for k in range(1, factor + 1):
        shutil.copytree(corpus.directory, target / f"copy{k}", ignore=shutil.ignore_patterns("__pycache__", CACHE_DIRNAME, "*.pyc"))
        mark_copy(target / f"copy{k}", f"copy{k}")  # distinct bytes: see mark_copy
    return _scan(f"{corpus.name} x{factor}", workdir, target.name)


# -- the tools -------------------------------------------------------------------------------


@dataclass
class Run:
    measurement: Measurement
    stats: dict | None = None  # ours: the JSON stats
    findings: list | None = None  # ours: the JSON findings
    files_checked: int | None = None
    findings_count: int | None = None


def clear_cache(corpus: Corpus) -> None:
    shutil.rmtree(corpus.directory / CACHE_DIRNAME, ignore_errors=True)


def run_ours(corpus: Corpus, *, jobs: int | None = None, cold: bool, no_cache: bool = False, python: str = sys.executable) -> Run:
    if cold or no_cache:
        clear_cache(corpus)
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        report_path = Path(handle.name)
    try:
        command = [python, "-m", "compile_ad_lint", "check", corpus.path, "--format", "json", "--output", str(report_path)]
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
        print(f"run_bench: warning: no {CACHE_DIRNAME}/ in {corpus.directory} after the run; warm numbers may be cold", file=sys.stderr)
    stats = document["stats"]
    return Run(measurement, stats, document["findings"], stats["files"], len(document["findings"]))


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
    print(f"run_bench: installing TorchFix into {TORCHFIX_VENV} (from {TORCHFIX_REQUIREMENTS.name}) ...", file=sys.stderr)
    TORCHFIX_VENV.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(TORCHFIX_VENV)], check=True)
    subprocess.run([str(TORCHFIX_VENV / "bin" / "python"), "-m", "pip", "install", "-q", "-r", str(TORCHFIX_REQUIREMENTS)], check=True)
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


# -- rows ------------------------------------------------------------------------------------


@dataclass
class Row:
    name: str
    runs: list[Run]

    def _median(self, key: Callable[[Measurement], float]) -> float:
        return round(statistics.median(key(r.measurement) for r in self.runs), 3)

    @property
    def wall_s(self) -> float:
        return self._median(lambda m: m.wall_s)

    @property
    def cpu_s(self) -> float:
        return self._median(lambda m: m.cpu_s)

    @property
    def peak_mb(self) -> float:
        return max(r.measurement.peak_mb for r in self.runs)

    @property
    def parsed(self) -> str:
        last = self.runs[-1]
        if last.stats is not None and "cached" in last.stats:  # ours
            return f"{last.stats['parsed']} parsed, {last.stats['cached']} cached / {last.stats['files']}"
        if last.stats is not None:  # parse-only
            return f"{last.stats['parsed']} parsed / {last.stats['files']}"
        return f"{last.files_checked} checked" if last.files_checked is not None else "?"

    def to_dict(self) -> dict:
        runs = []
        for run in self.runs:
            m = asdict(run.measurement)
            m.pop("stdout")
            m.pop("stderr")
            m["cpu_s"] = round(run.measurement.cpu_s, 3)
            m["peak_mb"] = run.measurement.peak_mb
            runs.append({"measurement": m, "stats": run.stats, "files_checked": run.files_checked, "findings": run.findings_count})
        return {"name": self.name, "wall_s": self.wall_s, "cpu_s": self.cpu_s, "peak_mb": self.peak_mb, "parsed": self.parsed, "runs": runs}


def format_table(rows: Sequence[Row], title: str) -> str:
    header = ("run", "wall s", "CPU s", "peak MB", "findings", "files parsed")
    body = [
        (r.name, f"{r.wall_s:.2f}", f"{r.cpu_s:.2f}", f"{r.peak_mb:.0f}", str(r.runs[-1].findings_count if r.runs[-1].findings_count is not None else "-"), r.parsed)
        for r in rows
    ]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    aligned = lambda line: "  ".join(c.ljust(w) if i in (0, 5) else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths)))  # noqa: E731
    rule = "-" * len(aligned(header))
    return "\n".join([title, rule, aligned(header), rule, *map(aligned, body), rule])


def ratios(rows: Sequence[Row]) -> dict[str, dict[str, float]]:
    by_name = {r.name: r for r in rows}
    out: dict[str, dict[str, float]] = {}
    pairs = [
        (OURS_COLD, TORCHFIX),
        (OURS_WARM, TORCHFIX),
        (OURS_COLD, PARSE_1),
        (OURS_WARM, PARSE_1),
        (OURS_TOUCHED, PARSE_1),
        (OURS_COLD_J1, PARSE_1),
        (OURS_COLD, PARSE_2),
        (OURS_COLD, OURS_COLD_J1),
    ]
    for ours, reference in pairs:
        if ours in by_name and reference in by_name:
            a, b = by_name[ours], by_name[reference]
            out[f"{ours} / {reference}"] = {
                "wall": round(a.wall_s / b.wall_s, 3) if b.wall_s else float("nan"),
                "cpu": round(a.cpu_s / b.cpu_s, 3) if b.cpu_s else float("nan"),
                "peak_mb": round(a.peak_mb / b.peak_mb, 3) if b.peak_mb else float("nan"),
            }
    return out


def format_ratios(values: dict[str, dict[str, float]]) -> str:
    width = max((len(k) for k in values), default=0)
    lines = ["ratios (median wall, median CPU, peak memory):"]
    lines += [f"  {k.ljust(width)}  wall x{v['wall']:<7.3f} CPU x{v['cpu']:<7.3f} mem x{v['peak_mb']:.3f}" for k, v in values.items()]
    return "\n".join(lines)


# -- the measurements on one corpus ------------------------------------------------------------


@dataclass
class CorpusResult:
    corpus: Corpus
    rows: list[Row]
    consistent: bool
    mismatches: list[str]


def _findings_key(findings: list) -> str:
    return json.dumps(findings, sort_keys=True)


def compare_findings(labelled: Sequence[tuple[str, list]]) -> list[str]:
    """Labels of the runs whose findings differ from the first one's (with a short reason)."""
    if not labelled:
        return []
    reference_label, reference = labelled[0]
    key = _findings_key(reference)
    problems = []
    for label, findings in labelled[1:]:
        if _findings_key(findings) != key:
            first = _findings_key([f for f in findings if f not in reference][:1]) or _findings_key([f for f in reference if f not in findings][:1])
            problems.append(f"{label}: {len(findings)} findings vs {len(reference)} in {reference_label}; first difference {first[:300]}")
    return problems


def touch(path: Path, count: int) -> None:
    with open(path, "ab") as handle:
        handle.write(f"\n# compile-ad-lint bench touch {count}\n".encode())


def measure_corpus(
    corpus: Corpus,
    *,
    repeat: int = 1,
    torchfix: str | None = None,
    parse_only: bool = True,
    parse_two: bool = True,
    log: Callable[[str], None] = lambda s: None,
) -> CorpusResult:
    rows: list[Row] = []
    labelled: list[tuple[str, list]] = []

    def ours_row(name: str, make: Callable[[int], Run]) -> Row:
        runs = []
        for i in range(repeat):
            log(f"[{corpus.name}] {name} ({i + 1}/{repeat}) ...")
            run = make(i)
            runs.append(run)
            labelled.append((f"{name} #{i + 1}", run.findings or []))
            log(f"    {run.measurement.wall_s:.2f} s wall, {run.measurement.cpu_s:.2f} s CPU, {run.measurement.peak_mb:.0f} MB, stats {run.stats}")
        row = Row(name, runs)
        rows.append(row)
        return row

    ours_row(OURS_COLD, lambda i: run_ours(corpus, cold=True))
    ours_row(OURS_WARM, lambda i: run_ours(corpus, cold=False))
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
    ours_row(OURS_COLD_J1, lambda i: run_ours(corpus, cold=True, jobs=1))

    def other_row(name: str, make: Callable[[], Run]) -> None:
        runs = []
        for i in range(repeat):
            log(f"[{corpus.name}] {name} ({i + 1}/{repeat}) ...")
            run = make()
            runs.append(run)
            log(f"    {run.measurement.wall_s:.2f} s wall, {run.measurement.cpu_s:.2f} s CPU, {run.measurement.peak_mb:.0f} MB")
        rows.append(Row(name, runs))

    if torchfix:
        other_row(TORCHFIX, lambda: run_torchfix(corpus, torchfix))
    if parse_only:
        other_row(PARSE_1, lambda: run_parse_only(corpus, 1))
        if parse_two:
            other_row(PARSE_2, lambda: run_parse_only(corpus, 2))
    clear_cache(corpus)
    mismatches = compare_findings(labelled)
    return CorpusResult(corpus, rows, not mismatches, mismatches)


# -- scaling ---------------------------------------------------------------------------------


def scaling(base: Corpus, factors: Sequence[int], workdir: Path, repeat: int, log: Callable[[str], None]) -> dict:
    """Cold runs with ``--no-cache`` at every factor (1x included).

    Without the cache, no copy can be served from another copy's cache entries within the run (the
    cache is keyed by content, and the analyzer may cache below file level, where the copies'
    marker comments do not reach), so each copy is analyzed as the separate files it is.
    """
    points = []
    for factor in factors:
        log(f"[scaling] preparing {factor}x ...")
        corpus = base if factor == 1 else replicate(base, factor, workdir)
        runs = []
        for i in range(repeat):
            log(f"[scaling] {factor}x cold --no-cache ({i + 1}/{repeat}) ...")
            run = run_ours(corpus, cold=True, no_cache=True)
            runs.append(run)
            log(f"    {run.measurement.wall_s:.2f} s wall, {run.measurement.cpu_s:.2f} s CPU, stats {run.stats}")
        row = Row(f"x{factor}", runs)
        points.append({"factor": factor, "files": len(corpus.files), "mb": round(corpus.megabytes, 2), "wall_s": row.wall_s, "cpu_s": row.cpu_s, "peak_mb": row.peak_mb, "parsed": row.parsed})
        if factor != 1:
            shutil.rmtree(corpus.directory, ignore_errors=True)
    # Least squares through the origin: time ≈ a * MB.
    for metric in ("wall_s", "cpu_s"):
        a = sum(p[metric] * p["mb"] for p in points) / sum(p["mb"] ** 2 for p in points)
        for p in points:
            p[f"{metric}_per_mb"] = round(p[metric] / p["mb"], 4)
            p[f"{metric}_fit"] = round(a * p["mb"], 3)
    first, last = points[0], points[-1]
    per_mb_ratio = round(last["wall_s_per_mb"] / first["wall_s_per_mb"], 3) if len(points) > 1 else None
    cpu_ratio = round(last["cpu_s_per_mb"] / first["cpu_s_per_mb"], 3) if len(points) > 1 else None
    if per_mb_ratio is None:
        verdict = "one point only"
    elif per_mb_ratio < 0.8:
        verdict = "sublinear (fixed costs dominate at 1x)"
    elif per_mb_ratio <= 1.2:
        verdict = "linear (per-MB time within 20% across scales)"
    elif per_mb_ratio <= 1.5:
        verdict = "slightly superlinear"
    else:
        verdict = "superlinear"
    return {"points": points, "wall_per_mb_ratio_last_vs_1x": per_mb_ratio, "cpu_per_mb_ratio_last_vs_1x": cpu_ratio, "verdict": verdict}


def format_scaling(result: dict) -> str:
    lines = ["scaling (ours, --no-cache, default jobs; copies are sibling directories copyK/torch/...):"]
    lines.append(f"  {'size':>5} {'files':>6} {'MB':>7} {'wall s':>8} {'fit s':>8} {'s/MB':>7} {'CPU s':>8} {'peak MB':>8}  parsed")
    for p in result["points"]:
        lines.append(
            f"  {str(p['factor']) + 'x':>5} {p['files']:>6} {p['mb']:>7.1f} {p['wall_s']:>8.2f} {p['wall_s_fit']:>8.2f} {p['wall_s_per_mb']:>7.3f} {p['cpu_s']:>8.2f} {p['peak_mb']:>8.0f}  {p['parsed']}"
        )
    lines.append(
        f"  per-MB wall time, largest vs 1x: x{result['wall_per_mb_ratio_last_vs_1x']} (CPU x{result['cpu_per_mb_ratio_last_vs_1x']}) -> {result['verdict']}"
    )
    return "\n".join(lines)


# -- main ------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="skip TorchFix, the 4x scale and the 2-process parse pass")
    parser.add_argument("--skip-torchfix", action="store_true", help="do not run TorchFix")
    parser.add_argument("--output", help="write machine-readable results (JSON) to this file")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each measurement; the table shows medians (default 1)")
    parser.add_argument("--corpus", choices=("all", "torch", "fixtures"), default="all", help="which corpora (default all)")
    parser.add_argument("--fixtures-copies", type=int, default=20, help="copies of fixtures/ in the small corpus (default 20)")
    parser.add_argument("--scales", default=None, help="comma-separated replication factors of the torch corpus, 1 first (default 1,2,4; --quick 1,2)")
    parser.add_argument("--torchfix", help="the torchfix executable (default: ~/.cache/compile-ad-lint-bench/torchfix-venv, installed on first use)")
    parser.add_argument("--workdir", help="prepare corpora here instead of a fresh temporary folder (kept afterwards)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.repeat < 1:
        raise SystemExit("run_bench: --repeat must be at least 1")
    log = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731
    scales = [int(s) for s in (args.scales or ("1,2" if args.quick else "1,2,4")).split(",") if s.strip()]

    torchfix = None
    if not (args.quick or args.skip_torchfix):
        torchfix = find_torchfix(args.torchfix) or install_torchfix()

    workdir = Path(args.workdir).resolve() if args.workdir else Path(tempfile.mkdtemp(prefix="cal-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    results: dict = {
        "machine": {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(), "load_avg_start": os.getloadavg()},
        "versions": {
            "compile-ad-lint": importlib.metadata.version("compile-ad-lint"),
            "libcst": importlib.metadata.version("libcst"),
            "torch": importlib.metadata.version("torch") if importlib.util.find_spec("torch") else None,
            "torchfix": torchfix_version(torchfix) if torchfix else None,
        },
        "options": {"quick": args.quick, "skip_torchfix": args.skip_torchfix, "repeat": args.repeat, "scales": scales, "fixtures_copies": args.fixtures_copies},
        "corpora": {},
    }
    log(f"run_bench: working in {workdir}")
    all_consistent = True
    try:
        corpora: list[Corpus] = []
        if args.corpus in ("all", "fixtures"):
            corpora.append(prepare_fixtures_corpus(workdir, args.fixtures_copies))
        torch_corpus = None
        if args.corpus in ("all", "torch"):
            torch_corpus = prepare_torch_corpus(workdir)
            corpora.append(torch_corpus)
        for corpus in corpora:
            info = corpus.describe()
            log(f"corpus {info['name']}: {info['files']} files, {info['lines']:,} lines, {info['mb']:.1f} MB, touched file {info['anchor_file']}")
        for corpus in corpora:
            result = measure_corpus(corpus, repeat=args.repeat, torchfix=torchfix, parse_two=not args.quick, log=log)
            all_consistent &= result.consistent
            entry = {"corpus": corpus.describe(), "rows": [r.to_dict() for r in result.rows], "ratios": ratios(result.rows), "findings_identical": result.consistent, "mismatches": result.mismatches}
            results["corpora"][corpus.name] = entry
            info = corpus.describe()
            print()
            print(format_table(result.rows, f"corpus {info['name']}: {info['files']} files, {info['lines']:,} lines, {info['mb']:.1f} MB ({info['path']})"))
            print(format_ratios(entry["ratios"]))
            print(f"findings identical across cold, warm, touched, --jobs 1 and parallel runs: {'yes' if result.consistent else 'NO'}")
            for problem in result.mismatches:
                print(f"  MISMATCH {problem}")
            if corpus is torch_corpus and len(scales) > 1:
                results["scaling"] = scaling(torch_corpus, scales, workdir, args.repeat, log)
                print()
                print(format_scaling(results["scaling"]))
            sys.stdout.flush()
    finally:
        results["machine"]["load_avg_end"] = os.getloadavg()
        if args.output:
            Path(args.output).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
            log(f"run_bench: results written to {args.output}")
        if not args.workdir and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    if not all_consistent:
        print("run_bench: FAIL: findings differ between runs of the same corpus", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
