"""Facts the interpreter establishes for the rules; rules turn them into findings."""

from __future__ import annotations

from dataclasses import dataclass

from ..findings import Location
from ..summary.model import LiteralValue
from .values import AutocastState, Compiled, CompiledOutput


@dataclass(frozen=True)
class Hop:
    """One call on the way from an anchor to a compiled callable."""

    location: Location
    #: The callee as written at the call (``helper``, ``self.block``).
    callee: str
    description: str


@dataclass(frozen=True)
class CompiledCallInDualRegion:
    """A compiled callable is called, directly or through ``chain``, inside a forward-AD region."""

    region: Location
    chain: tuple[Hop, ...]  # chain[0] is the call inside the region, chain[-1] the compiled call
    compiled: Compiled
    dual_inputs: bool


@dataclass(frozen=True)
class BackwardThroughCompiled:
    """A backward call whose graph goes through compiled call outputs."""

    location: Location
    spelling: str
    backward_autocast: AutocastState
    origins: tuple[CompiledOutput, ...]


@dataclass(frozen=True)
class ConfigWrite:
    """``backward_pass_autocast`` set to ``value`` (a literal, or None when not literal)."""

    location: Location
    how: str
    value: LiteralValue
    is_literal: bool


@dataclass(frozen=True)
class ModuleFailure:
    """A file that could not be read or parsed."""

    location: Location
    reason: str


Event = CompiledCallInDualRegion | BackwardThroughCompiled | ConfigWrite | ModuleFailure
