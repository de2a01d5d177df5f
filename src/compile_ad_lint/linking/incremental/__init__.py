"""Incremental analysis: function walks memoized, summarized and replayed; the one entry to it.

The front ends (``pipeline``, ``api``, the language server) and the engine's modules import what
they use of it from here:

``cells``
    The heap's versioned cells (``Cell``: ``AttrCell``, ``ClassCell``, ``ModulesCell``,
    ``GlobalCell``, ``SideEffectsCell``, ``DualParamsCell``, and the ``HarvestedCell`` marker) and
    what a walk did before its first access to one (``Harvest``, ``Store``).
``records``
    The entries of a summary's log: ``Access`` and the effects (``WalkEffect``), one type each;
    the definitions a walk read (``Part``).
``walks``
    ``WalkSummary``, ``Closure``, ``Call``, the ``Recording`` of a walk in progress and the
    ``WalkMemory`` a long-lived front end (or a check's process) keeps across analyses.
``entries``
    ``MemoEntry``: one memoized walk of an analysis, with the ``Versions`` of the cells it read.
``memo``
    ``Memo``, the engine's layer (``state.py``'s stack) that walks, summarizes and replays; only
    the layer above it imports it (it imports the engine below it, so not from here).
"""

from .cells import (
    AttrCell,
    Cell,
    ClassCell,
    DualParamsCell,
    GlobalCell,
    Harvest,
    HarvestedCell,
    ModulesCell,
    Prerequisite,
    SideEffectsCell,
    Store,
    StoreRule,
)
from .entries import MemoEntry, SharedVersions, Versions, each_version
from .records import (
    Access,
    DualParams,
    EmitEvent,
    JoinAttribute,
    MergeAttribute,
    Part,
    PartKind,
    RecordEvent,
    ReplaceEverywhere,
    RequestEntry,
    ResultKeys,
    ResultSize,
    SideEffectsRun,
    StampAttribute,
    StoreGlobal,
    StoreInHolders,
    WalkEffect,
)
from .walks import Call, Closure, Recording, WalkMemory, WalkSummary

__all__ = [
    "Access",
    "AttrCell",
    "Call",
    "Cell",
    "ClassCell",
    "Closure",
    "DualParams",
    "DualParamsCell",
    "EmitEvent",
    "GlobalCell",
    "Harvest",
    "HarvestedCell",
    "JoinAttribute",
    "MemoEntry",
    "MergeAttribute",
    "ModulesCell",
    "Part",
    "PartKind",
    "Prerequisite",
    "RecordEvent",
    "Recording",
    "ReplaceEverywhere",
    "RequestEntry",
    "ResultKeys",
    "ResultSize",
    "SharedVersions",
    "SideEffectsCell",
    "SideEffectsRun",
    "Store",
    "StampAttribute",
    "StoreGlobal",
    "StoreInHolders",
    "StoreRule",
    "Versions",
    "WalkEffect",
    "WalkMemory",
    "WalkSummary",
    "each_version",
]
