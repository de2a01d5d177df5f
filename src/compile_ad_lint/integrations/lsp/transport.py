"""stdio framing: ``FramedInput`` hands pygls only well-formed frames; ``terminate`` ends the process."""

from __future__ import annotations

import logging
import os
import re
import sys
from typing import BinaryIO, NoReturn

#: The largest message body accepted. A ``Content-Length`` above it is broken framing, not a message.
MAX_MESSAGE_BYTES = 1 << 30

logger = logging.getLogger(__name__)


class FramedInput:
    """stdin as pygls's reader sees it: only well-formed frames get through.

    pygls's loop (``pygls.io_.run_async``) trusts the framing. After a ``Content-Length`` it cannot
    parse (``abc``, ``-5``) it reads the body as header lines, and since a JSON body has no line
    break the next message's header is glued to it and missed, and so on for every message after:
    a deaf server. A huge length is read with one ``read(n)``, which allocates ``n`` bytes up front.

    This reader parses the headers itself and hands pygls each frame as ``Content-Length: N``, a
    blank line and the body. It skips what is not a header, resynchronizing on the last
    ``Content-Length`` of a line (a body glued to the next header), and says on stderr what it
    skipped; it reads bodies in chunks, and ends the input (pygls then stops) with a message on
    stderr when a length is over ``MAX_MESSAGE_BYTES`` or stdin ends inside a message (``broken``).
    A body that is not JSON is pygls's to report; the frames after it are read normally.
    """

    #: Header lines are read at most this long, so input without line breaks never fills memory.
    MAX_LINE = 64 * 1024
    _CHUNK = 1 << 20
    _FIELD = b"content-length:"
    _HEADER = re.compile(rb"[A-Za-z][A-Za-z0-9-]*:[^\r\n]*\r?\n\Z")

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        #: The length of the frame whose header pygls has been given but whose body it has not read.
        self._announced: int | None = None
        self.broken = False

    def readline(self) -> bytes:
        """pygls reads a frame as two header lines, then ``read``: ours are the length and the blank line."""
        if self._announced is not None:
            return b"\r\n"
        length = self._next_length()
        if length is None:
            return b""
        self._announced = length
        return b"Content-Length: %d\r\n" % length

    def read(self, size: int) -> bytes:
        """The body, read in chunks so that memory follows the bytes that came, not the length announced."""
        self._announced = None
        chunks, remaining = [], size
        while remaining:
            chunk = self._stream.read(min(remaining, self._CHUNK))
            if not chunk:
                self._fail(f"stdin ended {size - remaining} bytes into a message of {size} bytes")
                return b""
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)

    def _next_length(self) -> int | None:
        """Read header blocks until one announces a usable length; None at the end of stdin or on fatal framing."""
        length: int | None = None
        skipped = 0
        while True:
            line = self._stream.readline(self.MAX_LINE)
            if not line:
                if length is not None:
                    self._fail("stdin ended inside a message header")
                elif skipped:
                    self._fail(f"stdin ended after {skipped} bytes that were not LSP headers")
                return None
            if not line.strip():  # a blank line ends a header block
                if length is not None:
                    if skipped:
                        logger.warning("skipped %d bytes that were not LSP headers", skipped)
                    return length
                continue
            at = line.lower().rfind(self._FIELD)
            if at < 0:
                if not self._HEADER.match(line):
                    skipped += len(line)
                continue
            skipped += at
            value = line[at + len(self._FIELD) :].strip()
            digits = value.lstrip(b"0")
            if not value.isdigit() or not digits:
                logger.warning("ignored a message with Content-Length %r (not a positive number of bytes)", value[:40])
                length = None
            elif len(digits) > len(str(MAX_MESSAGE_BYTES)) or int(digits) > MAX_MESSAGE_BYTES:
                shown = digits[:20].decode() + ("..." if len(digits) > 20 else "")
                self._fail(
                    f"Content-Length {shown} is over the limit of {MAX_MESSAGE_BYTES} bytes; the client's framing is broken"
                )
                return None
            else:
                length = int(digits)

    def _fail(self, message: str) -> None:
        """Report broken framing on stderr; the caller then ends the input."""
        logger.error("%s; exiting", message)
        self.broken = True


def terminate(code: int) -> NoReturn:
    """End the process now with ``code``.

    Not ``sys.exit``: pygls's ``start_io`` swallows ``SystemExit`` (the code would be lost), and the
    interpreter's exit joins every worker thread, so an analysis still running (it cannot be
    interrupted) would keep the process alive. Nothing is pending: pygls flushes each message it
    writes, and the analysis writes no files.
    """
    sys.stderr.flush()
    os._exit(code)
