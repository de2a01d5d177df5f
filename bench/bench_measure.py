"""Measuring one process tree: wall time, CPU time and peak memory of a command and its children."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

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
