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
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:  # the smoke test loads this file by path
    sys.path.insert(0, str(BENCH_DIR))

import examples_corpus  # noqa: E402  (bench/examples_corpus.py)
import framework_corpus  # noqa: E402  (bench/framework_corpus.py)
import lsp_client  # noqa: E402  (bench/lsp_client.py)

REPO = BENCH_DIR.parent
FIXTURES = REPO / "fixtures"
CACHE_DIRNAME = ".compile_ad_lint_cache"
TORCHFIX_REQUIREMENTS = BENCH_DIR / "requirements-torchfix.txt"
#: Outside the repository, so that linters and tests run over the repo never walk into it.
TORCHFIX_VENV = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "compile-ad-lint-bench" / "torchfix-venv"
)
PARSE_ONLY = BENCH_DIR / "parse_only.py"
ANCHOR_MARKER = b".backward("
MB = 1024 * 1024

# Row names, in table order (the smoke test checks these).
OURS_COLD = "ours cold (default jobs)"
OURS_WARM = "ours warm (nothing changed)"
OURS_TOUCHED = "ours after touching 1 file"
OURS_COLD_J1 = "ours cold --jobs 1"
OURS_WARM_TEXT = "ours warm, text report (what a user runs)"
OURS_COLD_TEXT = "ours cold, text report (what a user runs)"
OURS_DIFF_WARM = "ours --diff, warm (the fixes as a diff)"
TORCHFIX = "TorchFix --select ALL"
PARSE_1 = "LibCST parse-only, 1 process"
PARSE_2 = "LibCST parse-only, 2 processes"
FLAKE8_FILE = "flake8 --select CAL <file>, after a warm CLI run"
FLAKE8_COLD = "flake8 --select CAL . (cold: no cache)"
FLAKE8_AGAIN = "flake8 --select CAL . again (cache kept)"
FLAKE8_WITHOUT_CAL = "flake8 --select CAL . without our plugin (flake8's own checkers)"
#: ``flake8`` with every installed plugin but ours (bench/flake8_without_cal.py).
FLAKE8_WITHOUT_CAL_SCRIPT = Path(__file__).resolve().parent / "flake8_without_cal.py"
LSP_COLD = "language server, no cache on disk"
LSP_WARM = "language server, after a warm CLI run"
LSP_COLD_AT_ONCE = "language server, no cache, edits at once"
LSP_WARM_AT_ONCE = "language server, warm CLI, edits at once"
#: (session, cache on disk from a warm CLI run, edits wait until the server is idle). The issue's
#: target is for edits "once the project is analyzed" (the first two); the others start editing
#: right after the open's diagnostics, the worst case, reported beside them.
LSP_SESSIONS = (
    (LSP_COLD, False, True),
    (LSP_WARM, True, True),
    (LSP_COLD_AT_ONCE, False, False),
    (LSP_WARM_AT_ONCE, True, False),
)

#: Files and folders of a ``--corpus DIR`` project that are copied (everything that changes what
#: the CLI or flake8 check or how they are configured); nothing else of the project is needed.
PROJECT_SUFFIXES = (".py", ".pyi", ".ipynb")
PROJECT_CONFIG_FILES = ("pyproject.toml", "setup.py", "setup.cfg", "tox.ini", ".flake8")
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
COPY_SKIP_DIRS = {
    ".git",
    ".hg",
    ".svn",
    CACHE_DIRNAME,
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "node_modules",
    ".eggs",
    ".ipynb_checkpoints",
}


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
    #: The machine's 1, 5 and 15 minute load averages when the process started (the bench runs on
    #: shared machines: every figure is printed with the load it was measured under).
    load_avg: tuple[float, float, float] = (0.0, 0.0, 0.0)

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
        fields = stat[stat.rfind(b")") + 2 :].split()
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


def measure(
    command: Sequence[str], cwd: Path, interval: float = 0.2, env: dict[str, str] | None = None, pss_every: int = 5
) -> Measurement:
    """Run ``command`` to completion and measure it and everything it starts.

    CPU time and the largest single process come from ``os.wait4`` on the child: the kernel adds
    the usage of every descendant the child waited for (pool workers are), so this equals the
    RUSAGE_CHILDREN delta without being disturbed by anything else this process runs. The memory
    of the whole tree at once (parent plus workers) is sampled from /proc every ``interval`` s;
    PSS (smaps_rollup walks the page tables, costly for a big process) only every ``pss_every``-th
    sample, so that the sampler itself takes little of a 2-core machine.
    """
    sampler = _tree_sampler()
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
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
        load_avg=(round(load[0], 2), round(load[1], 2), round(load[2], 2)),
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
    #: A project (the framework corpus, ``--corpus DIR``): every tool runs at its root on ``.``, and
    #: flake8 and the language server are measured on it too.
    project: bool = False
    lsp_file: Path | None = None  # the file the language-server client opens (None: chosen from the findings)
    edit_line: int | None = None  # its 1-based line the client edits (None: the first diagnostic's line)
    edit_text: Callable[[int], str] | None = field(default=None, repr=False)  # the edited line for edit k
    expected: list | None = None  # generated corpus: the (path, line, code) the generator marked
    entry_points: int | None = None  # the examples corpus: its example scripts (growth is counted in them)
    #: Whether flake8 and the language server are measured on this project (the examples corpus is
    #: about many entry points: its rows are the CLI's).
    front_ends: bool = True

    @property
    def directory(self) -> Path:
        return self.cwd if self.path == "." else self.cwd / self.path

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
            "project": self.project,
            "lsp_file": str(self.lsp_file.relative_to(self.cwd)) if self.lsp_file else None,
            "entry_points": self.entry_points,
            "front_ends": self.front_ends,
        }


def _scan(name: str, cwd: Path, path: str, **extra) -> Corpus:
    top = cwd if path == "." else cwd / path
    files = sorted(top.rglob("*.py"))
    files = [
        f
        for f in files
        if CACHE_DIRNAME not in f.parts and "__pycache__" not in f.parts and ".git" not in f.relative_to(top).parts
    ]
    lines = size = 0
    anchor = None
    for file in files:
        data = file.read_bytes()
        size += len(data)
        lines += data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        if anchor is None and ANCHOR_MARKER in data:
            anchor = file
    return Corpus(name, cwd, path, files, lines, size, anchor, **extra)


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
        shutil.copytree(
            fixtures, target / f"proj_{k}", ignore=shutil.ignore_patterns("__pycache__", CACHE_DIRNAME, "*.pyc")
        )
        mark_copy(target / f"proj_{k}", f"proj_{k}")
    return _scan("fixtures", workdir, "fixtures_corpus")


def prepare_framework_corpus(workdir: Path, copies: int = 1, dirname: str = "framework_corpus") -> Corpus:
    """The generated training-framework project (bench/framework_corpus.py) at ``workdir/dirname``.

    ``copies`` > 1 puts that many sibling copies of the framework package into the same project
    (the scaling check). Every tool runs at the project root on ``.``, as a user would.
    """
    root = workdir / dirname
    generated = framework_corpus.generate(root, copies=copies)
    name = "framework" if copies == 1 else f"framework x{copies}"
    return _scan(
        name,
        root,
        ".",
        project=True,
        lsp_file=root / generated.trainer,
        edit_line=generated.edit_line,
        edit_text=generated.edit_text,
        expected=generated.expected,
    )


def prepare_examples_corpus(
    workdir: Path,
    examples: int = examples_corpus.DEFAULT_EXAMPLES,
    dirname: str = "examples_corpus",
    name: str = "examples",
) -> Corpus:
    """The generated library with ``examples`` training-example scripts (bench/examples_corpus.py) at
    ``workdir/dirname``: the shape of many entry points reaching the same shared code (issue 48)."""
    root = workdir / dirname
    generated = examples_corpus.generate(root, examples=examples)
    return _scan(
        name,
        root,
        ".",
        project=True,
        expected=generated.expected,
        entry_points=generated.entry_points,
        front_ends=False,
    )


def prepare_dir_corpus(workdir: Path, source: Path, lsp_file: str | None = None) -> Corpus:
    """A copy of the project at ``source`` (``--corpus DIR``), so that its own cache and files stay untouched.

    Copied: every ``*.py``/``*.pyi``/``*.ipynb`` and the configuration files (``pyproject.toml``,
    ``setup.py``, ``setup.cfg``, ``tox.ini``, ``.flake8``) outside VCS, cache and virtualenv folders.
    When the copy's top holds none of the project markers (``pyproject.toml``, ``setup.py``,
    ``setup.cfg``, ``.git``: a git checkout loses its ``.git`` in the copy) an empty ``.git/`` is
    created, so that the CLI, flake8 and the language server all take the copy's top as the project.
    """
    source = source.resolve()
    if not source.is_dir():
        raise SystemExit(f"run_bench: --corpus {source}: not a directory")
    root = workdir / "dir_corpora" / source.name
    for directory, dirnames, filenames in os.walk(source):
        dirnames[:] = sorted(d for d in dirnames if d not in COPY_SKIP_DIRS and not d.endswith(".egg-info"))
        relative = Path(directory).relative_to(source)
        for filename in filenames:
            if filename.endswith(PROJECT_SUFFIXES) or filename in PROJECT_CONFIG_FILES:
                target = root / relative / filename
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(Path(directory) / filename, target)
    root.mkdir(parents=True, exist_ok=True)
    if not any((root / marker).exists() for marker in PROJECT_MARKERS):
        (root / ".git").mkdir()
    chosen = None
    if lsp_file:
        chosen = root / lsp_file
        if not chosen.is_file():
            raise SystemExit(f"run_bench: --lsp-file {lsp_file}: no such file in {source}")
    return _scan(source.name, root, ".", project=True, lsp_file=chosen)


def replicate(corpus: Corpus, factor: int, workdir: Path) -> Corpus:
    """``factor`` copies of ``corpus``'s directory as siblings ``scale_Nx/copyK/...``, each analyzed as separate files."""
    target = workdir / f"scale_{factor}x"
    for k in range(1, factor + 1):
        shutil.copytree(
            corpus.directory, target / f"copy{k}", ignore=shutil.ignore_patterns("__pycache__", CACHE_DIRNAME, "*.pyc")
        )
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


def _relative_to_root(path: Path, root: Path) -> str:
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
                    "path": _relative_to_root(cwd / match["path"], root),
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
                "path": _relative_to_root(path, root),
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
    def load_1m(self) -> float:
        """The highest 1-minute load average any of the row's runs started under."""
        return max(r.measurement.load_avg[0] for r in self.runs)

    @property
    def parsed(self) -> str:
        last = self.runs[-1]
        if last.stats is not None and "cached" in last.stats:  # ours
            return f"{last.stats['parsed']} parsed, {last.stats['cached']} cached / {last.stats['files']}"
        if last.stats is not None:  # parse-only
            return f"{last.stats['parsed']} parsed / {last.stats['files']}"
        return f"{last.files_checked} checked" if last.files_checked is not None else "-"

    def to_dict(self) -> dict:
        runs = []
        for run in self.runs:
            m = asdict(run.measurement)
            m.pop("stdout")
            m.pop("stderr")
            m["cpu_s"] = round(run.measurement.cpu_s, 3)
            m["peak_mb"] = run.measurement.peak_mb
            runs.append(
                {
                    "measurement": m,
                    "stats": run.stats,
                    "files_checked": run.files_checked,
                    "findings": run.findings_count,
                }
            )
        return {
            "name": self.name,
            "wall_s": self.wall_s,
            "cpu_s": self.cpu_s,
            "peak_mb": self.peak_mb,
            "load_1m": self.load_1m,
            "parsed": self.parsed,
            "runs": runs,
        }


def format_table(rows: Sequence[Row], title: str) -> str:
    header = ("run", "wall s", "CPU s", "peak MB", "load 1m", "findings", "files parsed")
    body = [
        (
            r.name,
            f"{r.wall_s:.2f}",
            f"{r.cpu_s:.2f}",
            f"{r.peak_mb:.0f}",
            f"{r.load_1m:.2f}",
            str(r.runs[-1].findings_count if r.runs[-1].findings_count is not None else "-"),
            r.parsed,
        )
        for r in rows
    ]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    aligned = lambda line: "  ".join(
        c.ljust(w) if i in (0, 6) else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))
    )
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
        (OURS_WARM_TEXT, PARSE_1),
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
    lines += [
        f"  {k.ljust(width)}  wall x{v['wall']:<7.3f} CPU x{v['cpu']:<7.3f} mem x{v['peak_mb']:.3f}"
        for k, v in values.items()
    ]
    return "\n".join(lines)


# -- the measurements on one corpus ------------------------------------------------------------


@dataclass
class CorpusResult:
    corpus: Corpus
    rows: list[Row]
    consistent: bool
    mismatches: list[str]
    lsp: dict[str, dict] = field(default_factory=dict)  # LSP_COLD / LSP_WARM -> session summary
    lsp_file: str | None = None  # root-relative path of the file flake8 (one file) and the client opened
    errors: list[str] = field(default_factory=list)  # measurements that could not be made
    #: Language-server publishes that differ from the CLI before the project pass ran (not mismatches:
    #: the server shows the open files' own entry points while edits follow each other).
    lsp_interim: list[str] = field(default_factory=list)


def _findings_key(findings: list) -> str:
    return json.dumps(findings, sort_keys=True)


def _field_differences(a: object, b: object, prefix: str = "", limit: int = 4) -> list[str]:
    """``key: A -> B`` for the (nested) fields where ``a`` and ``b`` differ, at most ``limit``."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for key in sorted(set(a) | set(b), key=str):
            if a.get(key) != b.get(key):
                out.extend(_field_differences(a.get(key), b.get(key), f"{prefix}{key}.", limit - len(out)))
            if len(out) >= limit:
                break
        return out[:limit]
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        out = []
        for index, (x, y) in enumerate(zip(a, b)):
            if x != y:
                out.extend(_field_differences(x, y, f"{prefix}{index}.", limit - len(out)))
            if len(out) >= limit:
                break
        return out[:limit]
    show = lambda v: (json.dumps(v, default=str) if not isinstance(v, str) else repr(v))[:240]
    return [f"{prefix.rstrip('.') or 'value'}: {show(a)} -> {show(b)}"]


_LSP_FIELDS = ("code", "line0", "character0", "end_line0", "end_character0", "message", "related")


def _named(item: object) -> object:
    """An LSP comparison tuple (lsp_client.diagnostic_keys) as a dict with field names."""
    if isinstance(item, tuple) and len(item) == len(_LSP_FIELDS) and isinstance(item[0], str):
        return dict(zip(_LSP_FIELDS, item))
    return item


def _location(item: object) -> tuple:
    if isinstance(item, dict):
        return tuple(item[k] for k in ("path", "line", "column", "line0", "character0", "code") if k in item)
    return (item,)


def describe_difference(got: Sequence, want: Sequence, reference: str) -> str:
    """What differs between two finding lists: counts, then the first pair at the same place field by field."""
    missing = [_named(w) for w in want if w not in got]
    extra = [_named(g) for g in got if g not in want]
    text = f"{len(got)} findings vs {len(want)} in {reference}; {len(missing)} not found here, {len(extra)} only here"
    by_place = {_location(m): m for m in missing}
    for item in extra:
        twin = by_place.get(_location(item))
        if twin is not None:
            fields = "; ".join(_field_differences(twin, item))
            return f"{text}; at {':'.join(str(x) for x in _location(item) if x is not None)} {fields} ({reference} -> here)"
    first = missing[:1] or extra[:1]
    which = "not found here" if missing else "only here"
    return f"{text}; first {which}: {json.dumps(first, default=str)[:400]}"


def compare_findings(labelled: Sequence[tuple[str, list]]) -> list[str]:
    """Labels of the runs whose findings differ from the first one's (with a short reason)."""
    if not labelled:
        return []
    reference_label, reference = labelled[0]
    key = _findings_key(reference)
    problems = []
    for label, findings in labelled[1:]:
        if _findings_key(findings) != key:
            problems.append(f"{label}: {describe_difference(findings, reference, reference_label)}")
    return problems


def touch(path: Path, count: int) -> None:
    with open(path, "ab") as handle:
        handle.write(f"\n# compile-ad-lint bench touch {count}\n".encode())


def _same(label: str, got: list, want: list, reference: str) -> list[str]:
    """One mismatch line (or none) when two comparable finding lists differ."""
    if got == want:
        return []
    return [f"{label}: {describe_difference(got, want, reference)}"]


def marked_mismatches(corpus: Corpus, findings: Sequence[dict]) -> list[str]:
    """A generated corpus: its findings must be exactly the (path, line, code) the generator marked."""
    found = sorted(
        (_relative_to_root(corpus.cwd / f["path"], corpus.directory), f["line"], f["code"]) for f in findings
    )
    want = sorted(tuple(e) for e in corpus.expected or ())
    return _same(f"{corpus.name}: {OURS_COLD} vs the generator's # expect marks", found, want, "the marks")


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
                _same(f"{name} #{i + 1}", run.findings or [], want, f"{OURS_COLD} (as flake8 shows them)")
            )

    if project and flake8 and lsp_file is not None:
        shown = _relative_to_root(lsp_file, corpus.directory)
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
                f"[{corpus.name}] {name}: open {_relative_to_root(lsp_file, corpus.directory)}, {lsp_edits} edits, debounce {lsp_debounce_ms} ms"
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
    shown_file = _relative_to_root(lsp_file, corpus.directory) if lsp_file is not None else None
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


# -- scaling ---------------------------------------------------------------------------------


def scaling(
    make: Callable[[int], Corpus],
    factors: Sequence[int],
    repeat: int,
    log: Callable[[str], None],
    label: str = "torch",
    cleanup: Callable[[Corpus, int], None] | None = None,
    unit: str = "mb",
) -> dict:
    """Cold runs with ``--no-cache`` at every factor (1x included); ``make(factor)`` gives the corpus.

    Growth is judged per MB (``unit="mb"``: the corpus grows by whole copies) or per entry point
    (``unit="entry_points"``: more examples over the same library, where time should grow with the
    number of entry points, not with what each of them reaches).

    Without the cache, no copy can be served from another copy's cache entries within the run (the
    cache is keyed by content, and the analyzer may cache below file level, where the copies'
    marker comments do not reach), so each copy is analyzed as the separate files it is.
    """
    points: list[dict] = []
    for factor in factors:
        log(f"[scaling {label}] preparing {factor}x ...")
        corpus = make(factor)
        runs = []
        for i in range(repeat):
            log(f"[scaling {label}] {factor}x cold --no-cache ({i + 1}/{repeat}) ...")
            run = run_ours(corpus, cold=True, no_cache=True)
            runs.append(run)
            log(f"    {run.measurement.wall_s:.2f} s wall, {run.measurement.cpu_s:.2f} s CPU, stats {run.stats}")
        row = Row(f"x{factor}", runs)
        marked = None
        if corpus.expected is not None:
            problems = marked_mismatches(corpus, runs[-1].findings or [])
            marked = not problems
            for problem in problems:
                log(f"    MISMATCH {problem}")
        points.append(
            {
                "factor": factor,
                "files": len(corpus.files),
                "mb": round(corpus.megabytes, 3),
                "entry_points": corpus.entry_points,
                "load_1m": row.load_1m,
                "wall_s": row.wall_s,
                "cpu_s": row.cpu_s,
                "peak_mb": row.peak_mb,
                "parsed": row.parsed,
                "findings": row.runs[-1].findings_count,
                "findings_as_marked": marked,
            }
        )
        if cleanup is not None:
            cleanup(corpus, factor)
    # Least squares through the origin: time ≈ a * size, in MB and in the growth unit.
    size = "entry_points" if unit == "entry_points" else "mb"
    per = "per_entry_point" if unit == "entry_points" else "per_mb"
    for metric in ("wall_s", "cpu_s"):
        a = sum(p[metric] * p[size] for p in points) / sum(p[size] ** 2 for p in points)
        for p in points:
            p[f"{metric}_per_mb"] = round(p[metric] / p["mb"], 4)
            p[f"{metric}_{per}"] = round(p[metric] / p[size], 4)
            p[f"{metric}_fit"] = round(a * p[size], 3)
    first, last = points[0], points[-1]
    ratio = lambda key: round(last[key] / first[key], 3) if len(points) > 1 else None
    unit_ratio = ratio(f"wall_s_{per}")
    return {
        "corpus": label,
        "unit": unit,
        "points": points,
        "wall_per_mb_ratio_last_vs_1x": ratio("wall_s_per_mb"),
        "cpu_per_mb_ratio_last_vs_1x": ratio("cpu_s_per_mb"),
        "wall_per_unit_ratio_last_vs_1x": unit_ratio,
        "cpu_per_unit_ratio_last_vs_1x": ratio(f"cpu_s_{per}"),
        "largest_factor": last["factor"],
        "findings_as_marked": None
        if all(p["findings_as_marked"] is None for p in points)
        else all(p["findings_as_marked"] is not False for p in points),
        "verdict": growth_verdict(unit_ratio),
        "linear": unit_ratio is not None and unit_ratio <= LINEAR_LIMIT,
    }


#: Growth is called linear when the per-MB wall time of the largest scale is within 20% of 1x's.
LINEAR_LIMIT = 1.2


def growth_verdict(per_unit_ratio: float | None) -> str:
    if per_unit_ratio is None:
        return "one point only"
    if per_unit_ratio < 0.8:
        return "sublinear (fixed costs dominate at 1x)"
    if per_unit_ratio <= LINEAR_LIMIT:
        return "linear (time per unit within 20% across scales)"
    if per_unit_ratio <= 1.5:
        return "slightly superlinear"
    return "superlinear"


def format_scaling(result: dict) -> str:
    corpus = result.get("corpus", "torch")
    entry = result.get("unit") == "entry_points"
    if corpus == "torch":
        where = "copies are sibling directories copyK/torch/..."
    elif entry:
        where = "more example scripts over the same library"
    else:
        where = "copies are sibling packages forge, forge2, ... of one project"
    per, unit_name = ("per_entry_point", "s/entry") if entry else ("per_mb", "s/MB")
    lines = [f"scaling, {corpus} corpus (ours, --no-cache, default jobs; {where}):"]
    lines.append(
        f"  {'size':>5} {'files':>6} {'entries':>7} {'MB':>7} {'wall s':>8} {'fit s':>8} {unit_name:>8} {'CPU s':>8} {'peak MB':>8} {'load 1m':>7} {'findings':>8}  parsed"
    )
    for p in result["points"]:
        entries = p.get("entry_points") if p.get("entry_points") is not None else "-"
        lines.append(
            f"  {str(p['factor']) + 'x':>5} {p['files']:>6} {entries!s:>7} {p['mb']:>7.2f} {p['wall_s']:>8.2f} {p['wall_s_fit']:>8.2f} {p[f'wall_s_{per}']:>8.3f} {p['cpu_s']:>8.2f} {p['peak_mb']:>8.0f} {p.get('load_1m', 0.0):>7.2f} {p.get('findings', '-')!s:>8}  {p['parsed']}"
        )
    what = "per-entry-point" if entry else "per-MB"
    lines.append(
        f"  {what} wall time, {result['points'][-1]['factor']}x vs 1x: x{result.get('wall_per_unit_ratio_last_vs_1x', result['wall_per_mb_ratio_last_vs_1x'])}"
        f" (CPU x{result.get('cpu_per_unit_ratio_last_vs_1x', result['cpu_per_mb_ratio_last_vs_1x'])}) -> {result['verdict']}"
    )
    if result.get("findings_as_marked") is not None:
        lines.append(
            f"  findings exactly the generator's marks at every scale: {'yes' if result['findings_as_marked'] else 'NO'}"
        )
    return "\n".join(lines)


def format_lsp(result: CorpusResult) -> str:
    if not result.lsp:
        return ""
    lines = [
        f"language server (scripted stdio client: open {result.lsp_file}, then one-line edits; latencies are beyond the debounce):"
    ]
    lines.append(
        f"  {'session':<42} {'startup s':>9} {'open s':>8} {'idle s':>7} {'edits':>5} {'p50 s':>8} {'max s':>8} {'settle s':>8} {'diags':>5}  warm CLI s (text / json)"
    )
    for name, s in result.lsp.items():
        warm = (
            f"{s['warm_cli_wall_s']:.2f} / {s['warm_cli_json_wall_s']:.2f}"
            if s.get("warm_cli_wall_s") is not None
            else "-"
        )
        p50 = f"{s['edit_p50_s']:.3f}" if s["edit_p50_s"] is not None else "-"
        top = f"{s['edit_max_s']:.3f}" if s["edit_max_s"] is not None else "-"
        settle = f"{s['settle_s']:.2f}" if s.get("settle_s") is not None else "-"
        idle = f"{s['ready_s']:.2f}" if s.get("ready_s") is not None else "-"
        lines.append(
            f"  {name:<42} {s['startup_s']:>9.2f} {s['open_s']:>8.3f} {idle:>7} {len(s['edit_s']):>5} {p50:>8} {top:>8} {settle:>8} {s['diagnostics_at_open']:>5}  {warm}"
        )
    lines.append(
        "  idle: the open's diagnostics to the server's last message before it was idle (its indexing of"
        " the open file and its project pass ended); the first edit follows then ('-': at once)"
    )
    lines.append(
        "  settle: the last edit's diagnostics to the end of the project pass after it (the whole project"
        " checked with the buffer once it stayed unchanged for the server's idle time)"
    )
    return "\n".join(lines)


# -- targets (issue 12) ------------------------------------------------------------------------


@dataclass
class Target:
    corpus: str
    what: str
    measured: str
    target: str
    met: bool | None  # None: not measured in this run

    @property
    def status(self) -> str:
        return "not measured" if self.met is None else ("met" if self.met else "NOT met")


def _row(entry: dict | None, name: str) -> dict | None:
    if not entry:
        return None
    for row in entry["rows"]:
        if row["name"] == name:
            return row
    return None


def targets(results: dict, project_corpora: Sequence[str] = ("framework",)) -> list[Target]:
    """The table of issue 12: each target next to the figure this run measured."""
    out: list[Target] = []
    corpora = results.get("corpora", {})
    torch_entry = corpora.get("torch")
    torch_label = f"torch ({torch_entry['corpus']['files']} files)" if torch_entry else "torch"
    cold, parse2 = _row(torch_entry, OURS_COLD), _row(torch_entry, PARSE_2)
    judged = _row(torch_entry, OURS_COLD_TEXT) or cold
    goal = "<= 10 s and <= 0.25x parse-only (2 processes), same run"
    if judged and parse2:
        ratio = judged["wall_s"] / parse2["wall_s"] if parse2["wall_s"] else float("inf")
        out.append(
            Target(
                torch_label,
                "CLI cold",
                f"{_cold_figure(judged, cold)}; parse-only, 2 processes {parse2['wall_s']:.1f} s (x{ratio:.2f})",
                goal,
                judged["wall_s"] <= 10 and ratio <= 0.25,
            )
        )
    else:
        out.append(
            Target(
                torch_label,
                "CLI cold",
                f"{_cold_figure(judged, cold)}; no 2-process parse-only in this run" if judged else "-",
                goal,
                None,
            )
        )
    warm = _row(torch_entry, OURS_WARM)
    if warm:
        out.append(
            _warm_target(
                torch_label,
                warm,
                _row(torch_entry, OURS_WARM_TEXT),
                goal="informational (issue 12 sets no torch warm target; README: < 2 s)",
                limit=2.0,
            )
        )
    out.append(
        Target(
            torch_label,
            "peak memory, CLI cold (process tree RSS)",
            f"{cold['peak_mb']:.0f} MB" if cold else "-",
            "<= 1 GiB (1024 MB)",
            cold["peak_mb"] <= 1024 if cold else None,
        )
    )
    growth = results.get("scaling", {}).get("torch")
    if growth and len(growth["points"]) > 1:
        out.append(_growth_target(torch_label, growth))
    for name in project_corpora:
        entry = corpora.get(name)
        label = f"{name} ({entry['corpus']['files']} files)" if entry else name
        cold, warm = _row(entry, OURS_COLD), _row(entry, OURS_WARM)
        judged = _row(entry, OURS_COLD_TEXT) or cold
        out.append(
            Target(
                label,
                "CLI cold",
                f"{_cold_figure(judged, cold)} ({cold['parsed']}; load {judged.get('load_1m', 0.0):.1f})"
                if judged and cold
                else "-",
                "<= 10 s",
                judged["wall_s"] <= 10 if judged else None,
            )
        )
        out.append(_warm_target(label, warm, _row(entry, OURS_WARM_TEXT)))
        diffed = _row(entry, OURS_DIFF_WARM)
        out.append(
            Target(
                label,
                "CLI --diff, warm cache (issue 48)",
                f"{diffed['wall_s']:.2f} s (load {diffed.get('load_1m', 0.0):.1f})" if diffed else "-",
                "<= 1 s",
                diffed["wall_s"] <= 1 if diffed else None,
            )
        )
        growth = results.get("scaling", {}).get(name)
        if growth and len(growth["points"]) > 1:
            out.append(_growth_target(label, growth))
        elif name in ("framework", "examples"):
            out.append(Target(label, "growth 1x/2x/4x", "not run (--scales / --scaling)", "linear", None))
        if entry and entry["corpus"].get("front_ends") is False:
            continue  # the examples corpus: no flake8 or language-server rows
        f_file, f_cold = _row(entry, FLAKE8_FILE), _row(entry, FLAKE8_COLD)
        shown = entry.get("lsp_file") if entry else None
        out.append(
            Target(
                label,
                f"flake8 --select CAL {shown or '<file>'}, right after a warm CLI run",
                f"{f_file['wall_s']:.2f} s" if f_file else "-",
                "<= 2 s",
                f_file["wall_s"] <= 2 if f_file else None,
            )
        )
        if f_cold and judged:  # flake8 prints no fix edits: against the cold text report
            ratio = f_cold["wall_s"] / judged["wall_s"] if judged["wall_s"] else float("inf")
            alone = _row(entry, FLAKE8_WITHOUT_CAL)
            # What flake8 costs without our plugin (its own checkers run on every file whatever
            # --select says), and what our plugin adds to it, against the CLI.
            floor = (
                f"; flake8 without our plugin {alone['wall_s']:.1f} s, so the plugin adds"
                f" {f_cold['wall_s'] - alone['wall_s']:.1f} s"
                f" (x{(f_cold['wall_s'] - alone['wall_s']) / judged['wall_s']:.2f} the CLI cold run)"
                if alone and judged["wall_s"]
                else ""
            )
            out.append(
                Target(
                    label,
                    "flake8 --select CAL . cold",
                    f"{f_cold['wall_s']:.1f} s vs CLI cold {judged['wall_s']:.1f} s (x{ratio:.2f}){floor}",
                    "<= 1.2x the CLI cold run",
                    ratio <= 1.2,
                )
            )
        else:
            out.append(Target(label, "flake8 --select CAL . cold", "-", "<= 1.2x the CLI cold run", None))
        lsp = entry.get("lsp", {}) if entry else {}
        for session, short in ((LSP_COLD, "no cache on disk"), (LSP_WARM, "after a warm CLI run")):
            s = lsp.get(session)
            what = f"LSP one-line edit to diagnostics, beyond the debounce, once the project is analyzed ({short})"
            if s and s["edit_s"]:
                at_once = lsp.get(LSP_COLD_AT_ONCE if session == LSP_COLD else LSP_WARM_AT_ONCE)
                worst = (
                    f"; editing at once after the open instead: p50 {at_once['edit_p50_s'] * 1000:.0f} ms, max {at_once['edit_max_s'] * 1000:.0f} ms"
                    if at_once and at_once["edit_s"]
                    else ""
                )
                out.append(
                    Target(
                        label,
                        what,
                        f"p50 {s['edit_p50_s'] * 1000:.0f} ms, max {s['edit_max_s'] * 1000:.0f} ms of {len(s['edit_s'])} (open {s['open_s']:.2f} s, idle {s['ready_s']:.1f} s after it"
                        + (f", first edit {s['pause_s']:g} s later)" if s.get("pause_s") else ")")
                        + worst,
                        "<= 300 ms (max)",
                        s["edit_max_s"] <= 0.3,
                    )
                )
            else:
                out.append(Target(label, what, "-", "<= 300 ms (max)", None))
        s = lsp.get(LSP_WARM)
        what = "LSP didOpen to first diagnostics, cache on disk"
        if s and s.get("warm_cli_wall_s") is not None:
            json_wall = (
                f"; the --format json run before it, the first after the no-cache session's edits, {s['warm_cli_json_wall_s']:.2f} s"
                if s.get("warm_cli_json_wall_s") is not None
                else ""
            )
            out.append(
                Target(
                    label,
                    what,
                    f"{s['open_s']:.2f} s; warm CLI {s['warm_cli_wall_s']:.2f} s (text report{json_wall})",
                    "<= warm CLI time (text) + 0.5 s",
                    s["open_s"] <= s["warm_cli_wall_s"] + 0.5,
                )
            )
        else:
            out.append(Target(label, what, "-", "<= warm CLI time + 0.5 s", None))
    identical = [entry.get("findings_identical") for entry in corpora.values()]
    mismatches = sum(len(entry.get("mismatches", ())) for entry in corpora.values())
    scaled = [
        g.get("findings_as_marked")
        for g in results.get("scaling", {}).values()
        if g.get("findings_as_marked") is not None
    ]
    ok = bool(identical) and all(identical) and all(scaled)
    measured = (
        "yes"
        if ok
        else (
            f"NO ({mismatches} differences{', scaled corpora differ from the marks' if not all(scaled) else ''})"
            if identical
            else "-"
        )
    )
    out.append(
        Target(
            "all",
            "findings identical: cold, warm, touched, --jobs 1, --diff, flake8, LSP after its project pass (and the generator's marks)",
            measured,
            "identical",
            ok if identical else None,
        )
    )
    return out


def _cold_figure(judged: dict, json_run: dict | None) -> str:
    """The cold CLI figure: the text report's (what a user runs, and what the target judges), the
    JSON run's beside it (it also resolves every finding's fix edits with LibCST)."""
    if json_run is None or judged is json_run:
        return f"{judged['wall_s']:.1f} s (--format json)"
    return f"{judged['wall_s']:.1f} s (text report); {json_run['wall_s']:.1f} s with --format json"


def _warm_target(
    label: str, warm: dict | None, text: dict | None, goal: str = "<= 0.5 s", limit: float = 0.5
) -> Target:
    """The warm CLI target, judged on the text report (what a user runs), the JSON run beside it."""
    if text:
        measured = (
            f"{text['wall_s']:.2f} s (text report); {warm['wall_s']:.2f} s with --format json"
            if warm
            else f"{text['wall_s']:.2f} s (text report)"
        )
        measured += f" (load {text.get('load_1m', 0.0):.1f})"
        return Target(label, "CLI warm", measured, goal, text["wall_s"] <= limit)
    if warm:
        return Target(label, "CLI warm", f"{warm['wall_s']:.2f} s (--format json)", goal, warm["wall_s"] <= limit)
    return Target(label, "CLI warm", "-", goal, None)


def _growth_target(label: str, growth: dict) -> Target:
    factors = "/".join(f"{p['factor']}x" for p in growth["points"])
    walls = ", ".join(f"{p['wall_s']:.1f}" for p in growth["points"])
    loads = ", ".join(f"{p.get('load_1m', 0.0):.1f}" for p in growth["points"])
    entry = growth.get("unit") == "entry_points"
    what = "per-entry-point" if entry else "per-MB"
    ratio = growth.get("wall_per_unit_ratio_last_vs_1x", growth["wall_per_mb_ratio_last_vs_1x"])
    measured = f"{walls} s (load {loads}); {what} wall x{ratio} at {growth['largest_factor']}x: {growth['verdict']}"
    if entry:
        counts = "/".join(str(p["entry_points"]) for p in growth["points"])
        factors = f"{factors} entry points ({counts})"
    return Target(
        label,
        f"growth {factors} (--no-cache)",
        measured,
        f"linear ({what} wall at the largest scale <= 1.2x 1x's)",
        bool(growth["linear"]),
    )


def format_targets(rows: Sequence[Target]) -> str:
    header = ("corpus", "what", "measured", "target", "status")
    body = [(t.corpus, t.what, t.measured, t.target, t.status) for t in rows]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()
    rule = "-" * len(line(header))
    return "\n".join(
        [
            "targets (issues 12 and 48), every figure measured in this run:",
            rule,
            line(header),
            rule,
            *map(line, body),
            rule,
        ]
    )


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
    results: dict = {
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_avg_start": os.getloadavg(),
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


if __name__ == "__main__":
    sys.exit(main())
