"""The garbage collector's settings, one for the process, so each is counted for the process:
paused (``collector_paused``) by the cache's codec while an entry is written or read and by the
language server around an edit's analysis and publish; its youngest generation run less often
(``fewer_collections``) while a root is analyzed or fixes are built."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class CollectorPause:
    """No garbage collection while a pause is held. The language server holds one while the open
    files' entry points are analyzed or rehearsed, and until an analysis's diagnostics are
    published and the heap settled (``integrations.lsp.heap.settle_heap``): the youngest
    generation's passes during the analysis took 17-32 ms each, one or two in each 0.1-0.2 s edit of
    the generated framework's trainer, and the one due when the collector came back on ran before
    the publish (14-21 ms of each edit's latency). The cache's codec holds one while an entry is
    written or read (docs/performance.md, "the cache's writes").

    Pauses overlap (an edit's analysis and publish on the event loop, a rehearsal or the project
    pass's cache writes on the analysis thread): the collector comes back on when the last pause
    ends, if it was on when the first began."""

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
