"""Run ``_child.py`` in an isolated subprocess: a private copy of the project, no bytecode, a timeout,
and every process the run started ended when the run ends.

Nothing here imports torch; the child does.

Processes. Each run gets a unique marker in its environment (``COMPILE_AD_LINT_CONFIRM_RUN``) and its
own session (process group); on Linux the child makes itself a child subreaper, so processes whose
parent died, daemons included, stay its descendants. When the run ends (timed out, crashed or
finished), every process that carries the marker, plus, while the child is not yet reaped, every
descendant of it, is stopped (so that it cannot fork any more) and then killed, and the scan repeats
until none is left; then the process group is killed. Scanning needs ``/proc``; elsewhere only the
process group is killed. A process started with an environment that drops the marker is found only
through the child's tree: on a timeout here, at a normal end by the child itself, which kills what
is left of its tree before it exits.

Files. Each run works on its own copy of the project (:class:`SourceTree`) and starts in the copy of
the project root, so what the code writes next to its files or relative to the working directory
lands in the copy, which is deleted after the run. The child reports paths inside the copy as the
original paths, so traces, stacks and verdicts never see the copy.
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from ..core.settings import DEFAULT_EXCLUDES, matches_any
from .entries import Entry

CHILD = Path(__file__).with_name("_child.py")
#: Environment variable whose value, unique per run, marks every process the run started.
MARKER = "COMPILE_AD_LINT_CONFIRM_RUN"
#: Other files larger than this, or beyond the total, are left out of the copies (checkpoints, data sets).
COPY_FILE_LIMIT = 1 << 20
COPY_TOTAL_LIMIT = 64 << 20
#: Python sources and extension modules are always copied, whatever their size: imports need them.
_IMPORTABLE = tuple(importlib.machinery.all_suffixes())
_PROC = Path("/proc")
#: Bound on the stop/kill scans (each round handles everything found; a fork storm needs a few).
_SCAN_ROUNDS = 50


@dataclass
class RunOutcome:
    """What one subprocess run produced. ``result`` is the child's result.json (None if it wrote none)."""

    directory: Path
    result: dict | None
    returncode: int | None
    timed_out: bool
    seconds: float
    stdout_lines: int = 0
    stderr_tail: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        if self.timed_out:
            return "timeout"
        if self.result is None:
            return "crashed"
        return self.result.get("status", "crashed")

    def output_summary(self) -> str:
        tail = " | ".join(line.strip() for line in self.stderr_tail[-3:] if line.strip())
        text = f"stdout {self.stdout_lines} lines"
        return f"{text}; stderr tail: {tail[:300]}" if tail else text

    def tensor(self, entry: dict) -> list[float]:
        from array import array

        data = array("d")
        with open(self.directory / "tensors.bin", "rb") as handle:
            handle.seek(entry["offset"])
            data.fromfile(handle, entry["count"])
        return list(data)


@dataclass(frozen=True)
class RunSpec:
    """What one run of an entry point does, as the session decides it; ``document`` is the one place
    it becomes the JSON the child reads (``run_child`` adds where to write and the copy's folders).

    ``focus``: the files with findings (events called from elsewhere are not recorded); ``watch``:
    the files whose executed lines are recorded (the eager run, to tell whether the entry reaches
    the site); ``force``: (compiled callable handle, matching value) pairs for the matching-config
    run; ``assume``: the handles whose backward the eager differential runs under the autocast
    state their compiled backward assumed; ``roots``: the import roots (the entry's own is added).
    """

    entry: Entry
    device: str
    compiled: bool = False
    roots: tuple[str, ...] = ()
    focus: tuple[str, ...] = ()
    watch: tuple[str, ...] = ()
    force: tuple[tuple[int, object], ...] = ()
    assume: tuple[int, ...] = ()

    def document(self) -> dict[str, Any]:
        entry = self.entry
        document: dict[str, Any] = {
            "mode": "run",
            "device": self.device,
            "compiled": self.compiled,
            "entry": {"kind": entry.kind, "module": entry.module, "path": entry.path, "function": entry.function},
            "roots": [*self.roots, *([entry.root] if entry.root else [])],
            "focus": list(self.focus),
            "watch": list(self.watch),
            "force": [[handle, value] for handle, value in self.force],
        }
        if self.assume:
            document["assume"] = list(self.assume)
        return document


# -- the private copy of the project --------------------------------------------------------------


@dataclass(frozen=True)
class SourceTree:
    """The project files every run gets a fresh copy of, listed by one walk of the import roots.

    The outermost roots are walked with discovery's default excludes pruned (VCS folders, virtual
    environments, caches, build output). Importable files (Python sources, extension modules) are
    always listed; other regular files (configs, small data read next to the code) up to
    ``COPY_FILE_LIMIT`` each and ``COPY_TOTAL_LIMIT`` in all, so that a checkpoint or a data set is
    never copied (``left_out`` counts them; the code finds them missing). Folders, empty ones
    included, are recreated; a symlinked folder becomes a link to the copy of its target when that is
    inside a root, else to the target itself. The copy is fresh per run, so every run of an entry
    point starts from the same files whatever an earlier run wrote. ``python`` lists the Python
    sources, which the confirm cache key hashes.
    """

    roots: tuple[str, ...]  # outermost import roots, resolved; root i is copied to <tree>/i/<its name>
    directories: tuple[str, ...]  # relative to the tree folder
    files: tuple[tuple[str, str], ...]  # (original path, destination relative to the tree folder)
    links: tuple[tuple[str, str], ...]  # (destination relative to the tree folder, resolved target)
    python: tuple[str, ...]
    start: str | None = None  # the folder runs start in (the project root), when inside a root
    left_out: int = 0

    @classmethod
    def scan(
        cls, roots: Iterable[str], *, start: str | None = None, extra: Iterable[str] = (), skip: str | None = None
    ) -> SourceTree:
        """List the copy of ``roots``. ``extra``: files to copy even where the excludes prune them (the
        flagged files, ``--entry`` files); ``skip``: a folder never to copy (the session's own work folder)."""
        skip = os.path.realpath(skip) if skip is not None else None
        outer: list[str] = []
        for root in sorted({os.path.realpath(r) for r in roots}, key=lambda r: (r.count(os.sep), r)):
            if not any(_inside(root, kept) for kept in outer):
                outer.append(root)
        directories: list[str] = []
        files: list[tuple[str, str]] = []
        links: list[tuple[str, str]] = []
        budget = [COPY_TOTAL_LIMIT]
        left_out = 0
        for index, root in enumerate(outer):
            if not os.path.isdir(root):
                continue
            for directory, subdirs, names in os.walk(root, followlinks=False):
                base = _join(_destination(index, root), os.path.relpath(directory, root))
                directories.append(base)
                kept = []
                for name in sorted(subdirs):
                    path = os.path.join(directory, name)
                    if _excluded(name) or (skip is not None and _inside(path, skip)):
                        continue
                    if os.path.islink(path):
                        links.append((_join(base, name), os.path.realpath(path)))
                    else:
                        kept.append(name)
                subdirs[:] = kept
                for name in sorted(names):
                    if _excluded(name):
                        continue
                    path = os.path.join(directory, name)
                    if _copied(path, budget):
                        files.append((path, _join(base, name)))
                    else:
                        left_out += 1
        listed = {source for source, _ in files}
        for path in map(os.path.realpath, extra):
            holder = next((i for i, root in enumerate(outer) if _inside(path, root)), None)
            if holder is not None and path not in listed and os.path.isfile(path):
                files.append((path, _join(_destination(holder, outer[holder]), os.path.relpath(path, outer[holder]))))
                listed.add(path)
        start = os.path.realpath(start) if start is not None else None
        return cls(
            roots=tuple(outer),
            directories=tuple(directories),
            files=tuple(files),
            links=tuple(links),
            python=tuple(sorted(source for source, _ in files if source.endswith(".py"))),
            start=start if start is not None and any(_inside(start, root) for root in outer) else None,
            left_out=left_out,
        )

    def size(self) -> int:
        """Bytes one copy takes (as of now)."""
        total = 0
        for source, _ in self.files:
            try:
                total += os.stat(source).st_size
            except OSError:
                pass
        return total

    def materialize(self, tree: Path) -> list[tuple[str, str]]:
        """Copy the files into ``tree``; the (copy, original) folder pairs, copy paths resolved."""
        tree.mkdir(parents=True, exist_ok=True)
        real = os.path.realpath(tree)
        origins = [(os.path.join(real, _destination(index, root)), root) for index, root in enumerate(self.roots)]
        for directory in self.directories:
            os.makedirs(os.path.join(real, directory), exist_ok=True)
        for source, destination in self.files:
            target = os.path.join(real, destination)
            try:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copy2(source, target)
            except OSError:  # removed or unreadable since the scan: absent from this copy, as from the project
                pass
        into = [(original, copy) for copy, original in origins]
        for destination, target in self.links:
            try:
                os.symlink(relocate(target, into), os.path.join(real, destination), target_is_directory=True)
            except OSError:
                pass
        return origins


def relocate(path: str, pairs: Sequence[tuple[str, str]]) -> str:
    """``path`` moved from the first folder of the pair that contains it to the second (unchanged if none)."""
    for source, destination in pairs:
        if _inside(path, source):
            return destination + path[len(source) :]
    return path


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _destination(index: int, root: str) -> str:
    """Where root ``index`` goes in the tree folder: its own name is kept (code may look at it)."""
    return os.path.join(str(index), os.path.basename(root) or "root")


def _join(base: str, relative: str) -> str:
    return base if relative == os.curdir else os.path.join(base, relative)


def _excluded(name: str) -> bool:
    return matches_any(PurePath(name), DEFAULT_EXCLUDES)


def _copied(path: str, budget: list[int]) -> bool:
    """Whether a walked file goes into the copies (``budget``: bytes left for files that are not importable)."""
    importable = path.endswith(_IMPORTABLE)
    if not importable and budget[0] <= 0:  # a data set past the budget is not even looked at
        return False
    try:
        info = os.stat(path)
    except OSError:  # a dangling link
        return False
    if not stat.S_ISREG(info.st_mode):  # named pipes, sockets and devices are never opened
        return False
    if importable:
        return True
    if info.st_size > COPY_FILE_LIMIT or info.st_size > budget[0]:
        return False
    budget[0] -= info.st_size
    return True


# -- running the child ---------------------------------------------------------------------------


def child_environment(compiled: bool, inductor_cache: Path | None, token: str) -> dict[str, str]:
    env = dict(os.environ)
    env[MARKER] = token
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYTHONSTARTUP", None)
    if compiled:
        env.pop("TORCHDYNAMO_DISABLE", None)
        env.pop("TORCH_COMPILE_DISABLE", None)
    else:
        env["TORCHDYNAMO_DISABLE"] = "1"
        env["TORCH_COMPILE_DISABLE"] = "1"
    # The matching-config run forces the config at read time; the AOTAutograd cache key would not see that.
    env["TORCHINDUCTOR_AUTOGRAD_CACHE"] = "0"
    env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    if inductor_cache is not None:
        env["TORCHINDUCTOR_CACHE_DIR"] = str(inductor_cache)
        env["TRITON_CACHE_DIR"] = str(inductor_cache / "triton")
    return env


def run_child(
    spec: RunSpec | Mapping[str, Any],
    directory: Path,
    timeout: float,
    *,
    compiled: bool = True,
    inductor_cache: Path | None = None,
    tree: SourceTree | None = None,
) -> RunOutcome:
    """Run the child with ``spec`` (``out`` is set to ``directory``) on a fresh copy of ``tree``.

    A ``RunSpec`` runs an entry point (compiled or not as it says); a plain document is another
    mode of the child (``env``: what torch offers).

    The spec's import roots and entry file are moved into the copy; the run starts in the copy of the
    tree's start folder (else in an empty folder). Whatever way the run ends, every process it
    started is killed (see the module docstring) and the copy is deleted.
    """
    if isinstance(spec, RunSpec):
        compiled, spec = spec.compiled, spec.document()
    directory.mkdir(parents=True, exist_ok=True)
    stdout_path, stderr_path = directory / "stdout.txt", directory / "stderr.txt"
    token = uuid.uuid4().hex
    timed_out = False
    try:
        origins = tree.materialize(directory / "tree") if tree is not None else []
        into = [(original, copy) for copy, original in origins]
        spec = (
            _relocated(dict(spec, out=str(directory), origins=origins), into)
            if into
            else dict(spec, out=str(directory))
        )
        start = relocate(tree.start, into) if tree is not None and tree.start is not None else None
        work = Path(start) if start is not None and os.path.isdir(start) else directory / "cwd"
        work.mkdir(exist_ok=True)
        spec_path = directory / "spec.json"
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        started = time.monotonic()
        with open(stdout_path, "wb") as stdout, open(stderr_path, "wb") as stderr:
            process = subprocess.Popen(
                [sys.executable, "-B", str(CHILD), str(spec_path)],
                cwd=work,
                env=child_environment(compiled, inductor_cache, token),
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                start_new_session=True,
            )
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                end_processes(process, token)
    finally:
        shutil.rmtree(directory / "tree", ignore_errors=True)
    seconds = time.monotonic() - started
    result = None
    result_path = directory / "result.json"
    if not timed_out and result_path.is_file():
        try:
            result = json.loads(result_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            result = None
    return RunOutcome(
        directory=directory,
        result=result,
        returncode=None if timed_out else process.returncode,
        timed_out=timed_out,
        seconds=seconds,
        stdout_lines=_count_lines(stdout_path),
        stderr_tail=_tail(stderr_path),
    )


def _relocated(spec: dict[str, Any], into: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """A run ``spec`` with its import roots and entry file in the copy (a file the copy lacks stays where it is)."""
    entry = dict(spec["entry"])
    if entry.get("path"):
        moved = relocate(os.path.realpath(entry["path"]), into)
        entry["path"] = moved if os.path.isfile(moved) else entry["path"]
    return dict(spec, entry=entry, roots=[relocate(os.path.realpath(root), into) for root in spec["roots"]])


# -- ending every process of a run ---------------------------------------------------------------


def end_processes(process: subprocess.Popen, token: str) -> None:
    """Kill everything the run started: its marked processes, its tree while unreaped, its process group.

    Returns once none of them is alive any more (or after a bounded wait for one stuck in the kernel).
    ``process`` must not have been reaped by anyone else: while unreaped its pid still names it, so
    walking its descendants cannot reach an unrelated process that reused the number.
    """
    root = process.pid if process.returncode is None else None  # Popen.wait sets returncode when it reaps
    stopped: set[int] = set()
    for _ in range(_SCAN_ROUNDS):
        marked, parents = _scan(token)
        found = (marked | _descendants(root, parents)) - stopped
        if not found:
            break
        _signal(found, signal.SIGSTOP)  # a stopped process cannot start one we have not seen yet
        stopped |= found
    _signal(stopped, signal.SIGKILL)
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:  # the group is empty (or not ours)
        pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not ignorable
        pass
    for _ in range(_SCAN_ROUNDS):  # a killed process takes a moment to die; one that slipped through is killed
        marked, parents = _scan(token)
        if not marked and not stopped & parents.keys():
            break
        _signal(marked, signal.SIGKILL)
        time.sleep(0.02)


def _scan(token: str) -> tuple[set[int], dict[int, int]]:
    """(living processes whose environment carries the run's marker, the parent of every living process).

    Zombies are dead already and are left to whoever reaps them; this process is never listed. Without
    ``/proc`` (not Linux) nothing is found, and the process group kill is all there is.
    """
    needle = f"{MARKER}={token}".encode()
    parents: dict[int, int] = {}
    marked: set[int] = set()
    try:
        entries = [entry for entry in os.scandir(_PROC) if entry.name.isdigit() and int(entry.name) != os.getpid()]
    except OSError:
        return marked, parents
    for entry in entries:
        try:
            with open(os.path.join(entry.path, "stat"), "rb") as handle:
                line = handle.read()
        except OSError:  # exited meanwhile
            continue
        state, ppid = line[line.rfind(b")") + 2 :].split()[:2]  # the command name may hold spaces and ')'
        if state in (b"Z", b"X"):
            continue
        pid = int(entry.name)
        parents[pid] = int(ppid)
        try:
            with open(os.path.join(entry.path, "environ"), "rb") as handle:
                if needle in handle.read().split(b"\0"):
                    marked.add(pid)
        except OSError:  # another user's process: not one of ours
            pass
    return marked, parents


def _descendants(root: int | None, parents: dict[int, int]) -> set[int]:
    """``root`` and every living process below it (none when ``root`` is None or gone)."""
    if root is None or root not in parents:
        return set()
    children: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    found, pending = {root}, [root]
    while pending:
        for child in children.get(pending.pop(), ()):
            if child not in found:
                found.add(child)
                pending.append(child)
    return found


def _signal(pids: Iterable[int], number: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, number)
        except OSError:  # gone already
            pass


def _count_lines(path: Path) -> int:
    try:
        with open(path, "rb") as handle:
            return sum(1 for _ in handle)
    except OSError:
        return 0


def _tail(path: Path, lines: int = 8) -> list[str]:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 8192))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return []
    noise = ("Failed to initialize NumPy", "_conversion_method_template")
    kept = [line for line in text.splitlines() if line.strip() and not any(n in line for n in noise)]
    return kept[-lines:]
