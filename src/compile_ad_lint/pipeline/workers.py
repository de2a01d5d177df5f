"""Worker processes for one check: each task sent to the worker where it costs least.

A worker keeps what it has read for the rest of the check (module views, walk summaries), so a root
analyzed again in a later round, as a caller of functions the round before requested, costs least
where it was analyzed first (a fraction of its cost elsewhere: docs/performance.md, "workers"). A
pool that hands tasks to whichever process asks first cannot know that, so each worker is a pool
of one and this class chooses.

Tasks go out largest first (by the cost the caller estimates): a large root taken last keeps one
worker busy while the others wait.
"""

from __future__ import annotations

import gc
import os
import threading
import time
from collections.abc import Callable, Generator, Hashable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

#: Tasks sent to a worker before it finishes one: the next is waiting there when it does, where
#: sending it only then leaves the worker idle for the round trip through this process.
_SENT_AHEAD = 2


class WorkerPool:
    """``jobs`` worker processes, started with ``initializer(*initargs)``, that remember which
    worker ran a task of each home (a root's path) and send later tasks of that home back to it."""

    def __init__(self, jobs: int, initializer: Callable[..., None], initargs: tuple) -> None:
        started = (os.getpid(), initializer, initargs)
        self._workers = [ProcessPoolExecutor(max_workers=1, initializer=_start, initargs=started) for _ in range(jobs)]
        self._home_of: dict[Hashable, int] = {}

    def run(
        self,
        function: Callable[[Any], Any],
        tasks: Sequence[Any],
        costs: Sequence[float],
        homes: Sequence[Hashable] | None = None,
    ) -> Generator[tuple[int, Any], None, None]:
        """``function(task)`` for every task in the workers: (position in ``tasks``, result), in
        the order they finish. Closing the iterator early cancels what was not started.

        Each worker takes, largest first, a task of its own home (one it ran a task of before) or
        of no home yet; a task whose home is another worker only when that worker has at least
        the task's cost waiting besides it (moved, the task pays again for what its home had read,
        so it waits for a little work at home rather than move)."""
        waiting = sorted(range(len(tasks)), key=lambda position: -costs[position])  # stable for ties
        sent: dict[Future, tuple[int, int]] = {}
        load = [0] * len(self._workers)
        try:
            while waiting or sent:
                for ahead in range(1, _SENT_AHEAD + 1):  # each worker one task before any a second
                    for worker in range(len(self._workers)):
                        if load[worker] >= ahead or not waiting:
                            continue
                        position = self._next(waiting, worker, costs, homes)
                        if position is None:
                            continue
                        if homes is not None:
                            self._home_of[homes[position]] = worker
                        sent[self._workers[worker].submit(function, tasks[position])] = (position, worker)
                        load[worker] += 1
                done, _ = wait(sent, return_when=FIRST_COMPLETED)
                for future in done:
                    position, worker = sent.pop(future)
                    load[worker] -= 1
                    yield position, future.result()
        finally:
            for future in sent:
                future.cancel()

    def _next(
        self, waiting: list[int], worker: int, costs: Sequence[float], homes: Sequence[Hashable] | None
    ) -> int | None:
        """Take from ``waiting`` (largest first) the task ``worker`` runs next; None when every task
        left is better left to its own worker."""
        if homes is None:
            return waiting.pop(0)
        home = [self._home_of.get(homes[position]) for position in waiting]
        backlog: dict[int, float] = {}
        for position, where in zip(waiting, home):
            if where is not None:
                backlog[where] = backlog.get(where, 0.0) + costs[position]
        for index, (position, where) in enumerate(zip(waiting, home)):
            if where is None or where == worker or backlog[where] >= 2 * costs[position]:
                return waiting.pop(index)
        return None

    def close(self, *, wait_for_running: bool = True) -> None:
        """Stop the workers; without ``wait_for_running``, tasks not started are cancelled and this
        returns at once (running ones finish on their own)."""
        for worker in self._workers:
            worker.shutdown(wait=wait_for_running, cancel_futures=not wait_for_running)


#: How often a worker looks whether the process that started it is still there.
PARENT_CHECK_SECONDS = 0.5


def _start(parent: int, initializer: Callable[..., None], initargs: tuple) -> None:
    """A worker's start: it exits when ``parent`` does (``_exit_with``), then runs ``initializer``."""
    _exit_with(parent)
    # What the worker inherits from its parent by fork is never its garbage: frozen, no full
    # collection walks it (after a --diff's fixes, the parent holds their LibCST trees).
    gc.freeze()
    initializer(*initargs)


def _exit_with(parent: int) -> None:
    """Exit this process once ``parent`` is gone. A worker waits for its next task on a pipe whose
    writing end it holds itself (forked with it), so the parent's death (SIGKILL from an IDE or
    the OOM killer) never reaches it as the end of its input: it would wait for ever. A thread
    looks whether it was adopted (its parent id changed: its parent, or the fork server that
    started it, is gone) or ``parent`` is gone."""
    started_by = os.getppid()

    def watch() -> None:
        while os.getppid() == started_by and _alive(parent):
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="compile-ad-lint parent watch", daemon=True).start()


def _alive(pid: int) -> bool:
    if os.name != "posix":
        return True  # os.kill(pid, 0) would end the process on Windows
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # there, not ours to signal
    return True
