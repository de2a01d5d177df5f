"""Runtime tuning of the process an analysis runs in: how much memory a check's walk summaries may
take (the garbage collector's settings are ``core/collector.py``'s)."""

from __future__ import annotations

import os
import sys

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
