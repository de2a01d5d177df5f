"""The last step of every verdict: what ran (the project's code or a synthetic probe), on which
device and torch, and whether that device can show the hazard at all (pure Python, no torch).

A comparison (``compare``) says whether the hazard showed. Only here does that become a verdict,
so the two sources can never be confused: a probe's result becomes ``torch-has-hazard`` or
``torch-lacks-hazard``, never ``confirmed`` or ``not-reproduced``; a comparison on the project's
code that could not show the hazard on this device becomes ``cannot-show``.
"""

from __future__ import annotations

from dataclasses import replace

from ..core.findings import ConfirmResult, Finding, Verdict, VerdictSource
from ..rules.backward_autocast_mismatch import Cal002Evidence
from . import probes


def cannot_show_reason(finding: Finding, device: str, gpu_present: bool = True) -> str | None:
    """Why ``device`` cannot show a CAL002 mismatch: the code's autocast is for other devices
    (``torch.autocast("cuda")`` on a CPU tensor changes nothing), or for CUDA on a machine without one."""
    if not isinstance(finding.evidence, Cal002Evidence):
        return None
    targets = probes.autocast_devices(finding.evidence)
    if not targets or device in targets:
        return None
    names = ", ".join(sorted(targets))
    where = "" if gpu_present or "cuda" not in targets else " (this machine has no CUDA device)"
    return (
        f"the code's autocast is for {names}{where}: it does not change {device} tensors, so {device} cannot show "
        f"this mismatch; run it on {names}"
    )


def project_result(
    result: ConfirmResult, device: str, torch_version: str | None, cannot_show: str | None = None
) -> ConfirmResult:
    """A comparison made on the project's own code."""
    verdict, detail = result.verdict, result.detail
    if verdict is Verdict.NOT_REPRODUCED and cannot_show:
        verdict, detail = Verdict.CANNOT_SHOW, f"{cannot_show}; {detail}"
    source = (
        VerdictSource.PROJECT
        if verdict in (Verdict.CONFIRMED, Verdict.NOT_REPRODUCED, Verdict.CANNOT_SHOW)
        else VerdictSource.NONE
    )
    return replace(result, verdict=verdict, detail=detail, source=source, device=device, torch_version=torch_version)


def synthetic_result(
    result: ConfirmResult, device: str, torch_version: str | None, cannot_show: str | None = None
) -> ConfirmResult:
    """What a synthetic probe showed about the installed torch (nothing about the project's code)."""
    verdict, detail = result.verdict, result.detail
    if verdict is Verdict.CONFIRMED:
        verdict = Verdict.TORCH_HAS_HAZARD
    elif verdict is Verdict.NOT_REPRODUCED:
        verdict = Verdict.CANNOT_SHOW if cannot_show else Verdict.TORCH_LACKS_HAZARD
        if cannot_show:
            detail = f"{cannot_show}; {detail}"
    source = VerdictSource.SYNTHETIC if verdict is not Verdict.ERROR else VerdictSource.NONE
    return replace(result, verdict=verdict, detail=detail, source=source, device=device, torch_version=torch_version)


def plain(verdict: Verdict, detail: str, device: str | None = None, torch_version: str | None = None) -> ConfirmResult:
    """A verdict with nothing measured: skipped, not reached, or an error before any comparison."""
    return ConfirmResult(verdict, detail, VerdictSource.NONE, device, torch_version)
