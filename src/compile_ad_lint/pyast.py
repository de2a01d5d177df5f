"""``ast.parse`` behind one process-wide lock, reading Python 3.12's syntax on older Pythons.

CPython 3.11 keeps the AST constructor's recursion depth in state shared by every thread
(python/cpython#106905, fixed in 3.12.5 and 3.13): when a thread switch happens while one thread
converts its tree (a garbage collection running a ``__del__`` that releases the GIL), a parse in
another thread corrupts it and one of them fails with ``SystemError: AST constructor recursion
depth mismatch``. Every ``ast.parse`` of this package goes through :func:`parse`, so two threads
never convert trees at the same time. The lock is re-entrant: a finalizer that parses on the same
thread nests its conversion inside the outer one, which keeps the depth balanced.

On a Python older than 3.12, a source the parser rejects is read again without the syntax only
3.12 reads (``newer_syntax.older_syntax``: type parameters, ``type`` aliases, f-strings reusing
their quotes), every other token where it was; a file that still fails reports its first error
past what was rewritten.
"""

from __future__ import annotations

import ast
import sys
import threading

from .core.text import decode
from .newer_syntax import older_syntax

_LOCK = threading.RLock()
#: Whether this Python's parser reads Python 3.12's syntax itself.
_READS_NEWER_SYNTAX = sys.version_info >= (3, 12)


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, one thread at a time (raises what ``ast.parse`` raises)."""
    try:
        with _LOCK:
            return ast.parse(source, filename=filename)
    except SyntaxError as error:
        if _READS_NEWER_SYNTAX:
            raise
        text = _text(source)
        rewritten = older_syntax(text) if text is not None else None
        if rewritten is None:
            raise
        try:
            with _LOCK:
                return ast.parse(rewritten, filename=filename)
        except SyntaxError as later:
            # Past the first error, the file's own error (the first was syntax only 3.12 reads).
            if (later.lineno or 0) > (error.lineno or 0):
                raise later from None
        raise


def _text(source: str | bytes) -> str | None:
    if isinstance(source, str):
        return source
    try:
        return decode(source)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return None
