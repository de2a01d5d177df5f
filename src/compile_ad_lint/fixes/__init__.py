"""Fixes: rules attach plans (``core/plans.py``); this package turns them into LibCST edits and applies them.

- ``resolve(findings, sources)`` gives each fix its ``edits`` against the files as ``sources`` has
  them, and drops fixes whose plan does not fit the code (so what is offered can be carried out).
- ``Changes`` (``transform.py``) applies many plans to a file in one LibCST pass; ``apply.py`` is the
  ``check --fix`` / ``--diff`` loop (apply, re-analyze, report what remains).
- ``Sources`` (``source.py``) reads the files once; ``parsed.py`` holds their LibCST modules, loaded
  only when an edit is built rather than read from the cache.

One module per rule's fixes: ``forward_ad.py`` (CAL001), ``config_patch.py`` (CAL002),
``config_value.py`` (CAL003); ``noqa.py`` holds the ``# noqa`` edit shared by ``--add-noqa`` and
the language server.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..cache import SummaryCache, build_digest, codec
from ..core import plans
from ..core.collector import fewer_collections
from ..core.findings import Edit, Finding, Fix

if TYPE_CHECKING:
    from .source import Sources
    from .transform import Changes, Op, PlanError

#: Names this package re-exports from its LibCST modules, imported on first use: a check that
#: only reports (the findings import ``plans``) never loads LibCST, a third of a warm run's time.
_LAZY = {"Changes": "transform", "PlanError": "transform", "Op": "transform", "Sources": "source"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def ops_for(plan: plans.FixPlan, sources: Sources) -> list[Op]:
    """The operations that carry ``plan`` out on ``sources`` (PlanError when it does not fit)."""
    from . import config_patch, config_value, forward_ad
    from .transform import PlanError

    # Each builder takes its own plan class (the keys); a plan's class is one of ``plans.PLAN_KINDS``.
    builders: dict[type, Callable[[Any, Sources], list[Op]]] = {
        plans.WrapInConfigPatch: config_patch.wrap_ops,
        plans.SetConfigAtModuleLevel: config_patch.module_level_ops,
        plans.ReplaceConfigValue: config_value.value_ops,
        plans.CallUncompiled: forward_ad.uncompiled_ops,
        plans.CompileWithBackend: forward_ad.backend_ops,
        plans.ReverseModeJacobian: forward_ad.reverse_mode_ops,
    }
    build = builders.get(type(plan))
    if build is None:
        raise PlanError(f"unknown plan {type(plan).__name__}")
    return build(plan, sources)


@dataclass(frozen=True)
class ResolvedPlan:
    """A plan's edits (empty: it does not fit), with the files building them read and their digests:
    stored in the cache, valid while every one of those files has that content and is fresh."""

    edits: tuple[Edit, ...]
    read: tuple[tuple[str, str | None], ...]


def _plan_key(plan: plans.FixPlan) -> str:
    # Plans name files by display path, which is relative to the working directory.
    text = f"fix-plan\0{build_digest()}\0{os.getcwd()}\0".encode() + codec.dumps(plan)
    return hashlib.sha256(text).hexdigest()


def _edits_for(plan: plans.FixPlan, sources: Sources) -> tuple[Edit, ...]:
    """The plan's edits against ``sources``, from the cache when no file they were built from changed."""
    key = _plan_key(plan) if sources.cache is not None else ""
    if sources.cache is not None:
        stored = sources.cache.load(key, ResolvedPlan)
        if stored is not None and all(
            sources.digest(display) == digest and sources.fresh(display) for display, digest in stored.read
        ):
            return stored.edits
    from .transform import Changes, PlanError

    sources.start_reading()
    changes = Changes(sources)
    try:
        changes.add(ops_for(plan, sources))
        edits = changes.edits()
    except PlanError:
        edits = ()
    read = sources.read_since_start()
    if sources.cache is not None and all(sources.fresh(display) for display, _ in read):
        sources.cache.store(key, ResolvedPlan(edits, read))
    return edits


def stored_plan(plan: plans.FixPlan, sources: Sources) -> ResolvedPlan | None:
    """The cached edits of ``plan``, when every file they were built from holds on ``sources``."""
    if sources.cache is None:
        return None
    stored = sources.cache.load(_plan_key(plan), ResolvedPlan)
    if stored is None or not all(
        sources.digest(display) == digest and sources.fresh(display) for display, digest in stored.read
    ):
        return None
    return stored


def plan_reads(plan: plans.FixPlan, sources: Sources) -> tuple[str, ...] | None:
    """The files the cached edits of ``plan`` were built from, when they hold on ``sources``;
    None when the cache has no such edits."""
    stored = stored_plan(plan, sources)
    return None if stored is None else tuple(display for display, _ in stored.read)


def resolve_fix(fix: Fix, sources: Sources, memo: dict | None = None) -> Fix | None:
    """``fix`` with its edits, or None when its plan does not fit the code (or changes nothing).
    ``memo`` shares the edits of equal plans (two findings fixed at one compile site)."""
    if fix.plan is None:
        return fix if fix.edits else None
    memo = {} if memo is None else memo
    if fix.plan not in memo:
        memo[fix.plan] = _edits_for(fix.plan, sources)
    edits = memo[fix.plan]
    return replace(fix, edits=edits) if edits else None


#: Below this many files with fixes to build, worker processes cost more than they save.
_PARALLEL_FILES = 8


def resolve(findings: Iterable[Finding], sources: Sources, jobs: int = 1) -> tuple[Finding, ...]:
    """``findings`` with resolved fixes: the first that can be carried out becomes ``fix``.

    Fixes are not offered in notebooks (their edits would be in the module the cells make, not in
    the ``.ipynb`` file): such findings, and plans that edit a notebook, get none. With ``jobs`` > 1
    and fixes in many files, the files are shared out among worker processes: LibCST with positions
    costs several times the analysis of the same files.
    """
    findings = tuple(findings)
    files = sorted({f.location.path for f in findings if f.fixes and f.location.cell is None})
    if jobs <= 1 or len(files) < _PARALLEL_FILES:
        return _resolve_here(findings, sources)
    shares: list[list[int]] = [[] for _ in range(jobs)]
    worker_of = {path: number % jobs for number, path in enumerate(files)}
    for position, finding in enumerate(findings):
        if finding.fixes and finding.location.cell is None:
            shares[worker_of[finding.location.path]].append(position)
    shares = [share for share in shares if share]
    cache_root = str(sources.cache.directory.parent) if sources.cache is not None else None
    tasks = [(tuple(findings[i] for i in share), sources.overrides, sources.digests, cache_root) for share in shares]
    resolved = list(findings)
    from concurrent.futures import ProcessPoolExecutor  # only a fix over many files starts workers

    with ProcessPoolExecutor(max_workers=len(tasks)) as pool:
        for share, done in zip(shares, pool.map(_resolve_share, tasks)):
            for position, finding in zip(share, done):
                resolved[position] = finding
    return tuple(resolved)


def _resolve_share(task: tuple[tuple[Finding, ...], dict, dict | None, str | None]) -> tuple[Finding, ...]:
    """A worker's part of ``resolve``: its own ``Sources`` over the same buffers, digests and cache."""
    findings, overrides, digests, cache_root = task
    from .source import Sources

    cache = SummaryCache.open(Path(cache_root), create=False, warn=None) if cache_root else None
    return _resolve_here(findings, Sources(overrides, digests, cache=cache))


def _resolve_here(findings: Sequence[Finding], sources: Sources) -> tuple[Finding, ...]:
    with fewer_collections():  # LibCST builds a tree per file; full collections walked them all (docs/performance.md)
        return _resolved(findings, sources)


def _resolved(findings: Sequence[Finding], sources: Sources) -> tuple[Finding, ...]:
    resolved = []
    memo: dict = {}
    for finding in findings:
        if not finding.fixes:
            resolved.append(finding)
            continue
        usable = (
            []
            if finding.location.cell is not None
            else [f for f in (resolve_fix(fix, sources, memo) for fix in finding.fixes) if f is not None]
        )
        resolved.append(replace(finding, fix=usable[0] if usable else None, alternative_fixes=tuple(usable[1:])))
    return tuple(resolved)


__all__ = ["Changes", "PlanError", "Sources", "ops_for", "plan_reads", "resolve", "resolve_fix", "stored_plan"]
