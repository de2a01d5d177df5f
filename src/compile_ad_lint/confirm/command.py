"""``compile-ad-lint confirm [PATHS] -- COMMAND ...``: verdicts from the user's own run.

The flagged sites go into a sites file in a private work folder; the user's command runs in their
environment and working directory with a bootstrap folder first on ``PYTHONPATH`` (its
``sitecustomize`` loads ``_live.py`` in every Python process of the command, workers started by
torchrun or accelerate included) and the sites file named in ``COMPILE_AD_LINT_CONFIRM_SITES``.
No file of the project is edited and nothing is written into it: the measurements land in the work
folder, which is deleted afterwards.

The run ends when the instrumented process says every site it can reach is measured (it stops
itself), when the command exits, or at ``max_seconds``; then every process it started is killed
(``runner.end_processes``: the run's environment marker and its process tree). Each finding's verdict
is judged here from its site's measurement (``live_verdicts``); a site no process reached is
``not-reached``, by line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..core.findings import ConfirmResult, Finding, Verdict
from ..rules.backward_autocast_mismatch import Cal002Evidence
from ..rules.compiled_callable_in_dual_level import Cal001Evidence
from ..rules.double_backward_through_compiled import Cal004Evidence, Cal004FunctionalEvidence, Cal004InsideEvidence
from ..rules.unused_compiled_output_zero_grad import Cal005Evidence
from . import live_verdicts, verdicts
from .runner import MARKER, end_processes

SITES_ENV = "COMPILE_AD_LINT_CONFIRM_SITES"
LIVE_ENV = "COMPILE_AD_LINT_CONFIRM_LIVE"
BOOTSTRAP = Path(__file__).with_name("bootstrap")
LIVE = Path(__file__).with_name("_live.py")
CONFIRMABLE = ("CAL001", "CAL002", "CAL004", "CAL005")
DEFAULT_MAX_SECONDS = 900.0
#: How long a process that said it is done may take to exit before it is killed.
_STOP_GRACE = 10.0


@dataclass
class CommandOptions:
    command: Sequence[str]
    max_seconds: float = DEFAULT_MAX_SECONDS
    until_exit: bool = False
    cwd: Path | None = None
    #: Where the command's own output goes as it runs (None: kept, only its tail is reported).
    echo: TextIO | None = None
    log: Callable[[str], None] | None = None


@dataclass
class CommandRun:
    """How the user's command ended, and the findings with their verdicts."""

    findings: list[Finding]
    returncode: int | None
    seconds: float
    ended: str
    output_tail: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Site:
    number: int
    finding: Finding
    document: dict[str, Any]


def site_of(number: int, finding: Finding) -> _Site | None:
    """What the instrumented run watches for ``finding`` (None: not a site confirm can run)."""
    evidence = finding.evidence
    if finding.code not in CONFIRMABLE or evidence is None or isinstance(evidence, Cal004InsideEvidence):
        return None
    flagged = evidence.flagged_site
    line = finding.location.line
    document: dict[str, Any] = {
        "id": number,
        "code": finding.code,
        "file": str(finding.location.file),
        "lines": list(flagged.lines if flagged else (line, line)),
        "backend": getattr(evidence, "backend", "inductor"),
    }
    if isinstance(evidence, Cal002Evidence):
        call = evidence.compiled_call
        lines = evidence.compiled_call_site.lines if evidence.compiled_call_site else (call.line, call.line)
        document["call"] = {"file": str(call.file), "lines": list(lines)}
    elif isinstance(evidence, (Cal004Evidence, Cal005Evidence)):
        call = evidence.compiled_call
        document["call"] = {"file": str(call.file), "lines": [call.line, call.end_line]}
        if isinstance(evidence, Cal004FunctionalEvidence):
            document["functional"] = evidence.function
    elif not isinstance(evidence, Cal001Evidence):
        return None
    return _Site(number, finding, document)


def confirm_command(findings: Sequence[Finding], options: CommandOptions) -> CommandRun:
    """Run the command once under instrumentation and attach each finding's verdict."""
    sites = [site for site in (site_of(number, f) for number, f in enumerate(findings)) if site is not None]
    work = Path(tempfile.mkdtemp(prefix="cal-confirm-command-"))
    try:
        return _run(list(findings), sites, options, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _environment(sites_file: Path, token: str) -> dict[str, str]:
    env = dict(os.environ)
    existing = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(BOOTSTRAP) + (os.pathsep + existing if existing else "")
    env[SITES_ENV] = str(sites_file)
    env[LIVE_ENV] = str(LIVE)
    env[MARKER] = token
    return env


def _run(findings: list[Finding], sites: list[_Site], options: CommandOptions, work: Path) -> CommandRun:
    out = work / "results"
    out.mkdir()
    sites_file = work / "sites.json"
    sites_file.write_text(
        json.dumps({"out": str(out), "until_exit": options.until_exit, "sites": [s.document for s in sites]}),
        encoding="utf-8",
    )
    token = uuid.uuid4().hex
    tail: deque[str] = deque(maxlen=20)
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            list(options.command),
            cwd=options.cwd,
            env=_environment(sites_file, token),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as error:
        reason = f"the command could not start: {error.strerror or error}"
        return CommandRun(_attach(findings, sites, {}, reason, 0.0), None, 0.0, reason)
    reader = threading.Thread(target=_relay, args=(process, tail, options.echo), daemon=True)
    reader.start()
    ended = ""
    try:
        ended = _wait(process, out, options, started)
    except KeyboardInterrupt:
        ended = "interrupted"
        raise
    finally:
        end_processes(process, token)
        reader.join(timeout=5)
    seconds = time.monotonic() - started
    merged, problems = _collect(out)
    if process.returncode not in (None, 0) and "stopped" not in ended:
        ended = f"{ended} (exit code {process.returncode})"
    return CommandRun(
        _attach(findings, sites, merged, ended, seconds), process.returncode, seconds, ended, list(tail), problems
    )


def _relay(process: subprocess.Popen, tail: deque[str], echo: TextIO | None) -> None:
    assert process.stdout is not None
    for raw in process.stdout:
        line = raw.decode("utf-8", "replace")
        tail.append(line.rstrip("\n"))
        if echo is not None:
            try:
                echo.write(line)
                echo.flush()
            except (OSError, ValueError):
                echo = None


def _wait(process: subprocess.Popen, out: Path, options: CommandOptions, started: float) -> str:
    """Why the run ended: the instrumentation stopped it, the command exited, or time ran out."""
    stop_seen: float | None = None
    while True:
        code = process.poll()
        stop = _stop_reason(out)
        if stop is not None and stop_seen is None:
            stop_seen = time.monotonic()
        if code is not None:
            return f"stopped by confirm: {stop}" if stop else "the command exited"
        if stop_seen is not None and time.monotonic() - stop_seen > _STOP_GRACE:
            return f"stopped by confirm: {stop}"
        if time.monotonic() - started > options.max_seconds:
            return f"stopped at --max-seconds {options.max_seconds:g}"
        time.sleep(0.2)


def _read(path: Path) -> dict[str, Any] | None:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) else None


def _stop_reason(out: Path) -> str | None:
    for path in out.glob("*.json"):
        document = _read(path)
        if document is not None and document.get("stop"):
            return str(document["stop"])
    return None


def _collect(out: Path) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Per site: hits over every process, the first measurement (rank 0's first), the torch that ran it."""
    documents = [d for d in (_read(p) for p in sorted(out.glob("*.json"))) if d is not None]
    documents.sort(key=lambda d: (d.get("rank") not in (None, "0"), d.get("pid", 0)))
    merged: dict[str, dict[str, Any]] = {}
    problems = sorted({str(d["problem"]) for d in documents if d.get("problem")})
    for document in documents:
        for key, entry in (document.get("sites") or {}).items():
            target = merged.setdefault(key, {"hits": 0, "measurement": None, "torch": None, "first_seconds": None})
            target["hits"] += int(entry.get("hits") or 0)
            if target["first_seconds"] is None:
                target["first_seconds"] = entry.get("first_seconds")
            if target["measurement"] is None and entry.get("measurement"):
                target["measurement"] = entry["measurement"]
                target["torch"] = document.get("torch")
    versions = sorted({str(d["torch"]) for d in documents if d.get("torch")})
    for entry in merged.values():
        entry["torch"] = entry["torch"] or (versions[0] if versions else None)
    merged["*"] = {"torch": versions[0] if versions else None, "cuda": any(d.get("cuda") for d in documents)}
    return merged, problems


def _attach(
    findings: list[Finding], sites: list[_Site], merged: dict[str, dict[str, Any]], ended: str, seconds: float
) -> list[Finding]:
    by_number = {site.number: site for site in sites}
    torch_version = (merged.get("*") or {}).get("torch")
    gpu = bool((merged.get("*") or {}).get("cuda"))
    result = []
    for number, finding in enumerate(findings):
        site = by_number.get(number)
        if site is None:
            skipped = verdicts.plain(Verdict.SKIPPED, _not_watched(finding))
            result.append(finding.with_confirm({"run": skipped}))
            continue
        device, verdict = _verdict(site, merged.get(str(number)), torch_version, gpu, ended, seconds)
        result.append(finding.with_confirm({device: verdict}))
    return result


def _not_watched(finding: Finding) -> str:
    """Why the run does not watch ``finding``."""
    if isinstance(finding.evidence, Cal004InsideEvidence):
        return "confirm mode does not watch the backwards a compiled function runs inside itself"
    return f"confirm mode runs code for {', '.join(CONFIRMABLE)} only"


def _verdict(
    site: _Site, entry: dict[str, Any] | None, torch_version: str | None, gpu: bool, ended: str, seconds: float
) -> tuple[str, ConfirmResult]:
    lines = site.document["lines"]
    where = f"line {lines[0]}" if lines[0] == lines[1] else f"lines {lines[0]}-{lines[1]}"
    if torch_version is None and entry is None:
        why = "no process of the command imported torch"
        return "run", verdicts.plain(
            Verdict.NOT_REACHED, f"the run never reached {where} ({why}; {ended} after {seconds:.1f} s)"
        )
    if entry is None or not entry.get("hits"):
        return "run", verdicts.plain(
            Verdict.NOT_REACHED,
            f"the run never reached {where} ({ended} after {seconds:.1f} s)",
            torch_version=torch_version,
        )
    measurement = entry.get("measurement")
    version = entry.get("torch") or torch_version
    if not measurement:
        return "run", verdicts.plain(
            Verdict.ERROR,
            f"the run reached {where} ({entry['hits']} time(s)) but ended before its measurement ({ended} after {seconds:.1f} s)",
            torch_version=version,
        )
    device = str(measurement.get("device") or "?")
    device = device if device != "?" else "run"
    decided = live_verdicts.decide(site.finding.code, measurement)
    reached = f"your run reached {where} {entry['hits']} time(s), first after {entry.get('first_seconds')} s"
    decided = ConfirmResult(
        decided.verdict,
        f"{decided.detail} ({reached})",
        compared=decided.compared,
        difference=decided.difference,
        tolerance=decided.tolerance,
    )
    cannot_show = verdicts.cannot_show_reason(site.finding, device, gpu_present=gpu)
    return device, verdicts.project_result(decided, device, version, cannot_show)
