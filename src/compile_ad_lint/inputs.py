"""Reading the files of a checked repository that are not source: its ``pyproject.toml`` and the
baseline its configuration names.

A repository's files are input: a ``baseline`` may point at ``/dev/zero`` (read until memory runs
out) or a named pipe (a read that never returns), a file may be as large as a disk. Only regular
files are read (a pipe is opened without waiting for a writer, then refused), and no more than a
limit; what is wrong is an ``InputError`` (an ``OSError``: callers report it as they report a file
they cannot read), its message naming the problem.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

#: The most a ``pyproject.toml`` may hold (the largest real ones are tens of kilobytes).
MAX_CONFIG_BYTES = 4 * 1024 * 1024
#: The most a baseline may hold (an entry is about 150 bytes: over a million findings).
MAX_BASELINE_BYTES = 256 * 1024 * 1024

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)


class InputError(OSError):
    """A file that is not read: not a regular file, or larger than the limit."""


def read_regular(path: Path | str, limit: int) -> bytes:
    """The bytes of the regular file at ``path`` (symlinks followed), at most ``limit`` of them.
    ``InputError`` for anything else, ``OSError`` when it cannot be opened."""
    descriptor = os.open(path, _FLAGS)
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise InputError(f"not a regular file ({_kind(status.st_mode)})")
        if status.st_size > limit:
            raise InputError(f"larger than {limit // (1024 * 1024)} MiB")
        chunks = []
        left = limit + 1  # one byte more: a file that grew past the limit since fstat
        while left > 0:
            chunk = os.read(descriptor, min(left, 1024 * 1024))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(descriptor)
    data = b"".join(chunks)
    if len(data) > limit:
        raise InputError(f"larger than {limit // (1024 * 1024)} MiB")
    return data


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a file"
