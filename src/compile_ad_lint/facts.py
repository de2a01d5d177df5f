"""What the rules read from the engine: the events of one check by kind, typed facts about each
compiled callable, and the safe backends, each computed once.

Rules import this module, the core and the knowledge only (``tests/architecture``): never the
engine's abstract values, so a rule never asks what kind of value a compiled target is or parses
how a compile was spelled. The event and state types named here are the engine's records of what
it established (``linking/events.py``); ``spelling`` and ``describe()`` texts are for messages only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from .core.findings import Condition
from .core.locations import Location, StatementSite
from .core.plans import BackendEdit
from .core.settings import Config
from .core.torch_versions import Series
from .knowledge import torch_api as api
from .knowledge.behaviour import CompiledKind
from .linking.contexts import NO_AUTOCAST, AutocastState, ConfigState, config_value
from .linking.events import (
    BackwardThroughCompiled,
    CompiledCallInDualRegion,
    CompiledCallPlain,
    CompiledResult,
    ConfigWrite,
    Event,
    FunctionalThroughCompiled,
    GradReset,
    Hop,
    Island,
    Leaf,
    LeafRead,
    ModuleFailure,
    OutputsEscape,
    ResultElement,
    SecondOrderInCompiled,
    UnusedSuppression,
)
from .linking.values import Compiled, CompiledOutput, ExternalInstance, Instance, OutputElement, describe_backend
from .summary.model import DictLiteral, ListLiteral, LiteralValue, Symbol

__all__ = [
    "NO_AUTOCAST",
    "AutocastState",
    "BackwardThroughCompiled",
    "CompiledCallInDualRegion",
    "CompiledCallPlain",
    "CompiledFacts",
    "CompiledResult",
    "ConfigState",
    "ConfigWrite",
    "DictLiteral",
    "Event",
    "Facts",
    "FunctionalThroughCompiled",
    "GradReset",
    "Hop",
    "Island",
    "Leaf",
    "LeafRead",
    "ListLiteral",
    "LiteralValue",
    "ModuleFailure",
    "OutputElement",
    "OutputFacts",
    "OutputsEscape",
    "ResultElement",
    "SecondOrderInCompiled",
    "Symbol",
    "UnusedSuppression",
    "config_value",
]

_E = TypeVar("_E")
#: What the engine establishes for the rules: its events, and the suppressions that silence nothing
#: (built after the other rules ran, for CAL901).
Fact = Event | UnusedSuppression


@dataclass(frozen=True)
class CompiledFacts:
    """A compiled callable as the rules see it."""

    site: Location
    #: How findings name the compile (``torch.compile``, ``nn.Module.compile()``, ...): text only.
    spelling: str
    backend: str
    #: ``fullgraph=True`` (``nopython=True``): True, False, or None when not a constant.
    fullgraph: bool | None
    #: The target's torch series on which this compiles anything; None: on every one.
    compiled_on: tuple[Series, ...] | None
    #: What a dual call of it differentiates (a project module may have parameters or not).
    kinds: frozenset[CompiledKind]
    #: It compiles a module (``model._orig_mod`` is the original), not a function.
    module: bool
    #: The analysis knows what it compiles.
    known_target: bool
    #: ``module.compile()`` in place: the module itself is the compiled callable.
    in_place: bool
    #: Where a fix can give the compile another backend; None: no fix knows how.
    edit: BackendEdit | None
    #: The run-time switches the compile ran under (``if args.compile:``).
    conditions: tuple[Condition, ...] = ()

    @property
    def backend_text(self) -> str:
        return describe_backend(self.backend)

    @property
    def expected(self) -> str:
        """What a dual call gives, as confirm mode's probes name it: ``tangent-none`` (a function or
        a module without parameters), ``raises`` (a module with parameters) or
        ``raises-or-tangent-none`` (a project module)."""
        if self.kinds == {CompiledKind.MODULE_WITH_PARAMETERS}:
            return "raises"
        if CompiledKind.MODULE_WITH_PARAMETERS in self.kinds:
            return "raises-or-tangent-none"
        return "tangent-none"


def compiled_facts(compiled: Compiled) -> CompiledFacts:
    target = compiled.target
    if isinstance(target, ExternalInstance):
        parameterless = target.cls in api.PARAMETERLESS_MODULES
        kinds = frozenset([CompiledKind.PARAMETERLESS_MODULE if parameterless else CompiledKind.MODULE_WITH_PARAMETERS])
    elif isinstance(target, Instance):
        kinds = frozenset([CompiledKind.MODULE_WITH_PARAMETERS, CompiledKind.PARAMETERLESS_MODULE])
    else:
        kinds = frozenset([CompiledKind.FUNCTION])
    return CompiledFacts(
        site=compiled.site,
        spelling=compiled.spelling,
        backend=compiled.backend,
        fullgraph=compiled.fullgraph,
        compiled_on=compiled.compiled_on,
        kinds=kinds,
        module=isinstance(target, (Instance, ExternalInstance)),
        known_target=target is not None,
        in_place=compiled.how is api.CompileHow.IN_PLACE,
        edit=compiled.edit,
        conditions=compiled.conditions,
    )


@dataclass(frozen=True)
class OutputFacts:
    """The result of one call of a compiled callable, with the context the call ran in."""

    call_site: Location
    compiled: CompiledFacts
    forward_autocast: AutocastState
    config: ConfigState
    #: The statement and function the compiled call is in.
    site: StatementSite | None
    #: The run-time switches the compiled call ran under.
    conditions: tuple[Condition, ...] = ()

    def path_conditions(self) -> frozenset[Condition]:
        """The switches this output's path needs: its call's and its compile's."""
        return frozenset(self.conditions) | frozenset(self.compiled.conditions)


class Facts:
    """One check's events (in the engine's order) and what the rules ask of them."""

    def __init__(self, events: Iterable[Fact], config: Config) -> None:
        # Once each: every root that reaches a fact reports it (the generated framework's check
        # gathers 5,358 events, 779 of them distinct), and the rules' findings of equal events are equal.
        self.events: tuple[Fact, ...] = tuple(dict.fromkeys(events))
        self.safe = api.SafeBackends.extended_by(config.extend_safe_backends)
        self._by_kind: dict[type, list] = {}
        self._compiled: dict[Compiled, CompiledFacts] = {}
        self._outputs: dict[CompiledOutput, OutputFacts] = {}

    def of(self, kind: type[_E]) -> Sequence[_E]:
        """The events of ``kind``, in order."""
        found = self._by_kind.get(kind)
        if found is None:
            found = self._by_kind[kind] = [event for event in self.events if isinstance(event, kind)]
        return found

    def compiled(self, compiled: Compiled) -> CompiledFacts:
        found = self._compiled.get(compiled)
        if found is None:
            found = self._compiled[compiled] = compiled_facts(compiled)
        return found

    def output(self, output: CompiledOutput) -> OutputFacts:
        found = self._outputs.get(output)
        if found is None:
            found = self._outputs[output] = OutputFacts(
                output.call_site,
                self.compiled(output.compiled),
                output.forward_autocast,
                output.config,
                output.site,
                output.conditions,
            )
        return found

    def outputs(self, outputs: Iterable[CompiledOutput]) -> list[OutputFacts]:
        """The facts of ``outputs``, each distinct one once, in order: outputs that differ only in
        what the rules do not read are one fact (a backward of the generated framework's trainer
        reaches 742 outputs, 154 distinct facts, and every edit built each finding from all)."""
        return list(dict.fromkeys(self.output(output) for output in outputs))
