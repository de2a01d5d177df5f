"""Opt-in confirm mode: run the flagged code for real (it executes user code) and attach verdicts.

Importing this package does not import torch; torch is only imported in the subprocesses it starts.
"""

from .entries import Entry, EntrySpecError, parse_entry
from .environment import DevicePlan, TorchEnvironment, parse_devices, plan_devices
from .session import DEFAULT_TIMEOUT, ConfirmOptions, confirm_findings

__all__ = [
    "DEFAULT_TIMEOUT",
    "ConfirmOptions",
    "DevicePlan",
    "Entry",
    "EntrySpecError",
    "TorchEnvironment",
    "confirm_findings",
    "parse_devices",
    "parse_entry",
    "plan_devices",
]
