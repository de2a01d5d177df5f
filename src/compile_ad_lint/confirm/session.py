"""Confirm mode: run each finding's code for real and attach a verdict per device.

Per finding and device: pick an entry point that reaches the flagged site (checked by tracing the
eager run), run it eagerly and compiled as written (and, for CAL002, compiled under the matching
config and eagerly with the flagged regions' backward under the autocast state their compiled backward
assumed: the eager differential), compare, and cache the verdict under (the project's source files,
torch version, device, the finding and the fixes that share its runs). With no entry point that
reaches the site in both runs, a synthetic probe built from the finding's evidence answers whether the
installed torch has the hazard at all.

Findings are evaluated in threads; the subprocess runs they need are shared (one eager, one compiled,
one matching-config and one eager-differential run per entry point and device serve every finding it
reaches; a fix that needs its own matching run gets its own eager-differential run too) and run
``jobs`` at a time, one at a time on a GPU. Each run works on a fresh copy of the project listed once
per session (:class:`~.runner.SourceTree`); the same listing gives the cache key's source files.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..cache import SummaryCache, build_digest, content_digest
from ..core.findings import ConfirmResult, Finding, Verdict
from ..project import module_identity
from ..rules.backward_autocast_mismatch import Cal002Evidence
from ..rules.compiled_callable_in_dual_level import Cal001Evidence
from ..rules.double_backward_through_compiled import Cal004Evidence, Cal004InsideEvidence
from ..rules.unused_compiled_output_zero_grad import Cal005Evidence
from . import compare, probes, verdicts
from .entries import Entry, candidates, parse_problem
from .environment import DevicePlan, TorchEnvironment, detect, plan_devices
from .runner import RunOutcome, RunSpec, SourceTree, run_child

CONFIRMABLE = ("CAL001", "CAL002", "CAL004", "CAL005")
#: The evidence each confirmable rule attaches: what the runs and probes are built from.
_EVIDENCE: dict[str, type] = {
    "CAL001": Cal001Evidence,
    "CAL002": Cal002Evidence,
    "CAL004": Cal004Evidence,
    "CAL005": Cal005Evidence,
}
_FORMAT = 5  # 5: verdicts name their source (project code or synthetic probe), device and torch
DEFAULT_TIMEOUT = 300.0


@dataclass
class ConfirmOptions:
    devices: list[str] | None = None
    timeout: float = DEFAULT_TIMEOUT
    entries: Sequence[Entry] = ()
    project_root: Path | None = None
    use_cache: bool = True
    jobs: int | None = None  # concurrent subprocess runs; None: CPU count, at most 4
    log: Callable[[str], None] | None = None
    environment: TorchEnvironment | None = None  # tests inject one; None: detect


class _Session:
    """Shared state of one confirm run: subprocess runs are deduplicated by key and executed ``jobs`` at a time."""

    def __init__(
        self, options: ConfirmOptions, env: TorchEnvironment, work: Path, roots: list[str], findings: list[Finding]
    ) -> None:
        self.options = options
        self.env = env
        self.work = work
        self.roots = roots
        self.fixes = [
            _Fix.of(finding) if isinstance(finding.evidence, Cal002Evidence) else None for finding in findings
        ]
        named = [str(f.location.file) for f in findings] + [e.path for e in options.entries if e.path]
        start = str(options.project_root) if options.project_root is not None else None
        self.tree = SourceTree.scan(roots, start=start, extra=named, skip=str(work))
        self.sources = sources_digest(self.tree) if options.use_cache else ""
        self.force_plans: dict[tuple, _ForcePlan] = {}
        self.inductor_cache = work / "inductor"
        self.jobs = max(1, options.jobs or min(4, os.cpu_count() or 1))
        self.runs: dict[tuple, Future[RunOutcome]] = {}
        self.lock = threading.Lock()
        self.gpu = threading.Lock()
        self.pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="cal-confirm-run")
        self.counter = 0
        #: Per finding: its candidate entry points, or why its file cannot give any (set before the
        #: evaluator threads start).
        self.entry_points: list[list[Entry] | str] = []

    def log(self, message: str) -> None:
        if self.options.log is not None:
            with self.lock:
                self.options.log(message)

    def submit(self, key: tuple, spec: RunSpec) -> Future[RunOutcome]:
        """The run for ``key``, started now unless another finding already asked for it."""
        with self.lock:
            future = self.runs.get(key)
            if future is None:
                self.counter += 1
                future = self.runs[key] = self.pool.submit(self._execute, self.counter, spec)
        return future

    def run(self, key: tuple, spec: RunSpec) -> RunOutcome:
        return self.submit(key, spec).result()

    def _execute(self, number: int, spec: RunSpec) -> RunOutcome:
        entry = spec.entry
        name = entry.function or entry.module or entry.path
        mode = "compiled" if spec.compiled else "eager"
        if number == 1:
            left_out = (
                f"; {self.tree.left_out} non-Python files over its size limits are left out"
                if self.tree.left_out
                else ""
            )
            self.log(
                f"confirm: each run gets its own copy of the project ({len(self.tree.files)} files, {self.tree.size() / 1e6:.1f} MB){left_out}"
            )
        variant = ", matching config" if spec.force else ", backward under the assumed autocast" if spec.assume else ""
        self.log(f"confirm: run {number}: {name} on {spec.device} ({mode}{variant})")
        with self.gpu if spec.device == "cuda" else contextlib.nullcontext():
            return run_child(
                spec,
                self.work / f"run{number}",
                self.options.timeout,
                inductor_cache=self.inductor_cache,
                tree=self.tree,
            )

    def force_plan(self, entry: Entry, device: str, eager: RunOutcome) -> _ForcePlan:
        """How the matching-config runs of ``entry`` force each CAL002 fix (computed once per entry and device)."""
        with self.lock:
            key = (entry, device)
            if key not in self.force_plans:
                self.force_plans[key] = _ForcePlan.of(dict(enumerate(self.fixes)), eager.result or {})
            return self.force_plans[key]

    def close(self) -> None:
        self.pool.shutdown(wait=True)


def confirm_findings(findings: Sequence[Finding], options: ConfirmOptions) -> list[Finding]:
    """``findings`` with ``confirm`` filled in for every device."""
    findings = list(findings)
    if not findings:
        return findings
    root = options.project_root or Path.cwd()
    # Verdicts live in the project's cache beside the summaries: the same checks apply to them
    # (a directory this tool created here, authenticated entries, plain data).
    cache = SummaryCache.open(root) if options.use_cache else None
    env = options.environment or detect(cache)
    plans = plan_devices(options.devices, env)
    roots = _roots(findings, options)
    work = Path(tempfile.mkdtemp(prefix="cal-confirm-"))
    session = _Session(options, env, work, roots, findings)
    try:
        watch = sorted({str(f.location.file) for f in findings if f.code in CONFIRMABLE})
        fixes = json.dumps([fix.key() if fix else None for fix in session.fixes])
        tasks = [(index, plan) for plan in plans for index in range(len(findings))]
        # Entry points are found here, before the evaluator threads start: parsing in many threads at
        # once is what made CPython 3.11's AST constructor fail (see ``pyast``).
        session.entry_points = [_entry_points(session, finding) for finding in findings]
        with ThreadPoolExecutor(
            max_workers=min(64, len(tasks)), thread_name_prefix="cal-confirm-finding"
        ) as evaluators:
            verdicts = list(
                evaluators.map(
                    lambda task: _confirm_one(session, findings, task[0], task[1], watch, cache, fixes), tasks
                )
            )
    finally:
        session.close()
        shutil.rmtree(work, ignore_errors=True)
    results: list[dict[str, ConfirmResult]] = [{} for _ in findings]
    for (index, plan), verdict in zip(tasks, verdicts):
        results[index][plan.device] = verdict
    return [finding.with_confirm(result) for finding, result in zip(findings, results)]


@dataclass(frozen=True)
class _Fix:
    """A CAL002 finding's fix: the compiled call (file, statement lines), the matching value, the backward line."""

    call_site: tuple[str, int, int] | None
    value: object
    backward: tuple[str, int]

    @classmethod
    def of(cls, finding: Finding) -> _Fix:
        evidence = finding.evidence
        assert isinstance(evidence, Cal002Evidence)
        call = evidence.compiled_call
        # The statement around the compiled call: a run's stack names the line being executed in it.
        first, last = evidence.compiled_call_site.lines if evidence.compiled_call_site else (call.line, call.line)
        # An autocast device unknown statically stays "?": the child resolves it to the device it runs on.
        value = probes.config_json(evidence.matching_config, "?")
        return cls((str(call.file), first, last), value, (finding.location.path, finding.location.line))

    def key(self) -> list:
        return [self.call_site, self.value, self.backward]

    def handles(self, eager: dict) -> frozenset[int]:
        """The compiled callables (by creation order) that the eager run called from the flagged compiled call."""
        if self.call_site is None:
            return frozenset()
        path, first, last = self.call_site
        call = compare.Site(path, (first, last))
        return frozenset(handle for handle, stack in eager.get("handle_calls", []) if call.on_stack(stack))


@dataclass(frozen=True)
class _ForcePlan:
    """Matching-config overrides for one entry point, keyed by compiled callable.

    One shared matching run serves every fix that is unambiguous; a compiled callable flagged with two
    different matching values, or a backward fed by callables of different fixes, gets its own run
    (``own``, by finding index) so each verdict measures one fix.
    """

    handles: dict[int, frozenset[int]]
    shared: list
    own: dict[int, list]

    @classmethod
    def of(cls, fixes: dict[int, _Fix | None], eager: dict) -> _ForcePlan:
        reached = {index: (fix, fix.handles(eager)) for index, fix in fixes.items() if fix is not None}
        reached = {index: (fix, found) for index, (fix, found) in reached.items() if found}
        values: dict[int, set[str]] = {}
        per_backward: dict[tuple, set[int]] = {}
        for fix, found in reached.values():
            for handle in found:
                values.setdefault(handle, set()).add(json.dumps(fix.value))
            per_backward.setdefault(fix.backward, set()).update(found)
        shared: dict[int, object] = {}
        own: dict[int, list] = {}
        for index, (fix, found) in reached.items():
            if all(len(values[handle]) == 1 for handle in found) and per_backward[fix.backward] == found:
                shared.update((handle, fix.value) for handle in found)
            else:
                own[index] = [[handle, fix.value] for handle in sorted(found)]
        handles = {index: found for index, (_, found) in reached.items()}
        return cls(handles, [[handle, value] for handle, value in sorted(shared.items())], own)

    def force_for(self, index: int) -> list:
        return self.own.get(index, self.shared)


def _roots(findings: Iterable[Finding], options: ConfirmOptions) -> list[str]:
    roots: list[str] = []
    if options.project_root is not None:
        roots.append(str(options.project_root.resolve()))
    for finding in findings:
        path = finding.location.file
        if path.is_file():
            roots.append(str(module_identity(path)[2]))
    for entry in options.entries:
        if entry.root:
            roots.append(entry.root)
    return list(dict.fromkeys(roots))


def _device_text(session: _Session, device: str) -> str:
    if device == "cuda":
        return f"cuda ({session.env.gpu_name}, torch {session.env.version})"
    return f"{device} (torch {session.env.version})"


# -- caching ------------------------------------------------------------------------------------


def _cache_key(
    finding: Finding, device: str, env: TorchEnvironment, entries: Sequence[Entry], fixes: str, sources: str
) -> str:
    """Torch, device, entries, every CAL002 fix (they share matching runs) and ``sources`` decide a verdict."""
    location = finding.location
    where = [location.path, location.line, location.column, location.end_line, location.end_column]
    key = [
        build_digest(),
        _FORMAT,
        env.version,
        device,
        finding.code,
        finding.facts,
        where,
        [e.label for e in entries],
        fixes,
        sources,
    ]
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()


def sources_digest(tree: SourceTree) -> str:
    """A digest of every Python file the runs get a copy of (those under the import roots): the code an
    entry point can run.

    Any edit there (a model definition imported by the flagged file, a module named by ``--entry``)
    makes the cached verdicts stale. Discovery's default excludes keep environments and caches out.
    """
    digest = hashlib.sha256()
    for path in tree.python:
        try:
            content = content_digest(Path(path).read_bytes())
        except OSError:
            content = "unreadable"
        digest.update(f"{path}\0{content}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


# -- one finding on one device ------------------------------------------------------------------


def _confirm_one(
    session: _Session,
    findings: list[Finding],
    index: int,
    plan: DevicePlan,
    watch: list[str],
    cache: SummaryCache | None,
    fixes: str,
) -> ConfirmResult:
    try:
        return _confirm_guarded(session, findings, index, plan, watch, cache, fixes)
    except Exception as error:  # one finding's failure is its verdict; the others go on
        return verdicts.plain(
            Verdict.ERROR, f"confirm mode failed on this finding: {type(error).__name__}: {error}", plan.device
        )


def _entry_points(session: _Session, finding: Finding) -> list[Entry] | str:
    path = finding.location.file
    if finding.code not in CONFIRMABLE:
        return []
    problem = parse_problem(path)
    if problem is not None:
        return problem
    return candidates(path, finding.location.line, list(session.options.entries))


def _confirm_guarded(
    session: _Session,
    findings: list[Finding],
    index: int,
    plan: DevicePlan,
    watch: list[str],
    cache: SummaryCache | None,
    fixes: str,
) -> ConfirmResult:
    finding = findings[index]
    if plan.skip_reason is not None:
        return verdicts.plain(Verdict.SKIPPED, plan.skip_reason, plan.device, session.env.version)
    if finding.code not in CONFIRMABLE:
        return verdicts.plain(
            Verdict.SKIPPED, f"confirm mode runs code for {' and '.join(CONFIRMABLE)} only", plan.device
        )
    if not isinstance(finding.evidence, _EVIDENCE[finding.code]):
        return verdicts.plain(Verdict.SKIPPED, "the finding carries no evidence from its rule to run from", plan.device)
    key = _cache_key(finding, plan.device, session.env, session.options.entries, fixes, session.sources)
    cached = cache.load(key, ConfirmResult) if cache is not None else None
    if cached is not None:
        return cached
    entry_points = session.entry_points[index]
    if isinstance(entry_points, str):
        return verdicts.plain(
            Verdict.ERROR, f"no entry point could be read: {entry_points}", plan.device, session.env.version
        )
    result, transient = _evaluate(session, finding, index, plan.device, watch, entry_points)
    if not transient and cache is not None:
        cache.store(key, result)
    return result


def _evaluate(
    session: _Session, finding: Finding, index: int, device: str, watch: list[str], entry_points: list[Entry]
) -> tuple[ConfirmResult, bool]:
    """The first candidate entry point that reaches the site in both runs decides.

    An entry that times out or fails eagerly makes the verdict ``error`` (the user's code cannot be
    compared); with no candidate, or none whose runs both reach the site, a synthetic probe answers.
    """
    path = finding.location.file
    # Where the flagged call runs, as the analysis saw it (a run's stack is matched against it).
    flagged = finding.evidence.flagged_site if finding.evidence is not None else None
    line = finding.location.line
    site = compare.Site(str(path), flagged.lines if flagged else (line, line), flagged.function if flagged else None)
    where = _device_text(session, device)
    cannot_show = verdicts.cannot_show_reason(finding, device, session.env.cuda)
    failures: list[str] = []
    notes: list[str] = []
    transient = False
    for entry in entry_points:
        eager = session.run(("eager", entry, device), _spec(session, entry, device, watch, compiled=False, trace=True))
        if eager.timed_out:
            failures.append(
                f"entry point {entry.label} timed out after {session.options.timeout:g}s in the eager run (every process it started was killed)"
            )
            transient = True
            continue
        if eager.result is None or eager.status in ("no-torch", "no-device"):
            failures.append(f"entry point {entry.label} could not run ({_failure_text(eager)})")
            continue
        reached = any(
            site.lines[0] <= line <= site.lines[1] for line in eager.result.get("executed", {}).get(str(path), [])
        )
        if eager.status == "exception":
            exception = eager.result["exception"]
            exc = compare.exception_text(exception)
            if reached and site.on_stack(exception.get("frames", [])):
                return verdicts.plain(
                    Verdict.ERROR,
                    f"on {where}: entry point {entry.label} fails at the flagged line in the eager run too ({exc}); output: {eager.output_summary()}",
                    device,
                    session.env.version,
                ), False
            if not reached:
                failures.append(
                    f"entry point {entry.label} failed in the eager run before reaching the flagged line ({exc})"
                )
                continue
        if not reached:
            notes.append(f"entry point {entry.label} ran but did not reach the flagged line")
            continue
        result, run_transient = _compare(
            session, finding, entry, device, site, eager, session.force_plan(entry, device, eager), index, watch
        )
        transient = transient or run_transient
        if isinstance(result, compare.Unusable):
            notes.append(f"entry point {entry.label} reached the flagged line eagerly, but {result.reason}")
            continue
        result = replace(result, detail=f"on {where}, entry point {entry.label}: {result.detail}")
        return verdicts.project_result(result, device, session.env.version, cannot_show), transient
    if failures:
        return verdicts.plain(
            Verdict.ERROR, f"on {where}: " + "; ".join(failures + notes), device, session.env.version
        ), transient
    result, probe_transient = _synthetic(session, finding, device)
    transient = transient or probe_transient
    why = "; ".join(notes) if notes else "no zero-argument function around it, no __main__ block and no --entry"
    result = replace(
        result,
        detail=f"on {where}, synthetic probe (the project's code was not compared: {why}): {result.detail}",
    )
    return verdicts.synthetic_result(result, device, session.env.version, cannot_show), transient


def _spec(
    session: _Session,
    entry: Entry,
    device: str,
    focus: list[str],
    *,
    compiled: bool,
    trace: bool = False,
    force: list[list[Any]] | None = None,
    assume: list[int] | None = None,
) -> RunSpec:
    """The run of ``entry`` on ``device`` with the session's import roots (see ``RunSpec``); ``trace``:
    record which lines of ``focus`` ran (the eager run, to tell whether the entry reaches the site)."""
    return RunSpec(
        entry,
        device,
        compiled=compiled,
        roots=tuple(session.roots),
        focus=tuple(focus),
        watch=tuple(focus) if trace else (),
        force=tuple((handle, value) for handle, value in force or ()),
        assume=tuple(assume or ()),
    )


def _failure_text(outcome: RunOutcome) -> str:
    exception = (outcome.result or {}).get("exception")
    return compare.exception_text(exception) if exception else outcome.output_summary()


def _compare(
    session: _Session,
    finding: Finding,
    entry: Entry,
    device: str,
    site: compare.Site,
    eager: RunOutcome,
    forces: _ForcePlan,
    index: int,
    focus: list[str],
) -> tuple[ConfirmResult | compare.Unusable, bool]:
    """Run the entry compiled as written (and, for CAL002, under the matching config) and judge against eager.

    The flag is True when a run timed out or died: that verdict is not cached.
    """
    eager_result = _result_or_problem(eager, "eager run", session)  # the callers pass only eager runs with a result
    if isinstance(eager_result, ConfirmResult):
        return eager_result, eager.timed_out
    compiled = session.run(("compiled", entry, device), _spec(session, entry, device, focus, compiled=True))
    compiled_result = _result_or_problem(compiled, "compiled run as written", session)
    if isinstance(compiled_result, ConfirmResult):
        return compiled_result, True
    evidence = finding.evidence
    if finding.code == "CAL001":
        return compare.verdict_cal001(eager_result, eager.tensor, compiled_result, compiled.tensor, site, device), False
    if isinstance(evidence, Cal004InsideEvidence):
        return compare.verdict_cal004_inside(eager_result, compiled_result), False
    if finding.code == "CAL004":
        return compare.verdict_cal004(eager_result, eager.tensor, compiled_result, compiled.tensor, site, device), False
    if finding.code == "CAL005":
        assert isinstance(evidence, Cal005Evidence)
        return compare.verdict_cal005(
            eager_result, eager.tensor, compiled_result, compiled.tensor, site, ",".join(evidence.leaves)
        ), False
    handles = forces.handles.get(index)
    if not handles:
        return ConfirmResult(
            Verdict.NOT_REPRODUCED,
            "the eager run reached the flagged backward but never called a torch.compile result from the flagged compiled call, so there was no compiled region to compare",
        ), False
    force = forces.force_for(index)
    # The eager differential's run goes with the matching run (same regions, so it is shared the same way)
    # and runs beside it.
    assume = [handle for handle, _ in force]
    assumed_run = session.submit(
        ("eager-assumed", entry, device, json.dumps(assume)),
        _spec(session, entry, device, focus, compiled=False, assume=assume),
    )
    matching = session.run(
        ("matching", entry, device, json.dumps(force)), _spec(session, entry, device, focus, compiled=True, force=force)
    )
    matching_result = _result_or_problem(matching, "compiled run under the matching config", session)
    if isinstance(matching_result, ConfirmResult):
        return matching_result, True
    assumed = assumed_run.result()
    assumed_result = _result_or_problem(assumed, "eager run under the assumed autocast", session)
    assumed_problem = assumed_result if isinstance(assumed_result, ConfirmResult) else None
    assert isinstance(evidence, Cal002Evidence)
    return compare.verdict_cal002(
        eager_result,
        eager.tensor,
        compiled_result,
        compiled.tensor,
        matching_result,
        matching.tensor,
        site,
        device,
        evidence.config_text(),
        evidence.matching_text(),
        evidence.backend,
        handles,
        eager_assumed=None if isinstance(assumed_result, ConfirmResult) else assumed_result,
        eager_assumed_load=assumed.tensor,
        eager_assumed_problem=assumed_problem.detail if assumed_problem is not None else "",
    ), assumed_problem is not None


def _result_or_problem(outcome: RunOutcome, name: str, session: _Session) -> dict | ConfirmResult:
    """The run's result, or the error verdict that says why the run gave none."""
    if outcome.timed_out:
        return ConfirmResult(
            Verdict.ERROR,
            f"the {name} timed out after {session.options.timeout:g}s (the eager run did not; every process it started was killed)",
        )
    if outcome.result is None:
        return ConfirmResult(
            Verdict.ERROR,
            f"the {name} died without a result (exit code {outcome.returncode}; {outcome.output_summary()})",
        )
    return outcome.result


def _probe_source(finding: Finding, device: str) -> str:
    """The synthetic probe for ``finding``'s evidence (checked by ``_confirm_one``)."""
    evidence = finding.evidence
    if isinstance(evidence, Cal001Evidence):
        return probes.cal001_probe(evidence)
    if isinstance(evidence, Cal004Evidence):
        return probes.cal004_probe(evidence)
    if isinstance(evidence, Cal005Evidence):
        return probes.cal005_probe(evidence)
    assert isinstance(evidence, Cal002Evidence)
    return probes.cal002_probe(evidence, device)


def _synthetic(session: _Session, finding: Finding, device: str) -> tuple[ConfirmResult, bool]:
    evidence = finding.evidence
    assert evidence is not None
    source = _probe_source(finding, device)
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    probe_path = (session.work / f"probe-{digest}" / "cal_probe.py").resolve()
    with session.lock:  # findings and devices that share a probe must not rewrite it while a run loads it
        if not probe_path.exists():
            probe_path.parent.mkdir(exist_ok=True)
            probe_path.write_text(source, encoding="utf-8")
    entry = Entry("path-function", f"synthetic:{digest}", path=str(probe_path), function="probe")
    line = probes.marked_line(source, "SITE")
    site = compare.Site(str(probe_path), (line, line), None)
    eager = session.run(
        ("eager", entry, device), _spec(session, entry, device, [str(probe_path)], compiled=False, trace=True)
    )
    if eager.timed_out:
        return ConfirmResult(
            Verdict.ERROR, f"the probe timed out after {session.options.timeout:g}s in the eager run"
        ), True
    if eager.result is None or eager.status != "ok":
        detail = (
            compare.exception_text(eager.result["exception"])
            if eager.result and eager.result.get("exception")
            else eager.output_summary()
        )
        return ConfirmResult(Verdict.ERROR, f"the probe failed in the eager run ({detail})"), False
    call = probes.marked_line(source, "CALL") if finding.code == "CAL002" else line
    matching = evidence.matching_config if isinstance(evidence, Cal002Evidence) else None
    fix = _Fix((str(probe_path), call, call), probes.config_json(matching, device), (str(probe_path), line))
    result, transient = _compare(
        session, finding, entry, device, site, eager, _ForcePlan.of({0: fix}, eager.result), 0, [str(probe_path)]
    )
    if isinstance(result, compare.Unusable):  # the probe's single call cannot be skipped over
        return ConfirmResult(Verdict.ERROR, f"the probe {result.reason}"), transient
    return replace(result, detail=f"{probes.describe(evidence, device)}: {result.detail}"), transient
