"""Confirm mode: run each finding's code for real and attach a verdict per device.

Per finding and device: pick an entry point that reaches the flagged site (checked by tracing the
eager run), run it eagerly and compiled as written (and, for CAL002, compiled under the matching
config), compare, and cache the verdict under (file contents, torch version, device). With no runnable
entry point, a synthetic probe built from the finding's facts answers whether the installed torch has
the hazard at all.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from .. import __version__
from ..cache import CACHE_DIRECTORY
from ..findings import ConfirmResult, Finding, Verdict
from ..project import module_identity
from . import compare, probes
from .entries import Entry, candidates, site_info
from .environment import DevicePlan, TorchEnvironment, detect, plan_devices
from .runner import RunOutcome, run_child

CONFIRMABLE = ("CAL001", "CAL002")
_FORMAT = 1
DEFAULT_TIMEOUT = 300.0


@dataclass
class ConfirmOptions:
    devices: list[str] | None = None
    timeout: float = DEFAULT_TIMEOUT
    entries: Sequence[Entry] = ()
    project_root: Path | None = None
    use_cache: bool = True
    log: Callable[[str], None] | None = None
    environment: TorchEnvironment | None = None  # tests inject one; None: detect


def confirm_dir(root: Path) -> Path:
    return root / CACHE_DIRECTORY / "confirm"


class _Session:
    def __init__(self, options: ConfirmOptions, env: TorchEnvironment, work: Path, roots: list[str]) -> None:
        self.options = options
        self.env = env
        self.work = work
        self.roots = roots
        self.inductor_cache = work / "inductor"
        self.runs: dict[tuple, RunOutcome] = {}
        self.counter = 0

    def log(self, message: str) -> None:
        if self.options.log is not None:
            self.options.log(message)

    def run(self, key: tuple, spec: dict, compiled: bool) -> RunOutcome:
        if key not in self.runs:
            self.counter += 1
            self.log(f"confirm: run {self.counter}: {spec['entry'].get('function') or spec['entry'].get('module') or spec['entry'].get('path')} "
                     f"on {spec['device']} ({'compiled' if compiled else 'eager'}{', matching config' if spec.get('force') else ''})")
            spec = dict(spec, compiled=compiled, roots=self.roots + ([spec["entry_root"]] if spec.get("entry_root") else []))
            self.runs[key] = run_child(
                spec, self.work / f"run{self.counter}", self.options.timeout, compiled=compiled, inductor_cache=self.inductor_cache
            )
        return self.runs[key]


def confirm_findings(findings: Sequence[Finding], options: ConfirmOptions) -> list[Finding]:
    """``findings`` with ``confirm`` filled in for every device."""
    findings = list(findings)
    if not findings:
        return findings
    root = options.project_root or Path.cwd()
    cache_dir = confirm_dir(root) if options.use_cache else None
    env = options.environment or detect(cache_dir)
    plans = plan_devices(options.devices, env)
    roots = _roots(findings, options)
    results: list[dict[str, ConfirmResult]] = [{} for _ in findings]
    work = Path(tempfile.mkdtemp(prefix="cal-confirm-"))
    try:
        session = _Session(options, env, work, roots)
        watch = sorted({str(_real(f.location.path)) for f in findings if f.code in CONFIRMABLE})
        for plan in plans:
            for index, finding in enumerate(findings):
                results[index][plan.device] = _confirm_one(session, finding, plan, watch, cache_dir)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return [finding.with_confirm(result) for finding, result in zip(findings, results)]


def _roots(findings: Iterable[Finding], options: ConfirmOptions) -> list[str]:
    roots: list[str] = []
    if options.project_root is not None:
        roots.append(str(options.project_root.resolve()))
    for finding in findings:
        path = _real(finding.location.path)
        if path.is_file():
            roots.append(str(module_identity(path)[2]))
    for entry in options.entries:
        if entry.root:
            roots.append(entry.root)
    return list(dict.fromkeys(roots))


def _real(display: str) -> Path:
    return Path(os.path.abspath(display)).resolve()


def _device_text(session: _Session, device: str) -> str:
    if device == "cuda":
        return f"cuda ({session.env.gpu_name}, torch {session.env.version})"
    return f"{device} (torch {session.env.version})"


# -- caching ------------------------------------------------------------------------------------


def _cache_key(finding: Finding, device: str, env: TorchEnvironment, entries: Sequence[Entry]) -> str | None:
    digest = hashlib.sha256()
    digest.update(json.dumps([__version__, _FORMAT, env.version, device, finding.code, finding.facts, [e.label for e in entries]]).encode())
    paths = {finding.location.path, *(r.location.path for r in finding.related)}
    paths.update(e.path for e in entries if e.path)
    for display in sorted(paths):
        try:
            content = _real(display).read_bytes()
        except OSError:
            return None
        digest.update(display.encode() + b"\0" + hashlib.sha256(content).digest())
    location = finding.location
    digest.update(f"{location.line}:{location.column}:{location.end_line}:{location.end_column}".encode())
    return digest.hexdigest()


def _cache_load(cache_dir: Path | None, key: str | None) -> ConfirmResult | None:
    if cache_dir is None or key is None:
        return None
    try:
        data = json.loads((cache_dir / f"{key}.json").read_text(encoding="utf-8"))
        return ConfirmResult(Verdict(data["verdict"]), data["detail"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _cache_store(cache_dir: Path | None, key: str | None, result: ConfirmResult) -> None:
    if cache_dir is None or key is None:
        return
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        gitignore = cache_dir.parent / ".gitignore"
        if not gitignore.exists():
            gitignore.write_text("# Created by compile-ad-lint\n*\n", encoding="utf-8")
        descriptor, temporary = tempfile.mkstemp(dir=cache_dir, suffix=".tmp")
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump({"verdict": result.verdict.value, "detail": result.detail}, handle)
        os.replace(temporary, cache_dir / f"{key}.json")
    except OSError:
        pass


# -- one finding on one device ------------------------------------------------------------------


def _confirm_one(session: _Session, finding: Finding, plan: DevicePlan, watch: list[str], cache_dir: Path | None) -> ConfirmResult:
    if plan.skip_reason is not None:
        return ConfirmResult(Verdict.SKIPPED, plan.skip_reason)
    if finding.code not in CONFIRMABLE:
        return ConfirmResult(Verdict.SKIPPED, f"confirm mode runs code for {' and '.join(CONFIRMABLE)} only")
    key = _cache_key(finding, plan.device, session.env, session.options.entries)
    cached = _cache_load(cache_dir, key)
    if cached is not None:
        return cached
    result, transient = _evaluate(session, finding, plan.device, watch)
    if not transient:
        _cache_store(cache_dir, key, result)
    return result


def _evaluate(session: _Session, finding: Finding, device: str, watch: list[str]) -> tuple[ConfirmResult, bool]:
    path = _real(finding.location.path)
    info = site_info(path, finding.location.line)
    site = compare.Site(str(path), info.statement, info.function)
    where = _device_text(session, device)
    failures: list[str] = []
    transient = False
    for entry in candidates(path, finding.location.line, list(session.options.entries)):
        eager = session.run(("eager", entry, device), _spec(entry, device, watch), compiled=False)
        if eager.timed_out:
            failures.append(f"entry point `{entry.label}` timed out after {session.options.timeout:g}s in the eager run (the process group was killed)")
            transient = True
            continue
        if eager.result is None or eager.status == "no-torch":
            failures.append(f"entry point `{entry.label}` could not run ({eager.output_summary()})")
            continue
        reached = any(site.lines[0] <= line <= site.lines[1] for line in eager.result.get("executed", {}).get(str(path), []))
        if eager.status == "exception":
            exc = compare.exception_text(eager.result["exception"])
            if reached:
                return ConfirmResult(Verdict.ERROR, f"on {where}: entry point `{entry.label}` failed in the eager run too ({exc}); output: {eager.output_summary()}"), False
            failures.append(f"entry point `{entry.label}` failed in the eager run before reaching the flagged line ({exc})")
            continue
        if not reached:
            continue
        result = _compare_entry(session, finding, entry, device, site, eager)
        return ConfirmResult(result.verdict, f"on {where}, entry point `{entry.label}`: {result.detail}"), False
    if failures:
        return ConfirmResult(Verdict.ERROR, f"on {where}: " + "; ".join(failures)), transient
    result, transient = _synthetic(session, finding, device)
    return ConfirmResult(result.verdict, f"on {where}, synthetic probe (no entry point reaches the flagged line; the project's code was not run): {result.detail}"), transient


def _spec(entry: Entry, device: str, watch: list[str], force: list | None = None) -> dict:
    return {
        "mode": "run",
        "device": device,
        "entry": entry.spec(),
        "entry_root": entry.root,
        "watch": watch,
        "force": force or [],
    }


def _compiled_spec(entry: Entry, device: str, force: list | None = None) -> dict:
    return _spec(entry, device, [], force)


def _compare_entry(session: _Session, finding: Finding, entry: Entry, device: str, site: compare.Site, eager: RunOutcome) -> ConfirmResult:
    compiled = session.run(("compiled", entry, device), _compiled_spec(entry, device), compiled=True)
    problem = _run_problem(compiled, "compiled run as written", session)
    if problem is not None:
        return problem
    facts = finding.facts_dict
    if finding.code == "CAL001":
        return compare.verdict_cal001(eager.result, eager.tensor, compiled.result, compiled.tensor, site, device)
    force = [[_call_site(finding), _matching_value(facts)]]
    matching = session.run(("matching", entry, device, json.dumps(force)), _compiled_spec(entry, device, force), compiled=True)
    problem = _run_problem(matching, "compiled run under the matching config", session)
    if problem is not None:
        return problem
    return compare.verdict_cal002(
        eager.result,
        eager.tensor,
        compiled.result,
        compiled.tensor,
        matching.result,
        matching.tensor,
        site,
        device,
        facts.get("config", "?"),
        facts.get("matching_config", "?"),
        facts.get("backend", "?"),
    )


def _run_problem(outcome: RunOutcome, name: str, session: _Session) -> ConfirmResult | None:
    if outcome.timed_out:
        return ConfirmResult(Verdict.ERROR, f"the {name} timed out after {session.options.timeout:g}s (the eager run did not; the process group was killed)")
    if outcome.result is None:
        return ConfirmResult(Verdict.ERROR, f"the {name} died without a result (exit code {outcome.returncode}; {outcome.output_summary()})")
    return None


def _matching_value(facts: dict) -> object:
    import ast

    text = facts.get("matching_config")
    try:
        value = ast.literal_eval(text) if text else "off"
    except (ValueError, SyntaxError):
        return "off"
    return value


def _call_site(finding: Finding) -> list | None:
    """The compiled call behind a CAL002 finding (file, first line, last line of its statement)."""
    site = finding.facts_dict.get("call_site")
    if not site:
        return None
    display, _, line = site.rpartition(":")
    path = _real(display)
    lines = site_info(path, int(line)).statement
    return [str(path), lines[0], lines[1]]


def _synthetic(session: _Session, finding: Finding, device: str) -> tuple[ConfirmResult, bool]:
    facts = finding.facts_dict
    source = probes.cal001_probe(facts) if finding.code == "CAL001" else probes.cal002_probe(facts, device)
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    probe_dir = session.work / f"probe-{digest}"
    probe_dir.mkdir(exist_ok=True)
    probe_path = probe_dir / "cal_probe.py"
    probe_path.write_text(source, encoding="utf-8")
    entry = Entry("path-function", f"synthetic:{digest}", path=str(probe_path), function="probe")
    line = probes.marked_line(source, "SITE")
    site = compare.Site(str(probe_path.resolve()), (line, line), None)
    eager = session.run(("eager", entry, device), _spec(entry, device, [str(probe_path.resolve())]), compiled=False)
    if eager.timed_out:
        return ConfirmResult(Verdict.ERROR, f"the probe timed out after {session.options.timeout:g}s in the eager run"), True
    if eager.result is None or eager.status != "ok":
        detail = compare.exception_text(eager.result["exception"]) if eager.result and eager.result.get("exception") else eager.output_summary()
        return ConfirmResult(Verdict.ERROR, f"the probe failed in the eager run ({detail})"), False
    compiled = session.run(("compiled", entry, device), _compiled_spec(entry, device), compiled=True)
    problem = _run_problem(compiled, "compiled probe run", session)
    if problem is not None:
        return problem, compiled.timed_out
    if finding.code == "CAL001":
        what = f"backend={probes._backend(facts)!r}, {'compiled nn.Linear' if facts.get('expected') == 'raises' else 'compiled function'}"
        result = compare.verdict_cal001(eager.result, eager.tensor, compiled.result, compiled.tensor, site, device)
        return ConfirmResult(result.verdict, f"{what}: {result.detail}"), False
    call = probes.marked_line(source, "CALL")
    force = [[[str(probe_path.resolve()), call, call], probes.parse_config(facts.get("matching_config"), device)]]
    matching = session.run(("matching", entry, device, json.dumps(force)), _compiled_spec(entry, device, force), compiled=True)
    problem = _run_problem(matching, "compiled probe run under the matching config", session)
    if problem is not None:
        return problem, matching.timed_out
    result = compare.verdict_cal002(
        eager.result, eager.tensor, compiled.result, compiled.tensor, matching.result, matching.tensor, site, device,
        facts.get("config", "?"), facts.get("matching_config", "?"), facts.get("backend", "?"),
    )
    return ConfirmResult(result.verdict, f"fp32-island region, forward autocast {facts.get('forward_autocast')}, backward autocast {facts.get('backward_autocast')}: {result.detail}"), False
