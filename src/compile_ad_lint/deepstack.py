"""Run the analysis on a thread with a large stack, so deep code is analyzed instead of failing.

Real projects hold 190-module re-export chains and literals nested 150 deep; the interpreter and
LibCST's visitors recurse over them, and CPython's default limit (1,000 frames, 8 MiB main
stack) turned such files into false CAL900 reports or silently lost findings. A thread can be
given a stack of our choosing, and the recursion limit is raised to what that stack holds while
such a thread runs (the limit is process-wide; it is put back afterwards, so a host process such
as flake8 keeps its own limit for its own threads). A RecursionError that still happens is a real
limit, reported on the file where it happens.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

#: Frames the analysis may use. About 20 KiB of C stack per frame in the worst case measured
#: (LibCST visitors through C built-ins), which the stack size below covers.
RECURSION_LIMIT = 20_000
STACK_BYTES = 512 * 1024 * 1024  # reserved address space; only touched pages use memory

_T = TypeVar("_T")
_lock = threading.Lock()
_running = 0
_host_limit = 0


def call_with_deep_stack(function: Callable[..., _T], *arguments: object) -> _T:
    """``function(*arguments)`` on a fresh thread with a large stack; exceptions propagate."""
    outcome: list = []

    def target() -> None:
        try:
            outcome.append((True, function(*arguments)))
        except BaseException as error:
            outcome.append((False, error))

    _enter()
    try:
        with _lock:  # stack_size is process-wide too: set it for this thread only
            previous = threading.stack_size(STACK_BYTES)
            try:
                thread = threading.Thread(target=target, name="compile-ad-lint-analysis", daemon=True)
                thread.start()
            finally:
                threading.stack_size(previous)
        thread.join()
    finally:
        _leave()
    succeeded, value = outcome[0]
    if not succeeded:
        raise value
    return value


def _enter() -> None:
    global _running, _host_limit
    with _lock:
        if _running == 0:
            _host_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_host_limit, RECURSION_LIMIT))
        _running += 1


def _leave() -> None:
    global _running
    with _lock:
        _running -= 1
        if _running == 0:
            sys.setrecursionlimit(_host_limit)
