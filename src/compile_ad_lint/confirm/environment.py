"""Which torch is installed and which devices confirm mode runs on, decided without importing torch here.

The torch version is read from ``torch/version.py`` (found with ``importlib.util.find_spec``, which does
not import the package); CUDA availability needs torch itself, so it is asked in a subprocess whose
answer is cached next to the confirm results.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import socket
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..cache import SummaryCache
from .runner import run_child

KNOWN_DEVICES = ("cpu", "cuda")


@dataclass(frozen=True)
class TorchEnvironment:
    version: str | None  # None: torch is not installed
    cuda: bool = False
    gpus: tuple[str, ...] = ()
    problem: str | None = None  # why torch or CUDA could not be queried

    @property
    def gpu_name(self) -> str:
        return self.gpus[0] if self.gpus else "unknown GPU"


@dataclass(frozen=True)
class DevicePlan:
    device: str
    skip_reason: str | None = None


def parse_devices(text: str | None) -> list[str] | None:
    """``--devices cpu,cuda`` → ``["cpu", "cuda"]``; None means the default."""
    if text is None:
        return None
    devices = [part.strip().lower() for part in text.split(",") if part.strip()]
    unknown = [d for d in devices if d not in KNOWN_DEVICES]
    if unknown or not devices:
        raise ValueError(f"--devices: expected a comma-separated list of {', '.join(KNOWN_DEVICES)}, got {text!r}")
    return list(dict.fromkeys(devices))


def plan_devices(requested: list[str] | None, env: TorchEnvironment) -> list[DevicePlan]:
    """The devices to run on, each with a reason when it must be skipped.

    Default: cpu, plus cuda when torch reports a CUDA device. An explicit ``cuda`` without a GPU is kept
    and skipped with the reason, so the report says why it was not checked.
    """
    if env.version is None:
        reason = f"torch is not installed ({env.problem})" if env.problem else "torch is not installed"
        return [DevicePlan(d, reason) for d in (requested or ["cpu"])]
    devices = requested if requested is not None else (["cpu", "cuda"] if env.cuda else ["cpu"])
    plans = []
    for device in devices:
        if device == "cuda" and not env.cuda:
            detail = f"; {env.problem}" if env.problem else ""
            plans.append(DevicePlan(device, f"no CUDA device available to torch {env.version}{detail}"))
        else:
            plans.append(DevicePlan(device))
    return plans


def torch_version_without_import() -> str | None:
    """torch.__version__ from torch/version.py, or None when torch is not importable by this interpreter."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        version_file = Path(location) / "version.py"
        try:
            text = version_file.read_text(encoding="utf-8")
        except OSError:
            continue
        match = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", text, re.MULTILINE)
        if match:
            return match.group(1)
    return None


def detect(cache: SummaryCache | None, timeout: float = 120.0) -> TorchEnvironment:
    """The installed torch and its CUDA devices (subprocess, cached per interpreter, torch version and host)."""
    version = torch_version_without_import()
    if version is None:
        return TorchEnvironment(None, problem="`import torch` would fail for " + sys.executable)
    key = hashlib.sha256(
        json.dumps(
            ["torch-environment", sys.executable, version, socket.gethostname(), os.environ.get("CUDA_VISIBLE_DEVICES")]
        ).encode()
    ).hexdigest()
    cached = cache.load(key, TorchEnvironment) if cache is not None else None
    if cached is not None:
        return cached
    with tempfile.TemporaryDirectory(prefix="cal-confirm-env-") as temp:
        outcome = run_child({"mode": "env"}, Path(temp), timeout)
    result = outcome.result or {}
    if not result.get("torch"):
        problem = result.get("error") or (
            "timed out" if outcome.timed_out else "; ".join(outcome.stderr_tail[-2:]) or "no answer"
        )
        return TorchEnvironment(None, problem=problem)
    env = TorchEnvironment(
        result["torch"], bool(result.get("cuda")), tuple(result.get("gpus", ())), result.get("cuda_error")
    )
    if cache is not None:
        cache.store(key, env)
    return env


__all__ = ["DevicePlan", "TorchEnvironment", "detect", "parse_devices", "plan_devices", "torch_version_without_import"]
