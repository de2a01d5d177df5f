"""The garbage collector paused, by whichever part of the process needs it: the cache's codec while
an entry is written or read, the language server around an edit's analysis and publish. The
collector is one for the process, so the pauses share one count."""

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
