"""A scripted Language Server Protocol client over stdio, for the benchmark's latency rows.

No dependencies beyond the standard library: messages are framed with ``Content-Length`` headers
over the server's stdin/stdout pipes, and a reader thread stamps every message it receives with
``time.perf_counter()`` as soon as it is decoded, so latencies do not include the time the script
takes to look at them.

``measure_session`` is the scenario of bench/README.md: start ``compile-ad-lint lsp --debounce-ms
N`` in the project root, ``initialize`` with that root, open one file and wait for its
``publishDiagnostics``; then, with ``ready`` (the default), wait until the server has analyzed the
project (``wait_until_idle``: every work-done progress it began, the indexing of the open file and
the project pass, has ended, and it has sent nothing for ``QUIET_SECONDS``), else start editing at
once; then make one-line edits (``didChange``, incremental, one at a time, each waiting for the
diagnostics of its own version), then wait for the server's project pass (the whole project checked
with the edited buffer, announced as a work-done progress) to end, and shut the server down. Each
edit's latency is the time from sending the change to receiving the diagnostics, minus the
debounce; ``settle_s`` is the time from the last edit's diagnostics to the end of the project pass,
whose diagnostics are the ones the CLI gives (``settled_diagnostics``).

Usage (a quick manual check): ``python bench/lsp_client.py ROOT FILE [--edits 10] [--debounce-ms 300]
[--at-once] [--pause-s 0]``.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlparse


def path_to_uri(path: Path) -> str:
    return "file://" + quote(str(Path(path).resolve()))


def uri_to_path(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path))


class LspError(RuntimeError):
    pass


class LspClient:
    """One server process; ``send``/``request``/``notify`` write frames, ``wait_for`` reads them."""

    def __init__(self, command: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> None:
        self.stderr_file = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            list(command), cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr_file, env=env
        )
        self.started = time.perf_counter()
        self._messages: queue.Queue[tuple[float, dict | None]] = queue.Queue()
        self._next_id = 0
        self._write_lock = threading.Lock()
        self.received: list[tuple[float, dict]] = []  # everything seen, in order (for debugging)
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    # -- framing ------------------------------------------------------------------------------

    def _read_loop(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        try:
            while True:
                length = None
                while True:
                    line = stream.readline()
                    if not line:
                        return
                    line = line.strip()
                    if not line:
                        if length is not None:
                            break
                        continue
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                body = b""
                while len(body) < length:
                    chunk = stream.read(length - len(body))
                    if not chunk:
                        return
                    body += chunk
                self._messages.put((time.perf_counter(), json.loads(body)))
        finally:
            self._messages.put((time.perf_counter(), None))  # end of stream

    def send(self, message: dict) -> float:
        """Write one message; returns the time it was written (after the flush)."""
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        stdin = self.process.stdin
        assert stdin is not None
        with self._write_lock:
            stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            stdin.flush()
            return time.perf_counter()

    def notify(self, method: str, params: Any) -> float:
        return self.send({"method": method, "params": params})

    def request(self, method: str, params: Any, timeout: float = 60.0) -> dict:
        self._next_id += 1
        ident = self._next_id
        self.send({"id": ident, "method": method, "params": params})
        _, message = self.wait_for(
            lambda m: m.get("id") == ident and "method" not in m, timeout, f"the response to {method}"
        )
        if "error" in message:
            raise LspError(f"{method} failed: {message['error']}")
        return message

    def wait_for(self, predicate: Callable[[dict], bool], timeout: float, what: str) -> tuple[float, dict]:
        """The first message (from now on) for which ``predicate`` holds, with the time it arrived.

        Requests from the server (``window/workDoneProgress/create``, ``workspace/configuration``)
        are answered with an empty result so that it never waits on us.
        """
        deadline = time.perf_counter() + timeout
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise LspError(f"timed out after {timeout:.0f} s waiting for {what}; stderr: {self.stderr_tail()}")
            try:
                stamp, message = self._messages.get(timeout=remaining)
            except queue.Empty:
                continue
            if message is None:
                raise LspError(
                    f"the server closed its output while we waited for {what} (exit {self.process.poll()}); stderr: {self.stderr_tail()}"
                )
            self.received.append((stamp, message))
            if "method" in message and "id" in message:  # a request from the server
                self.send({"id": message["id"], "result": None})
            if predicate(message):
                return stamp, message

    def wait_until_idle(self, quiet: float, timeout: float) -> float:
        """Wait until every work-done progress the server began has ended and it has then sent
        nothing for ``quiet`` seconds (longer than its idle wait before a project pass, so a pass
        about to begin is seen). Returns when its last message before the quiet arrived."""
        deadline = time.perf_counter() + timeout
        active: set = set()
        last = time.perf_counter()
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise LspError(f"the server was not idle after {timeout:.0f} s; stderr: {self.stderr_tail()}")
            try:
                stamp, message = self._messages.get(timeout=min(quiet, remaining))
            except queue.Empty:
                if not active:
                    return last
                continue
            if message is None:
                raise LspError(
                    f"the server closed its output while we waited for it to be idle; stderr: {self.stderr_tail()}"
                )
            self.received.append((stamp, message))
            last = stamp
            if "method" in message and "id" in message:  # a request from the server
                self.send({"id": message["id"], "result": None})
            if message.get("method") == "$/progress":
                params = message.get("params") or {}
                kind = (params.get("value") or {}).get("kind")
                if kind == "begin":
                    active.add(params.get("token"))
                elif kind == "end":
                    active.discard(params.get("token"))

    def stderr_tail(self, limit: int = 2000) -> str:
        try:
            self.stderr_file.seek(0)
            return self.stderr_file.read().decode("utf-8", "replace")[-limit:]
        except (OSError, ValueError):
            return ""

    def close(self, timeout: float = 30.0) -> int | None:
        """``shutdown`` then ``exit``; kills the server if it does not end in ``timeout`` s."""
        try:
            if self.process.poll() is None:
                self.request("shutdown", None, timeout=timeout)
                self.notify("exit", None)
        except (LspError, OSError, ValueError):
            pass
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()
        finally:
            for stream in (self.process.stdin, self.process.stdout):
                try:
                    if stream:
                        stream.close()
                except OSError:
                    pass
            self.stderr_file.close()


# -- the benchmark scenario ---------------------------------------------------------------------------


@dataclass
class LspSession:
    debounce_ms: int
    startup_s: float  # process start to the initialize response
    open_s: float  # didOpen sent to the first publishDiagnostics of the file
    spawn_to_diagnostics_s: float  # process start to that publish
    #: Whether the edits waited until the server had analyzed the project (else they began at once).
    ready: bool = True
    ready_s: float | None = None  # the open's diagnostics to the server's last message before it was idle
    pause_s: float = 0.0  # then, to the first edit (a user reading the file)
    edit_s: list[float] = field(default_factory=list)  # per edit: didChange sent to its publish, minus the debounce
    settle_s: float | None = None  # the last edit's publish to the end of the project pass after it
    open_diagnostics: list[dict] = field(default_factory=list)
    edit_diagnostics: list[list[dict]] = field(default_factory=list)
    settled_diagnostics: list[dict] | None = None  # the file's diagnostics once the project pass ended
    returncode: int | None = None

    @property
    def edit_p50_s(self) -> float | None:
        return round(statistics.median(self.edit_s), 4) if self.edit_s else None

    @property
    def edit_max_s(self) -> float | None:
        return round(max(self.edit_s), 4) if self.edit_s else None

    def summary(self) -> dict:
        data = asdict(self)
        data.pop("open_diagnostics")
        data.pop("edit_diagnostics")
        data.pop("settled_diagnostics")
        data["diagnostics_settled"] = None if self.settled_diagnostics is None else len(self.settled_diagnostics)
        data["diagnostics_at_open"] = len(self.open_diagnostics)
        data["diagnostics_after_edits"] = [len(d) for d in self.edit_diagnostics]
        data["edit_p50_s"] = self.edit_p50_s
        data["edit_max_s"] = self.edit_max_s
        return data


#: How long the server must stay silent, all its progresses ended, to count as idle: longer than its
#: idle wait before a project pass (``integrations.lsp.IDLE_SECONDS``, 1 s), so that a pass about
#: to begin is waited for too.
QUIET_SECONDS = 2.5


def server_command(python: str = sys.executable, debounce_ms: int = 300) -> list[str]:
    return [python, "-m", "compile_ad_lint", "lsp", "--debounce-ms", str(debounce_ms)]


def comment_edit(line_text: str, k: int) -> str:
    """A one-line edit for any file: a trailing comment (no new line, no shifted positions)."""
    body = line_text.rstrip("\r\n")
    ending = line_text[len(body) :]
    return f"{body}  # bench edit {k}{ending}"


def measure_session(
    root: Path,
    file: Path,
    *,
    edits: int = 10,
    debounce_ms: int = 300,
    ready: bool = True,
    pause_s: float = 0.0,
    edit_line: int | None = None,
    edit_text: Callable[[int], str] | None = None,
    python: str = sys.executable,
    timeout: float = 600.0,
    env: dict[str, str] | None = None,
) -> LspSession:
    """Open ``file`` (in the project at ``root``), then ``edits`` one-line edits of line ``edit_line``.

    ``edit_text(k)`` gives the new text of the line (with its line ending) for edit ``k`` (1-based);
    by default a trailing comment is appended to the original line. Without ``edit_line`` the line
    of the first diagnostic is edited (the first line of the file if there is none). With ``ready``
    the first edit waits until the server is idle (it has analyzed the project: the issue's "once
    the project is analyzed"), else it follows the open's diagnostics at once; then ``pause_s``
    seconds more.
    """
    root = Path(root).resolve()
    file = Path(file).resolve()
    text = file.read_text(encoding="utf-8")
    uri = path_to_uri(file)
    client = LspClient(server_command(python, debounce_ms), root, env=env)
    try:
        client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": path_to_uri(root),
                "rootPath": str(root),
                "workspaceFolders": [{"uri": path_to_uri(root), "name": root.name}],
                "capabilities": {
                    "general": {"positionEncodings": ["utf-16"]},
                    "window": {"workDoneProgress": True},
                    "textDocument": {
                        "synchronization": {"didSave": True, "dynamicRegistration": False},
                        "publishDiagnostics": {"relatedInformation": True, "versionSupport": True},
                    },
                },
            },
            timeout=timeout,
        )
        initialized_at = time.perf_counter()
        client.notify("initialized", {})

        def published(version: int) -> Callable[[dict], bool]:
            def check(message: dict) -> bool:
                if message.get("method") != "textDocument/publishDiagnostics":
                    return False
                params = message.get("params") or {}
                if uri_to_path(params.get("uri", "")) != file:
                    return False
                return params.get("version") in (version, None)

            return check

        sent = client.notify(
            "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}
        )
        arrived, message = client.wait_for(published(1), timeout, "the diagnostics after didOpen")
        session = LspSession(
            debounce_ms=debounce_ms,
            startup_s=round(initialized_at - client.started, 4),
            open_s=round(arrived - sent, 4),
            spawn_to_diagnostics_s=round(arrived - client.started, 4),
            ready=ready,
            pause_s=pause_s,
            open_diagnostics=message["params"]["diagnostics"],
        )
        if ready:
            session.ready_s = round(client.wait_until_idle(QUIET_SECONDS, timeout) - arrived, 4)
        time.sleep(pause_s)
        lines = text.splitlines(keepends=True)
        if edit_line is None:
            first = session.open_diagnostics[0]["range"]["start"]["line"] + 1 if session.open_diagnostics else 1
            edit_line = first
        original = lines[edit_line - 1]
        make = edit_text or (lambda k: comment_edit(original, k))
        current = original
        for k in range(1, edits + 1):
            new_line = make(k)
            if new_line.count("\n") != original.count("\n"):
                raise ValueError("an edit must replace one line by one line")
            current_end = len(current.rstrip("\r\n").encode("utf-16-le")) // 2
            change = {
                "range": {
                    "start": {"line": edit_line - 1, "character": 0},
                    "end": {"line": edit_line - 1, "character": current_end},
                },
                "text": new_line.rstrip("\r\n"),
            }
            version = k + 1
            sent = client.notify(
                "textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}
            )
            arrived, message = client.wait_for(published(version), timeout, f"the diagnostics after edit {k}")
            session.edit_s.append(round(arrived - sent - debounce_ms / 1000.0, 4))
            session.edit_diagnostics.append(message["params"]["diagnostics"])
            current = new_line
        if edits:
            session.settle_s, session.settled_diagnostics = _settle(client, published(edits + 1), arrived, timeout)
    finally:
        returncode = client.close()
    session.returncode = returncode
    return session


def _settle(
    client: LspClient, publishes: Callable[[dict], bool], since: float, timeout: float
) -> tuple[float, list[dict] | None]:
    """Wait for the project pass that follows the last edit: a progress begun after it, ended
    "done". Returns the seconds from ``since`` to that end and the file's latest diagnostics by
    then (None: the pass published nothing new, the last edit's diagnostics stand)."""
    begun: set = set()
    latest = None

    def check(message: dict) -> bool:
        nonlocal latest
        if publishes(message):
            latest = message["params"]["diagnostics"]
            return False
        if message.get("method") != "$/progress":
            return False
        params = message.get("params") or {}
        value = params.get("value") or {}
        if value.get("kind") == "begin":
            begun.add(params.get("token"))
        return value.get("kind") == "end" and params.get("token") in begun and value.get("message") == "done"

    arrived, _ = client.wait_for(check, timeout, "the end of the project pass after the last edit")
    return round(arrived - since, 4), latest


# -- comparing with the CLI --------------------------------------------------------------------------


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _normalize_message(message: str, root: Path) -> str:
    """Paths in messages are shown relative to the process's directory, or absolute: make them relative."""
    prefix = str(root) + os.sep
    return message.replace(prefix, "")


def diagnostic_keys(diagnostics: Sequence[dict], root: Path) -> list[tuple]:
    """Comparable (code, start, end, message, related) tuples of LSP diagnostics (0-based UTF-16)."""
    root = Path(root).resolve()
    keys = []
    for d in diagnostics:
        start, end = d["range"]["start"], d["range"]["end"]
        related = []
        for item in d.get("relatedInformation") or ():
            location = item["location"]
            path = uri_to_path(location["uri"])
            try:
                shown = str(path.relative_to(root))
            except ValueError:
                shown = str(path)
            position = location["range"]["start"]
            related.append((shown, position["line"], position["character"], _normalize_message(item["message"], root)))
        keys.append(
            (
                d.get("code"),
                start["line"],
                start["character"],
                end["line"],
                end["character"],
                _normalize_message(d["message"], root),
                tuple(sorted(related)),
            )
        )
    return sorted(keys)


def finding_keys(findings: Sequence[dict], root: Path, cwd: Path, file: Path) -> list[tuple]:
    """The same tuples for the CLI's JSON findings located in ``file`` (paths relative to ``cwd``)."""
    root, cwd, file = Path(root).resolve(), Path(cwd).resolve(), Path(file).resolve()
    cache: dict[Path, list[str]] = {}

    def lines_of(path: Path) -> list[str]:
        if path not in cache:
            try:
                cache[path] = path.read_text(encoding="utf-8").splitlines()
            except OSError:
                cache[path] = []
        return cache[path]

    def position(path: Path, line: int, column: int) -> tuple[int, int]:
        lines = lines_of(path)
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        return line - 1, _utf16(text[: max(column - 1, 0)])

    def relative(path: Path) -> str:
        try:
            return str(path.relative_to(root))
        except ValueError:
            return str(path)

    keys = []
    for f in findings:
        path = (cwd / f["path"]).resolve()
        if path != file:
            continue
        related = []
        for item in f.get("related") or ():
            rpath = (cwd / item["path"]).resolve()
            line, character = position(rpath, item["line"], item["column"])
            related.append((relative(rpath), line, character, _normalize_message(item["message"], cwd)))
        start = position(path, f["line"], f["column"])
        end = position(path, f["end_line"], f["end_column"])
        # The editor shows the headline with the details under it (one text).
        message = "\n".join([f["message"], *f.get("details", ())])
        keys.append((f["code"], *start, *end, _normalize_message(message, cwd), tuple(sorted(related))))
    return sorted(keys)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root")
    parser.add_argument("file")
    parser.add_argument("--edits", type=int, default=10)
    parser.add_argument("--debounce-ms", type=int, default=300)
    parser.add_argument(
        "--at-once",
        action="store_true",
        help="edit right after the open's diagnostics instead of once the server is idle (the project analyzed)",
    )
    parser.add_argument(
        "--pause-s", type=float, default=0.0, help="seconds more before the first edit (a user reading the file)"
    )
    parser.add_argument("--line", type=int, default=None, help="1-based line to edit (default: the first diagnostic's)")
    args = parser.parse_args(argv)
    session = measure_session(
        Path(args.root),
        Path(args.file),
        edits=args.edits,
        debounce_ms=args.debounce_ms,
        ready=not args.at_once,
        pause_s=args.pause_s,
        edit_line=args.line,
    )
    print(json.dumps(session.summary(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
