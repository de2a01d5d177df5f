"""``ast.parse`` behind one process-wide lock.

CPython 3.11 keeps the AST constructor's recursion depth in state shared by every thread
(python/cpython#106905, fixed in 3.12.5 and 3.13): when a thread switch happens while one thread
converts its tree (a garbage collection running a ``__del__`` that releases the GIL), a parse in
another thread corrupts it and one of them fails with ``SystemError: AST constructor recursion
depth mismatch``. Every ``ast.parse`` of this package goes through :func:`parse`, so two threads
never convert trees at the same time. The lock is re-entrant: a finalizer that parses on the same
thread nests its conversion inside the outer one, which keeps the depth balanced.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.RLock()


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, one thread at a time (raises what ``ast.parse`` raises)."""
    with _LOCK:
        return ast.parse(source, filename=filename)
