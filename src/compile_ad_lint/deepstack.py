"""Run the analysis on a thread with a large stack, so deep code is analyzed instead of failing.

Real projects hold 190-module re-export chains and literals nested 150 deep; the interpreter and
LibCST's visitors recurse over them, and CPython's default limit (1,000 frames, 8 MiB main
stack) turned such files into false CAL900 reports or silently lost findings. A thread can be
given a stack of our choosing, and the recursion limit is raised to what that stack holds while
such a thread runs (the limit is process-wide; it is put back afterwards, so a host process such
as flake8 keeps its own limit for its own threads). A RecursionError that still happens is a real
limit, reported on the file where it happens.

The thread's Python frames also get room (``_with_frame_room``): CPython 3.11 and 3.12 keep frames
in 16 KiB chunks and unmap a chunk as soon as the frame at its base returns (python/cpython#142183,
fixed in later 3.13 and 3.14 releases by keeping one chunk), so an interpreter loop that calls
across a chunk boundary maps and unmaps memory on every call (docs/performance.md, "deepstack").
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from functools import cache
from typing import TypeVar

#: Frames the analysis may use. About 20 KiB of C stack per frame in the worst case measured
#: (LibCST visitors through C built-ins), which the stack size below covers.
RECURSION_LIMIT = 20_000
STACK_BYTES = 512 * 1024 * 1024  # reserved address space; only touched pages use memory
#: Slots (8 bytes each) of the frame at the base of the analysis: just over 128 KiB, so CPython
#: puts it in a chunk of 256 KiB and the analysis's frames fill the other 128 KiB before they reach
#: a chunk boundary. More room costs more per root for no fewer mmap calls, less leaves some.
FRAME_ROOM_SLOTS = (1 << 14) + 64

_T = TypeVar("_T")
_lock = threading.Lock()
_running = 0
_host_limit = 0


def call_with_deep_stack(function: Callable[..., _T], *arguments: object) -> _T:
    """``function(*arguments)`` on a fresh thread with a large stack; exceptions propagate."""
    outcome: list = []

    def target() -> None:
        try:
            outcome.append((True, _with_frame_room()(function, arguments)))
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


@cache
def _with_frame_room() -> Callable[[Callable[..., _T], tuple], _T]:
    """A function that calls ``function(*arguments)`` from a frame of ``FRAME_ROOM_SLOTS`` slots
    (its code given that many unused locals), where frames live in chunks (CPython 3.11 on):
    the frames it calls share the rest of the chunk that frame opens, with no boundary to call
    across."""

    def call(function: Callable[..., _T], arguments: tuple) -> _T:
        return function(*arguments)

    if sys.implementation.name != "cpython" or sys.version_info < (3, 11):
        return call  # frames are separate objects: no chunks to cross
    code = call.__code__
    unused = tuple(f"_room_{slot}" for slot in range(FRAME_ROOM_SLOTS))
    call.__code__ = code.replace(co_varnames=code.co_varnames + unused, co_nlocals=code.co_nlocals + len(unused))
    return call


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
