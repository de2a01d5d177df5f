"""Runtime tuning of the process an analysis runs in: the garbage collector's thresholds, and
how much memory a check's walk summaries may take."""

from __future__ import annotations

import gc
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the garbage collector's youngest generation every 50,000 allocations instead of 700
    while a root is analyzed, or fixes are built with LibCST: both allocate millions of small
    values, few of them in cycles (generated framework, --jobs 1: 8 % less time, 30 MB more
    memory). The thresholds are put back after, for the process hosting the work (flake8, the
    editor), by the last of the tasks running at the same time in its threads."""
    global _analyses_running, _thresholds_before
    with _THRESHOLD_LOCK:
        if _analyses_running == 0:
            _thresholds_before = gc.get_threshold()
            gc.set_threshold(50_000, *_thresholds_before[1:])
        _analyses_running += 1
    try:
        yield
    finally:
        with _THRESHOLD_LOCK:
            _analyses_running -= 1
            if _analyses_running == 0:
                gc.set_threshold(*_thresholds_before)


_THRESHOLD_LOCK = threading.Lock()
_analyses_running = 0
_thresholds_before = gc.get_threshold()


#: The resident memory past which a check's process stops keeping walk summaries
#: (``WalkMemory.retire``), at most and at least: a share of the machine's memory per processor in
#: between (``walk_summary_budget``). On microsoft/DeepSpeed's tests (``tests/unit/runtime``,
#: ``--jobs 1``) the summaries took 2.1 GB against 0.68 GB without them, for no time saved (154
#: against 149 s); huggingface/diffusers' check peaks at 1.0 GB a process with them, and takes
#: 30 % longer when they stop at 768 MB (docs/performance.md).
WALK_SUMMARY_MEMORY_BYTES = 1536 * 1024 * 1024
WALK_SUMMARY_MEMORY_FLOOR_BYTES = 768 * 1024 * 1024


def walk_summary_budget() -> int:
    """The resident memory past which a check's process stops keeping walk summaries: half the
    machine's memory shared among its processors (a check starts a worker per processor), within
    ``WALK_SUMMARY_MEMORY_FLOOR_BYTES`` and ``WALK_SUMMARY_MEMORY_BYTES``."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # Windows, or the platform does not say
        return WALK_SUMMARY_MEMORY_FLOOR_BYTES
    share = total // (2 * (os.cpu_count() or 1))
    return max(WALK_SUMMARY_MEMORY_FLOOR_BYTES, min(WALK_SUMMARY_MEMORY_BYTES, share))


def peak_resident_bytes() -> int | None:
    """This process's peak resident memory so far, None where the platform does not say."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB on Linux
