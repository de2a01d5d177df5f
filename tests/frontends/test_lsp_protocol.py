"""The language server as a process: stale and superseded analyses, ``exit``, publishing cost and
broken framing, each checked on the real server over stdio.

Tests that need to hold an analysis or count work run the server through ``HARNESS``, which wraps two
names of the server module and then starts the server exactly as ``compile-ad-lint lsp`` does.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pygls")

from compile_ad_lint.integrations.lsp import MAX_MESSAGE_BYTES

from .test_lsp import FIXED, HAZARD, TIMEOUT, _Client, _project, _run

#: The server with two test hooks: every analysis (with how many objects the garbage collector holds
#: frozen when it starts and how many walks it replayed and walked), every rehearsal of the walks (with how many
#: it could not replay), and every ``LineTable`` built, is logged as a line of the file named by
#: ``CAL_LSP_LOG``; analyses wait while the file named by ``CAL_LSP_GATE`` exists, rehearsals while
#: the one named by ``CAL_LSP_REHEARSAL_GATE`` does.
HARNESS = """\
import gc
import os
import sys
import time
from pathlib import Path

from compile_ad_lint.integrations.lsp import documents, server

LOG = Path(os.environ["CAL_LSP_LOG"])
GATE = Path(os.environ["CAL_LSP_GATE"])
REHEARSAL_GATE = Path(os.environ["CAL_LSP_REHEARSAL_GATE"])


def note(event):
    with LOG.open("a", encoding="utf-8") as log:
        log.write(event + "\\n")


class Analyzer(server.Analyzer):
    def check(self, paths, sources=None, **options):
        note("analysis")
        note(f"frozen {gc.get_freeze_count()}")
        while GATE.exists():
            time.sleep(0.01)
        replayed = self.walk_memory.hits if self.walk_memory is not None else 0
        walked = self.walk_memory.misses if self.walk_memory is not None else 0
        report = super().check(paths, sources, **options)
        if self.walk_memory is not None:
            note(f"replayed {self.walk_memory.hits - replayed}")
            note(f"walked {self.walk_memory.misses - walked}")
        return report

    def rehearse(self, paths, sources=None, **options):
        note("rehearsal")
        cancelled = options.get("cancelled")
        while REHEARSAL_GATE.exists() and not (cancelled is not None and cancelled()):
            time.sleep(0.01)
        walked = super().rehearse(paths, sources, **options)
        note(f"rehearsed {walked}")
        return walked


class LineTable(documents.LineTable):
    def __init__(self, *args, **kwargs):
        note("line table")
        super().__init__(*args, **kwargs)


# Where the server makes its analyzers and the documents their line tables.
server.Analyzer, documents.LineTable = Analyzer, LineTable

from compile_ad_lint.cli import main

main(sys.argv[1:])
"""

#: Long enough that edits never start an analysis by themselves: these tests trigger them with saves.
NO_DEBOUNCE_MS = 600_000


class _Hooks:
    """The harness's log and gate for one test."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir()
        self.script = folder / "harness.py"
        self.script.write_text(HARNESS, encoding="utf-8")
        self.log = folder / "events.log"
        self.gate = folder / "analyses.gate"
        self.rehearsal_gate = folder / "rehearsals.gate"
        self.env = {
            **os.environ,
            "CAL_LSP_LOG": str(self.log),
            "CAL_LSP_GATE": str(self.gate),
            "CAL_LSP_REHEARSAL_GATE": str(self.rehearsal_gate),
        }

    def client(self, root: Path, debounce_ms: int = 50) -> _Client:
        return _Client(root, command=[str(self.script)], env=self.env, debounce_ms=debounce_ms)

    def events(self) -> list[str]:
        return self.log.read_text(encoding="utf-8").splitlines() if self.log.exists() else []

    async def until(self, event: str, count: int) -> None:
        """Wait until ``event`` was logged ``count`` times."""
        deadline = time.monotonic() + TIMEOUT
        while self.events().count(event) < count:
            assert time.monotonic() < deadline, f"{event!r} not logged {count} times: {self.events()}"
            await asyncio.sleep(0.02)


@pytest.fixture
def hooks(tmp_path: Path):
    hooks = _Hooks(tmp_path / "hooks")  # outside the project the server analyzes
    yield hooks
    hooks.gate.unlink(missing_ok=True)  # a server left behind by a failure finishes its analysis and exits
    hooks.rehearsal_gate.unlink(missing_ok=True)


async def _barrier(client: _Client, uri: str) -> None:
    """A request round trip: the server has handled every notification sent before it."""
    assert not await client.code_actions(uri, [])


# -- stale and superseded analyses ----------------------------------------------------------------


def test_reopened_document_never_shows_diagnostics_of_its_earlier_buffer(tmp_path: Path, hooks: _Hooks) -> None:
    root, train, _model = _project(tmp_path)
    hooks.gate.touch()

    async def scenario() -> None:
        async with hooks.client(root) as client:
            client.open(train, HAZARD)  # version 1, a finding
            await hooks.until("analysis", 1)  # held while it runs
            client.close(train)
            client.open(train, FIXED)  # version 1 again, no finding
            await _barrier(client, train)
            hooks.gate.unlink()
            while True:  # the close's empty publish, then the reopened buffer's; never the hazard's
                published = await client.diagnostics(train)
                assert not published.diagnostics
                if published.version == 1:
                    break

    _run(scenario())


def test_superseded_analyses_are_skipped_or_dropped(tmp_path: Path, hooks: _Hooks) -> None:
    root, train, _model = _project(tmp_path)
    hooks.gate.touch()

    async def scenario() -> None:
        async with hooks.client(root, debounce_ms=NO_DEBOUNCE_MS) as client:
            client.open(train, HAZARD)
            await hooks.until("analysis", 1)  # version 1 is being analyzed
            for version, text in ((2, HAZARD.replace("y = f(", "y = f( ")), (3, FIXED)):
                client.replace_all(train, text, version)
                client.save(train)  # an analysis of this version is queued behind version 1's
                await _barrier(client, train)
            hooks.gate.unlink()
            published = await client.diagnostics(train)
            # Version 1's result was dropped, version 2's analysis never ran: only version 3 publishes.
            assert published.version == 3
            assert not published.diagnostics
            assert hooks.events().count("analysis") == 2

    _run(scenario())


@pytest.mark.parametrize(("shutdown", "code"), [(True, 0), (False, 1)])
def test_exit_ends_the_process_during_an_analysis(tmp_path: Path, hooks: _Hooks, shutdown: bool, code: int) -> None:
    """``exit`` exits at once, 0 after ``shutdown`` and 1 without (the specification's codes)."""
    root, train, _model = _project(tmp_path)
    hooks.gate.touch()  # never opened: the analysis is still running when ``exit`` arrives

    async def scenario() -> None:
        async with hooks.client(root) as client:
            client.open(train, HAZARD)
            await hooks.until("analysis", 1)
            assert await client.exit(shutdown=shutdown) == code

    _run(scenario())


def test_the_heap_is_settled_between_analyses(tmp_path: Path, hooks: _Hooks) -> None:
    """After publishing, the server collects the analysis's garbage and freezes what survives, so
    the collector's full passes during the next edit scan only what that edit allocates."""
    root, train, _model = _project(tmp_path)

    async def scenario() -> None:
        async with hooks.client(root, debounce_ms=NO_DEBOUNCE_MS) as client:
            client.open(train, HAZARD)
            await client.diagnostics(train)
            client.replace_all(train, FIXED, 2)
            client.save(train)
            assert (await client.diagnostics(train)).version == 2
            frozen = [int(line.split()[1]) for line in hooks.events() if line.startswith("frozen")]
            assert len(frozen) >= 2 and frozen[0] == 0 and frozen[-1] > 0, frozen

    _run(scenario())


HELPERS = """\
from model import f


def apply(x):
    return f(x)
"""
THROUGH_A_HELPER = HAZARD.replace("from model import f", "from helpers import apply").replace("y = f(", "y = apply(")


def _project_through_a_helper(tmp_path: Path) -> tuple[Path, str]:
    """``_project`` whose script reaches the model through ``helpers.apply`` (a walk the edits of
    the script do not change); the project root and the script's URI."""
    root, train, _model = _project(tmp_path)
    (root / "helpers.py").write_text(HELPERS, encoding="utf-8")
    (root / "train.py").write_text(THROUGH_A_HELPER, encoding="utf-8")
    return root, train


@pytest.mark.parametrize("checked", [".", "train.py"], ids=["record", "cached-results"])
def test_an_open_served_from_the_cache_rehearses_the_walks(tmp_path: Path, hooks: _Hooks, checked: str) -> None:
    """After ``compile-ad-lint check .`` the open is served from the check's record; after a check of
    the script alone (or a language server session that ended with unsaved edits: no record of the
    whole project) it is analyzed, but its results come from the cache. Either way nothing was
    walked: the server rehearses the open file's walks, and the first edit replays those of the code
    it did not change (``helpers.apply``) instead of walking everything (1.4-1.7 s on the generated
    framework's trainer against 0.3-0.4 s)."""
    root, train = _project_through_a_helper(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "compile_ad_lint", "check", checked], cwd=root, capture_output=True, text=True
    )
    assert "CAL001" in result.stdout, result.stdout + result.stderr

    async def scenario() -> None:
        async with hooks.client(root, debounce_ms=NO_DEBOUNCE_MS) as client:
            client.open(train, THROUGH_A_HELPER)
            assert [d.code for d in (await client.diagnostics(train)).diagnostics] == ["CAL001"]
            await hooks.until("rehearsed 0", 1)  # rehearsed until every walk replayed
            opened = [line for line in hooks.events() if line.startswith(("analysis", "replayed", "walked"))]
            served = [] if checked == "." else ["analysis", "replayed 0", "walked 0"]
            assert opened == served, f"the open was not served from the cache: {hooks.events()}"
            client.replace_all(train, THROUGH_A_HELPER + "\n# edited\n", 2)
            client.save(train)
            assert [d.code for d in (await client.diagnostics(train)).diagnostics] == ["CAL001"]
            replayed = [int(line.split()[1]) for line in hooks.events() if line.startswith("replayed")]
            edit = sum(1 for line in served if line.startswith("replayed"))  # the edit's analysis follows the open's
            assert len(replayed) > edit and replayed[edit] > 0, hooks.events()

    _run(scenario())


def test_the_rehearsal_after_an_open_goes_on_until_the_next_analysis_is_due(tmp_path: Path, hooks: _Hooks) -> None:
    """The open's walks are rehearsed after its publish; an edit made meanwhile does not stop that
    rehearsal (what it walks is the code the first edits do not change), so the next analysis
    replays them."""
    root, train = _project_through_a_helper(tmp_path)
    hooks.rehearsal_gate.touch()

    async def scenario() -> None:
        async with hooks.client(root, debounce_ms=NO_DEBOUNCE_MS) as client:
            client.open(train, THROUGH_A_HELPER)
            assert [d.code for d in (await client.diagnostics(train)).diagnostics] == ["CAL001"]
            await hooks.until("rehearsal", 1)  # held at the gate, after the open's publish
            client.replace_all(train, THROUGH_A_HELPER + "# typing\n", 2)  # no analysis due yet
            await _barrier(client, train)
            hooks.rehearsal_gate.unlink()
            await hooks.until("rehearsed 0", 1)  # it went on, to every walk replayed
            client.save(train)
            assert [d.code for d in (await client.diagnostics(train, version=2)).diagnostics] == ["CAL001"]
            replayed = [int(line.split()[1]) for line in hooks.events() if line.startswith("replayed")]
            assert len(replayed) == 2 and replayed[1] > 0, hooks.events()

    _run(scenario())


def test_a_rehearsal_after_an_edit_stops_at_the_next_edit(tmp_path: Path, hooks: _Hooks) -> None:
    """After an edit's analysis the walks are rehearsed too, but the next edit stops that: it
    replays a buffer a keystroke old, whose edited function the next edit most likely changes."""
    root, train = _project_through_a_helper(tmp_path)
    edited = THROUGH_A_HELPER.replace("y = apply(fwAD.make_dual(x, t))", "y = apply(fwAD.make_dual(x, t) * 2)")
    assert edited != THROUGH_A_HELPER

    async def scenario() -> None:
        async with hooks.client(root, debounce_ms=NO_DEBOUNCE_MS) as client:
            client.open(train, THROUGH_A_HELPER)
            await client.diagnostics(train)
            await hooks.until("rehearsed 0", 1)  # the open's rehearsal, to every walk replayed
            hooks.rehearsal_gate.touch()
            rehearsals = hooks.events().count("rehearsal")
            client.replace_all(train, edited, 2)  # the edited function is walked afresh
            client.save(train)
            await client.diagnostics(train, version=2)
            await hooks.until("rehearsal", rehearsals + 1)  # the edit's rehearsal, held at the gate
            held = len(hooks.events())
            client.replace_all(train, edited + "# typing\n", 3)  # the next edit, no analysis due yet
            await _barrier(client, train)
            hooks.rehearsal_gate.unlink()
            await asyncio.sleep(1.0)  # time for a rehearsal that went on to finish (a few ms here)
            client.save(train)
            await client.diagnostics(train, version=3)
            after = hooks.events()[held:]
            assert not any(e.startswith("rehearsed") for e in after[: after.index("analysis")]), hooks.events()

    _run(scenario())


def test_a_rehearsal_gives_way_to_an_analysis_that_is_due(tmp_path: Path, hooks: _Hooks) -> None:
    """An analysis due while a rehearsal runs (a save, a debounce over) starts at the rehearsal's
    next function walk: the rehearsal is abandoned, the analysis publishes."""
    root, train = _project_through_a_helper(tmp_path)
    hooks.rehearsal_gate.touch()

    async def scenario() -> None:
        async with hooks.client(root, debounce_ms=NO_DEBOUNCE_MS) as client:
            client.open(train, THROUGH_A_HELPER)
            assert [d.code for d in (await client.diagnostics(train)).diagnostics] == ["CAL001"]
            await hooks.until("rehearsal", 1)
            client.replace_all(train, THROUGH_A_HELPER + "# typed\n", 2)
            client.save(train)  # due at once
            assert [d.code for d in (await client.diagnostics(train, version=2)).diagnostics] == ["CAL001"]
            assert hooks.rehearsal_gate.exists()  # the analysis did not wait for the gate
            events = hooks.events()
            assert events.count("analysis") == 2, events
            second_analysis = [i for i, event in enumerate(events) if event == "analysis"][1]
            assert not any(e.startswith("rehearsed") for e in events[:second_analysis]), events

    _run(scenario())


# -- publishing cost ------------------------------------------------------------------------------


def test_publishing_splits_each_file_once(tmp_path: Path, hooks: _Hooks) -> None:
    """Thousands of findings, each CAL001 with a related location in another (unopened) file: the
    buffer and that file are each split into lines once, not once per diagnostic."""
    root, train, model = _project(tmp_path)
    hazards = [
        f"def run{i}(x, t):\n    with fwAD.dual_level():\n        return f(fwAD.make_dual(x, t))\n" for i in range(200)
    ]
    configs = ['torch._functorch.config.backward_pass_autocast = "bad"\n'] * 1800
    text = "import torch\nimport torch.autograd.forward_ad as fwAD\nfrom model import f\n" + "".join(hazards + configs)

    async def scenario() -> None:
        async with hooks.client(root) as client:
            client.open(train, text)
            diagnostics = (await client.diagnostics(train)).diagnostics
            assert [d.code for d in diagnostics].count("CAL001") == 200
            assert [d.code for d in diagnostics].count("CAL003") == 1800
            assert {info.location.uri for d in diagnostics for info in d.related_information or ()} == {train, model}
            assert hooks.events().count("line table") == 2

    _run(scenario())


# -- framing ---------------------------------------------------------------------------------------


def _frame(body: bytes, length: int | None = None) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % (len(body) if length is None else length) + body


def _body(message_id: int, method: str = "compile-ad-lint/ping", params: Any = None) -> bytes:
    """A request; the ping is a method the server does not have, so its answer is an error response."""
    return json.dumps({"jsonrpc": "2.0", "id": message_id, "method": method, "params": params}).encode()


class _RawServer:
    """``compile-ad-lint lsp`` on pipes, written to in raw bytes: no client library mends the framing."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.answered: list[int] = []

    async def __aenter__(self) -> _RawServer:
        self.process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "compile_ad_lint",
            "lsp",
            cwd=str(self.root),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        self.send(_frame(_body(0, "initialize", {"processId": None, "rootUri": None, "capabilities": {}})))
        await self.answer(0)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)

    async def answer(self, message_id: int) -> dict[str, Any]:
        """Read messages until the response to ``message_id``; responses to other ids are recorded."""
        while True:
            message = await asyncio.wait_for(self._message(), TIMEOUT)
            if "id" in message and "method" not in message:
                self.answered.append(message["id"])
                if message["id"] == message_id:
                    return message

    async def _message(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = None
        while (line := await self.process.stdout.readline()).strip():
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        assert length is not None, "the server's output ended"
        return json.loads(await self.process.stdout.readexactly(length))

    async def end(self) -> tuple[int, str]:
        """``shutdown`` and ``exit``; the exit code and stderr."""
        self.send(_frame(_body(99, "shutdown")))
        await self.answer(99)
        self.send(_frame(json.dumps({"jsonrpc": "2.0", "method": "exit"}).encode()))
        return await self.gone()

    async def gone(self) -> tuple[int, str]:
        """Wait for the process to end by itself; its exit code and stderr."""
        assert self.process.stderr is not None
        stderr = await asyncio.wait_for(self.process.stderr.read(), TIMEOUT)
        return await asyncio.wait_for(self.process.wait(), TIMEOUT), stderr.decode("utf-8", "replace")


def _project_root(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.compile-ad-lint]\n", encoding="utf-8")
    return tmp_path


PING_1 = _body(1)

#: Broken bytes sent before two good requests (ids 2 and 3), and what the server says about them on stderr.
BROKEN = {
    "length too small": (_frame(PING_1, len(PING_1) - 5), "Unable to handle message"),
    "length too large": (_frame(PING_1, len(PING_1) + 7), "Unable to handle message"),
    "header without body": (b"Content-Length: 40\r\n\r\n", "Unable to handle message"),
    "length not a number": (b"Content-Length: abc\r\n\r\n" + PING_1, "ignored a message with Content-Length b'abc'"),
    "negative length": (b"Content-Length: -5\r\n\r\n" + PING_1, "ignored a message with Content-Length b'-5'"),
    "zero length": (b"Content-Length: 0\r\n\r\n" + PING_1, "ignored a message with Content-Length b'0'"),
    "garbage": (b"\x00\xff\xfe\x1b[2J garbage\r\n" + b"x" * 100_000 + "\r\n\x85\u2028 more".encode(), "skipped"),
    "body not JSON": (_frame(b"\xff\xfe{not json"), "Unable to handle message"),
    "body JSON but no message": (_frame(b"[1, 2, 3]"), "Unable to handle message"),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_broken_framing_is_survived(tmp_path: Path, name: str) -> None:
    broken, said = BROKEN[name]

    async def scenario() -> None:
        async with _RawServer(_project_root(tmp_path)) as server:
            server.send(broken + _frame(_body(2)) + _frame(_body(3)))
            answer = await server.answer(3)
            assert answer["error"]["code"] == -32601  # method not found: the server read the request
            assert 1 not in server.answered
            code, stderr = await server.end()
            assert code == 0
            assert said in stderr

    _run(scenario())


@pytest.mark.parametrize("length", [str(MAX_MESSAGE_BYTES + 1), str(10**20), "9" * 5000])
def test_absurd_length_ends_the_server_with_a_message(tmp_path: Path, length: str) -> None:
    async def scenario() -> None:
        async with _RawServer(_project_root(tmp_path)) as server:
            server.send(f"Content-Length: {length}\r\n\r\n".encode() + PING_1)
            code, stderr = await server.gone()
            assert code == 1
            assert f"is over the limit of {MAX_MESSAGE_BYTES} bytes" in stderr
            assert "MemoryError" not in stderr and "Traceback" not in stderr

    _run(scenario())


@pytest.mark.parametrize(
    ("tail", "said"),
    [
        (b"Content-Length: 40\r\n\r\n{", "stdin ended 1 bytes into a message of 40 bytes"),
        (b"Content-Length: 40\r\n", "stdin ended inside a message header"),
        (b"garbage", "stdin ended after 7 bytes that were not LSP headers"),
    ],
)
def test_stdin_ending_inside_a_message_ends_the_server_with_a_message(tmp_path: Path, tail: bytes, said: str) -> None:
    async def scenario() -> None:
        async with _RawServer(_project_root(tmp_path)) as server:
            server.send(tail)
            assert server.process.stdin is not None
            server.process.stdin.close()
            code, stderr = await server.gone()
            assert code == 1
            assert said in stderr

    _run(scenario())


@pytest.mark.parametrize(("shutdown", "code"), [(True, 0), (False, 1)])
def test_closed_stdin_without_exit_ends_the_server(tmp_path: Path, shutdown: bool, code: int) -> None:
    """A client gone without ``exit``: like ``exit``, 0 after ``shutdown`` and 1 without."""

    async def scenario() -> None:
        async with _RawServer(_project_root(tmp_path)) as server:
            if shutdown:
                server.send(_frame(_body(99, "shutdown")))
                await server.answer(99)
            assert server.process.stdin is not None
            server.process.stdin.close()
            assert (await server.gone())[0] == code

    _run(scenario())
