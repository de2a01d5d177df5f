"""Fixes: rules attach plans (``plans.py``); this package turns them into LibCST edits and applies them.

- ``resolve(findings, sources)`` gives each fix its ``edits`` against the files as ``sources`` has
  them, and drops fixes whose plan does not fit the code (so what is offered can be carried out).
- ``Changes`` (``transform.py``) applies many plans to a file in one LibCST pass; ``apply.py`` is the
  ``check --fix`` / ``--diff`` loop (apply, re-analyze, report what remains).

One module per rule's fixes: ``forward_ad.py`` (CAL001), ``config_patch.py`` (CAL002),
``config_value.py`` (CAL003); ``noqa.py`` holds the ``# noqa`` edit shared by ``--add-noqa`` and
the language server.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from ..findings import Finding, Fix
from . import plans
from .source import Sources
from .transform import Changes, Op, PlanError


def ops_for(plan: plans.FixPlan, sources: Sources) -> list[Op]:
    """The operations that carry ``plan`` out on ``sources`` (PlanError when it does not fit)."""
    from . import config_patch, config_value, forward_ad

    if isinstance(plan, plans.WrapInConfigPatch):
        return config_patch.wrap_ops(plan, sources)
    if isinstance(plan, plans.SetConfigAtModuleLevel):
        return config_patch.module_level_ops(plan, sources)
    if isinstance(plan, plans.ReplaceConfigValue):
        return config_value.value_ops(plan, sources)
    if isinstance(plan, plans.CallUncompiled):
        return forward_ad.uncompiled_ops(plan, sources)
    if isinstance(plan, plans.CompileWithBackend):
        return forward_ad.backend_ops(plan, sources)
    if isinstance(plan, plans.ReverseModeJacobian):
        return forward_ad.reverse_mode_ops(plan, sources)
    raise PlanError(f"unknown plan {type(plan).__name__}")


def resolve_fix(fix: Fix, sources: Sources, memo: dict | None = None) -> Fix | None:
    """``fix`` with its edits, or None when its plan does not fit the code (or changes nothing).
    ``memo`` shares the edits of equal plans (two findings fixed at one compile site)."""
    if fix.plan is None:
        return fix if fix.edits else None
    memo = {} if memo is None else memo
    if fix.plan not in memo:
        changes = Changes(sources)
        try:
            changes.add(ops_for(fix.plan, sources))
            memo[fix.plan] = changes.edits()
        except PlanError:
            memo[fix.plan] = ()
    edits = memo[fix.plan]
    return replace(fix, edits=edits) if edits else None


def resolve(findings: Iterable[Finding], sources: Sources) -> tuple[Finding, ...]:
    """``findings`` with resolved fixes: the first that can be carried out becomes ``fix``.

    Fixes are not offered in notebooks (their edits would be in the module the cells make, not in
    the ``.ipynb`` file): such findings, and plans that edit a notebook, get none.
    """
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


__all__ = ["Changes", "PlanError", "Sources", "ops_for", "resolve", "resolve_fix"]
