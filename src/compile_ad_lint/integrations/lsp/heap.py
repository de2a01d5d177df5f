"""The garbage collector while the server runs: paused around the open files' analyses, the heap
settled and frozen after a publish."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager


def settle_heap(whole: bool) -> None:
    """Collect the analyses' garbage and freeze what survives (the memories of summaries, walks and
    findings): the collector's full passes during the next edits then scan only what those edits
    allocate. A full pass over the whole heap took 0.17-0.26 s, every second or third edit of the
    generated framework's trainer (edit latency 0.19 s without one, 0.45 s with). ``whole`` (after
    a project pass, the buffers idle): everything is unfrozen and collected first, so that
    long-lived objects dropped since (replaced entries, evicted walks) do not stay frozen."""
    if whole:
        gc.unfreeze()
    gc.collect()
    gc.freeze()


class CollectorPause:
    """No garbage collection while the open files' entry points are analyzed or rehearsed, and until
    an analysis's diagnostics are published and the heap settled (``settle_heap``): the youngest
    generation's passes during the analysis took 17-32 ms each, one or two in each 0.1-0.2 s edit of
    the generated framework's trainer, and the one due when the collector came back on ran before
    the publish (14-21 ms of each edit's latency). These analyses are bounded (one file's entry
    points); the project pass, which can run long, keeps the collector.

    The collector is one for the process, and pauses overlap (an edit's analysis and publish on the
    event loop, a rehearsal on the analysis thread): it comes back on when the last pause ends, if
    it was on when the first began."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders = 0
        self._was_enabled = False

    @contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._holders == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._holders += 1
        try:
            yield
        finally:
            with self._lock:
                self._holders -= 1
                if self._holders == 0 and self._was_enabled:
                    gc.enable()


collector_paused = CollectorPause()
