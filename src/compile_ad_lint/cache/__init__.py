"""The project's ``.compile_ad_lint_cache/``: module outlines, root results and what each read,
a check's findings, files' called names, fix edits and confirm verdicts.

Security model: the cache sits inside the checked repository, and a repository can ship any bytes
there. So nothing read from it can execute (entries are data, decoded by ``codec`` into the
analyzer's own dataclasses and checked against their annotations), and nothing it did not write
is believed:

* the directory must be one this tool created *here*: its marker file records the directory's
  device and inode, which a clone, checkout or copy cannot reproduce, and a random secret;
* every entry carries an HMAC of its key and payload under that secret, so an entry planted in
  a genuine cache directory (``git pull`` of a tracked file) is rejected too;
* a symlinked, non-directory or unmarked ``.compile_ad_lint_cache`` is neither read nor written
  (the reason is printed on stderr once per process), entries and their folders are opened
  without following symlinks.

Keys include a digest of this package's own source files (``build_digest``), so two builds with
the same version string never share entries. Entries are written to ``tmp/`` and renamed into
place, so concurrent runs never see half-written entries; temporary files of killed runs are
removed by a later run. An entry that fails any check is ignored and rebuilt.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import stat
import sys
import threading
import time
import typing
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from .._version import __version__
from . import codec

CACHE_DIRECTORY = ".compile_ad_lint_cache"
#: Where the cache is instead of ``<project root>/.compile_ad_lint_cache`` (Ruff's ``RUFF_CACHE_DIR``).
CACHE_DIR_VARIABLE = "COMPILE_AD_LINT_CACHE_DIR"
#: Set to 1 or true: no cache is read or written, as with ``--no-cache`` (Ruff's ``RUFF_NO_CACHE``).
NO_CACHE_VARIABLE = "COMPILE_AD_LINT_NO_CACHE"
#: The marker file that makes a directory a cache of ours (see the module docstring).
MARKER = "compile-ad-lint-cache.json"
_FORMAT = 3
_ENTRY_MAGIC = b"CAL4 "
_GITIGNORE = "# Created by compile-ad-lint: this directory is a cache, never commit it.\n*\n"
#: https://bford.info/cachedir/ : backup tools skip directories carrying this tag.
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n# compile-ad-lint cache: see https://bford.info/cachedir/\n"
)
_TEMPORARY = "tmp"
#: Lock files of ``SummaryCache.claim`` (empty files, one per key prefix; a lock dies with its process).
_CLAIMS = "claims"
#: A temporary file this old is an orphan even if its writer's pid is alive again (pid reuse).
_ORPHAN_SECONDS = 24 * 3600
#: How long to wait for a concurrent run that created the directory to write its marker.
_MARKER_WAIT_SECONDS = 1.0
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)

_warned: set[str] = set()


def content_digest(source: bytes) -> str:
    """Identity of a file's content, for cache keys and dependency checks."""
    return hashlib.sha256(source).hexdigest()


def runtime_versions() -> str:
    """The interpreter and parser the analysis runs on: what a file parses to (and whether it
    parses: PEP 695 syntax is CAL900 on 3.11) depends on the Python, fix edits on LibCST's version.
    LibCST's is read from its version file, without importing it (a check served from the cache
    never loads LibCST)."""
    libcst = b"none"
    for entry in sys.path:
        try:
            with open(os.path.join(entry or ".", "libcst", "_version.py"), "rb") as handle:
                libcst = handle.read(4096)
            break
        except OSError:
            continue
    return f"{sys.implementation.cache_tag}\0{sys.version}\0" + hashlib.sha256(libcst).hexdigest()


@cache
def build_digest() -> str:
    """Identity of the installed analyzer: its version, the bytes of every source file, and the
    interpreter and parser it runs on (``runtime_versions``).

    Computed once per process (about 2 ms); a changed rule, interpreter or LibCST gets fresh
    entries even when nobody bumped ``__version__``: two Pythons sharing a project's cache never
    serve each other's results.
    """
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(f"{__version__}\0{_FORMAT}\0{runtime_versions()}\0".encode("utf-8", "surrogateescape"))
    for source in sorted(package.rglob("*.py")):
        digest.update(source.relative_to(package).as_posix().encode("utf-8", "surrogateescape") + b"\0")
        digest.update(source.read_bytes())
    return digest.hexdigest()


def cache_key(source: bytes, module: str, is_package: bool) -> str:
    digest = hashlib.sha256()
    digest.update(f"{build_digest()}\0{module}\0{is_package}\0".encode("utf-8", "surrogateescape"))
    digest.update(source)
    return digest.hexdigest()


def warn_once(message: str) -> None:
    """Say why the cache is not used, once per process (every front end shares stderr for this)."""
    if message not in _warned:
        _warned.add(message)
        print(f"compile-ad-lint: {message}", file=sys.stderr)


class EntryMemory:
    """Decoded entries kept in memory across checks by a long-lived front end (language server).

    Keys are content-addressed and values immutable, so a remembered entry is never stale; the
    least recently used ones are dropped beyond ``capacity``.

    With ``write_behind`` a store is remembered at once and written to disk only at ``flush``: the
    language server publishes an edit's diagnostics first and writes once the buffers are idle
    (encoding results costs a large part of an edit). A key
    stored again before the flush is written once, with its latest value: an entry keyed by a root
    (its result, re-validated by its dependencies' digests) is stored at every keystroke's analysis.
    """

    def __init__(self, capacity: int = 50_000, *, write_behind: bool = False) -> None:
        self.capacity = capacity
        self.write_behind = write_behind
        self._entries: OrderedDict[str, Any] = OrderedDict()
        #: (cache directory, key) -> (cache, value), oldest store first.
        self._unwritten: dict[tuple[Path, str], tuple[SummaryCache, object]] = {}
        #: Held while deferring and while flushing: a flush at shutdown waits for one in progress
        #: on the analysis thread instead of finding its entries taken and not yet written.
        self._writing = threading.Lock()

    def get(self, key: str) -> Any:
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: str, value: Any) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)

    def defer(self, cache: SummaryCache, key: str, value: object) -> None:
        """Write ``value`` under ``key`` into ``cache``'s directory at the next ``flush`` (instead of
        what an earlier store under that key left unwritten)."""
        with self._writing:
            self._unwritten.pop((cache.directory, key), None)
            self._unwritten[(cache.directory, key)] = (cache, value)

    def flush(self, stop: Callable[[], bool] | None = None) -> int:
        """Write the deferred entries, oldest first; how many were written. ``stop`` is asked
        before each: when it says so the rest stay deferred for the next flush."""
        written = 0
        with self._writing:
            while self._unwritten:
                if stop is not None and stop():
                    break
                entry, (owner, value) = next(iter(self._unwritten.items()))
                del self._unwritten[entry]
                owner.write_entry(entry[1], value)
                written += 1
        return written


def cache_directory(root: Path) -> Path:
    """The cache directory of the project at ``root``: ``COMPILE_AD_LINT_CACHE_DIR`` when set (one
    directory for every project: entries are keyed by content and by the paths a check names), else
    ``.compile_ad_lint_cache`` in the project root."""
    configured = os.environ.get(CACHE_DIR_VARIABLE, "").strip()
    return Path(configured).expanduser().absolute() if configured else root / CACHE_DIRECTORY


def cache_disabled() -> bool:
    """Whether ``COMPILE_AD_LINT_NO_CACHE`` turns the cache off (``1``, ``true``, ``yes``, ``on``)."""
    return os.environ.get(NO_CACHE_VARIABLE, "").strip().lower() in ("1", "true", "yes", "on")


class SummaryCache:
    """A validated cache directory. Build it with ``open``; its methods never raise for bad data."""

    def __init__(self, directory: Path, secret: bytes, memory: EntryMemory | None = None) -> None:
        self.directory = directory
        self._secret = secret
        self._folders: set[str] = set()
        self.memory = memory

    @classmethod
    def open(
        cls,
        root: Path,
        *,
        create: bool = True,
        warn: Callable[[str], None] | None = warn_once,
        memory: EntryMemory | None = None,
    ) -> SummaryCache | None:
        """The cache under ``root``, creating it if allowed; None (with the reason warned) if unusable.

        A tree where the directory cannot be created (read-only) is analyzed without a cache and
        without a warning: nothing is wrong there.
        """
        if cache_disabled():
            return None
        directory = cache_directory(root)
        try:
            info = os.lstat(directory)
        except FileNotFoundError:
            if not create:
                return None
            try:
                if directory != root / CACHE_DIRECTORY:  # a COMPILE_AD_LINT_CACHE_DIR not made yet
                    directory.parent.mkdir(parents=True, exist_ok=True)
                created = _create(directory)
            except OSError:
                return None
            if created is not None:
                return cls(directory, created, memory)
            info = os.lstat(directory)  # a concurrent run created it first
        except OSError as error:
            _refuse(warn, directory, f"cannot inspect it: {error.strerror or error}")
            return None
        if stat.S_ISLNK(info.st_mode):
            _refuse(warn, directory, "it is a symbolic link")
            return None
        if not stat.S_ISDIR(info.st_mode):
            _refuse(warn, directory, "it is not a directory")
            return None
        secret = _read_marker(directory, info)
        if isinstance(secret, str) and create and _interrupted_creation(directory):
            secret = _create_again(directory)
        if isinstance(secret, str):
            _refuse(warn, directory, secret)
            return None
        cache = cls(directory, secret, memory)
        if create:
            cache._remove_orphans()
        return cache

    # -- entries ----------------------------------------------------------------------------

    def load(self, key: str, expected: Any, *, from_disk: bool = True, omit: codec.Omitted = frozenset()) -> Any:
        """The value stored under ``key`` if it is authentic and of type ``expected``, else None;
        with ``from_disk=False`` only what this process keeps in memory. The fields ``omit`` names
        are None in a value read from disk (``codec.loads``), which is then not kept in memory."""
        if self.memory is not None:
            remembered = self.memory.get(key)  # this process decoded or built it: already checked
            if isinstance(remembered, typing.get_origin(expected) or expected):
                return remembered
        if not from_disk:
            return None
        data = _read_regular(self.directory, key[:2], f"{key}.json")
        if data is None or not data.startswith(_ENTRY_MAGIC):
            return None
        mac, _, payload = data[len(_ENTRY_MAGIC) :].partition(b"\n")
        if not hmac.compare_digest(mac, self._mac(key, payload)):
            return None
        try:
            value = codec.loads(payload, expected, omit)
        except codec.SchemaError:
            return None
        if self.memory is not None and not omit:
            self.memory.put(key, value)
        return value

    def store(self, key: str, value: object, *, to_disk: bool = True) -> None:
        """Keep ``value`` under ``key``: in memory for a long-lived front end, and on disk unless
        ``to_disk`` is False."""
        if self.memory is not None:
            self.memory.put(key, value)
            if to_disk and self.memory.write_behind:
                self.memory.defer(self, key, value)
                return
        if to_disk:
            self.write_entry(key, value)

    def write_entry(self, key: str, value: object) -> None:
        """Encode ``value`` and write it under ``key`` (what ``store`` does on disk)."""
        try:
            payload = codec.dumps(value)
        except (TypeError, ValueError, RecursionError):
            return  # not plain data (a deep literal): the entry is simply rebuilt next time
        data = _ENTRY_MAGIC + self._mac(key, payload) + b"\n" + payload
        folder = key[:2]
        try:
            if folder not in self._folders:
                _ensure_folder(self.directory / folder)
                self._folders.add(folder)
            self.write_atomically(self.directory / folder / f"{key}.json", data)
        except OSError:
            return  # a full disk or a damaged folder: analysis goes on without this entry

    def write_atomically(self, target: Path, data: bytes) -> None:
        """Write ``data`` to ``target`` inside the cache (for confirm verdicts too): no half files."""
        temporary_folder = self.directory / _TEMPORARY
        _ensure_folder(temporary_folder)
        temporary = temporary_folder / f"{os.getpid()}-{secrets.token_hex(8)}.tmp"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY, 0o644)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
            os.replace(temporary, target)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise

    @contextmanager
    def claim(self, key: str, *, wait: bool) -> Iterator[bool]:
        """Hold the exclusive claim on building ``key`` among the processes sharing this cache.

        Yields True while the claim is held (build the entry, then store it), False when another
        process holds it and ``wait`` is False (do something else and come back). flake8 runs one
        analysis of the project in each of its worker processes: with claims they build each
        result once between them instead of once each. Where locks are not available the claim is
        always granted, which only costs the duplicated work.
        """
        try:
            import fcntl
        except ImportError:  # Windows
            yield True
            return
        try:
            folder = self.directory / _CLAIMS
            if _CLAIMS not in self._folders:
                _ensure_folder(folder)
                self._folders.add(_CLAIMS)
            # 256 lock files at most: two keys rarely share one, and sharing only serializes them.
            descriptor = os.open(folder / f"{key[:2]}.lock", os.O_RDWR | os.O_CREAT | _NOFOLLOW | _BINARY, 0o644)
        except OSError:
            yield True
            return
        try:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            except OSError:  # a file system without locks
                pass
            yield True
        finally:
            os.close(descriptor)  # releases the lock

    def read(self, folder: str, name: str) -> bytes | None:
        """A file inside the cache, never through a symlink (for confirm verdicts)."""
        return _read_regular(self.directory, folder, name)

    def _mac(self, key: str, payload: bytes) -> bytes:
        return hmac.new(self._secret, key.encode() + b"\0" + payload, hashlib.sha256).hexdigest().encode()

    def _remove_orphans(self) -> None:
        """Delete temporary files whose writer is gone (a run killed between write and rename)."""
        folder = self.directory / _TEMPORARY
        try:
            names = os.listdir(folder) if stat.S_ISDIR(os.lstat(folder).st_mode) else []
        except OSError:
            return
        now = time.time()
        for name in names:
            path = folder / name
            try:
                writer = int(name.split("-", 1)[0])
                orphaned = not _alive(writer) or now - os.lstat(path).st_mtime > _ORPHAN_SECONDS
                if orphaned:
                    path.unlink()
            except (ValueError, OSError):
                continue


class NotACache(Exception):
    """``cache clean`` found something at the cache path that it must not delete."""


def clear(root: Path) -> str:
    """``cache clean``: remove the cache under ``root`` and say what was done.

    A symlink is removed as a link (its target is not ours to delete); a directory only when it
    is recognizably a cache of ours, so a mistyped root never deletes user data (``NotACache``).
    """
    directory = cache_directory(root)
    try:
        info = os.lstat(directory)
    except FileNotFoundError:
        return f"no cache at {directory}"
    except OSError as error:
        raise NotACache(f"cannot inspect {directory}: {error.strerror or error}") from error
    try:
        if stat.S_ISLNK(info.st_mode):
            directory.unlink()
            return f"removed the symbolic link {directory} (its target was left alone)"
        if not stat.S_ISDIR(info.st_mode):
            raise NotACache(f"{directory} is not a directory; not removed")
        if not any(_is_regular(directory / name) for name in (MARKER, ".gitignore", "CACHEDIR.TAG")) and not (
            _interrupted_creation(directory)
        ):
            raise NotACache(f"{directory} does not look like a compile-ad-lint cache; not removed")
        shutil.rmtree(directory)
    except OSError as error:
        raise NotACache(f"cannot remove {directory}: {error.strerror or error}") from error
    return f"removed {directory}"


# -- the directory ----------------------------------------------------------------------------


def _create(directory: Path) -> bytes | None:
    """Create the cache directory and its marker; None when another process created it first."""
    try:
        os.mkdir(directory)
    except FileExistsError:
        return None
    secret = secrets.token_bytes(32)
    info = os.lstat(directory)
    (directory / ".gitignore").write_text(_GITIGNORE, encoding="utf-8")
    (directory / "CACHEDIR.TAG").write_text(_CACHEDIR_TAG, encoding="utf-8")
    marker = {
        "tool": "compile-ad-lint",
        "format": _FORMAT,
        "device": info.st_dev,
        "inode": info.st_ino,
        "secret": secret.hex(),
    }
    temporary = directory / f"{MARKER}.{os.getpid()}.tmp"
    temporary.write_text(json.dumps(marker), encoding="utf-8")
    os.replace(temporary, directory / MARKER)  # last: a marker means the directory is complete
    return secret


def _interrupted_creation(directory: Path) -> bool:
    """Whether ``directory`` holds nothing but what ``_create`` writes before the marker (or
    nothing): a run killed between creating the directory and writing its marker left it. Nothing
    in it is trusted or worth keeping, so it is made again (a repository that ships such a
    directory gets a cache of its own there too)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return False
    return all(_CREATION_FILE.fullmatch(name) and _is_regular(directory / name) for name in names)


#: The files ``_create`` writes before the marker is in place.
_CREATION_FILE = re.compile(rf"\.gitignore|CACHEDIR\.TAG|{re.escape(MARKER)}\.\d+\.tmp")


def _create_again(directory: Path) -> bytes | str:
    """The secret of a cache made again in place of an interrupted creation, else why not."""
    try:
        shutil.rmtree(directory)
        created = _create(directory)
    except OSError as error:
        return f"a run was stopped while creating it, and it cannot be made again: {error.strerror or error}"
    if created is not None:
        return created
    try:  # a concurrent run made it again first
        return _read_marker(directory, os.lstat(directory))
    except OSError as error:
        return f"cannot inspect it: {error.strerror or error}"


def _read_marker(directory: Path, info: os.stat_result) -> bytes | str:
    """The secret if ``directory`` is a cache this tool created in place, else why it is not."""
    deadline = time.monotonic() + _MARKER_WAIT_SECONDS
    while True:
        data = _read_regular(directory, None, MARKER)
        if data is not None or time.monotonic() > deadline:
            break
        time.sleep(0.02)  # a concurrent run may be between mkdir and writing the marker
    if data is None:
        return "it lacks the marker compile-ad-lint writes when it creates a cache (a cache of an older version, or a directory that came with the repository); `compile-ad-lint cache clean` removes it"
    try:
        marker = json.loads(data)
        secret = bytes.fromhex(marker["secret"])
        genuine = marker["tool"] == "compile-ad-lint" and marker["format"] == _FORMAT and len(secret) == 32
        here = marker["device"] == info.st_dev and marker["inode"] == info.st_ino
    except (ValueError, KeyError, TypeError):
        return "its marker is damaged; `compile-ad-lint cache clean` removes it"
    if not genuine:
        return "its marker is from another version of compile-ad-lint; `compile-ad-lint cache clean` removes it"
    if not here:
        return "it was not created here (copied, restored or checked in with the repository), so its entries are not trusted; `compile-ad-lint cache clean` removes it"
    return secret


def _refuse(warn: Callable[[str], None] | None, directory: Path, reason: str) -> None:
    if warn is not None:
        warn(f"not using the cache at {directory}: {reason}")
    return None


def _ensure_folder(folder: Path) -> None:
    """``folder`` exists as a real directory (raises OSError for a symlink or a file there)."""
    try:
        os.mkdir(folder)
    except FileExistsError:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            raise NotADirectoryError(str(folder)) from None


def _read_regular(directory: Path, folder: str | None, name: str) -> bytes | None:
    """The bytes of a regular file in the cache, or None; no symlink on the way is followed."""
    try:
        if folder is not None and not stat.S_ISDIR(os.lstat(directory / folder).st_mode):
            return None
        path = directory / folder / name if folder is not None else directory / name
        descriptor = os.open(path, os.O_RDONLY | _NOFOLLOW | _BINARY)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            return handle.read()
    except OSError:
        return None
    finally:
        os.close(descriptor)


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _alive(pid: int) -> bool:
    if pid == os.getpid() or os.name == "nt":  # Windows' os.kill(pid, 0) would send CTRL_C_EVENT
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists but belongs to someone else
    return True
