"""What a dual call of a compiled callable gives on each torch series of the target (CAL001, CAL006).

The outcome depends on the version and on the call order (``knowledge.behaviour.FORWARD_AD_ROWS``):
from torch 2.14 on, the callable's *first* call with dual inputs graph-breaks and runs eagerly (the
tangent is kept), while a call after it was traced with plain inputs reuses that graph (the tangent
is silently None, or a module with parameters raises). The engine says which plain calls can come
first (``CompiledCallInDualRegion.plain_first``, ``linking.call_order``).
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator, Sequence
from dataclasses import dataclass

from ..core.locations import Location
from ..core.torch_versions import Series, TorchTarget
from ..facts import CompiledCallInDualRegion, CompiledFacts, Facts
from ..knowledge.behaviour import CallOrder, CompiledKind, Outcome, forward_ad_row

#: How many plain calls a finding names (the first ones in the file order).
SHOWN_PLAIN_CALLS = 3


@dataclass(frozen=True)
class SeriesOutcome:
    series: Series
    #: What the dual call may give on this series; empty when nothing is compiled there.
    outcomes: frozenset[Outcome]

    @property
    def broken(self) -> bool:
        return any(not outcome.correct for outcome in self.outcomes)


@dataclass(frozen=True)
class DualCall:
    """One dual call of a compiled callable, assessed for every series of the target."""

    event: CompiledCallInDualRegion
    compiled: CompiledFacts
    kinds: frozenset[CompiledKind]
    order: CallOrder
    #: Plain calls of the same callable that can run before the dual call (empty for a first dual call).
    plain_first: tuple[Location, ...]
    per_series: tuple[SeriesOutcome, ...]

    @property
    def broken_on(self) -> tuple[Series, ...]:
        return tuple(s.series for s in self.per_series if s.broken)

    @property
    def eager_on(self) -> tuple[Series, ...]:
        """Series where it is compiled and every outcome is right: the first dual call graph-breaks."""
        return tuple(s.series for s in self.per_series if s.outcomes and not s.broken)

    @property
    def fragile_on(self) -> tuple[Series, ...]:
        """Series of ``eager_on`` where a plain call before this one would break it (CAL006)."""
        full = self.compiled.fullgraph
        options = (False, True) if full is None else (full,)
        return tuple(
            series
            for series in self.eager_on
            if any(
                not forward_ad_row(kind, CallOrder.PLAIN_FIRST, f, series).outcome.correct
                for kind in self.kinds
                for f in options
            )
        )


def kinds_of(event: CompiledCallInDualRegion, compiled: CompiledFacts) -> frozenset[CompiledKind]:
    """What the region's dual call differentiates: a forward-mode jacobian (the region is the
    jacobian call itself), else what is compiled."""
    if event.region == event.chain[0].location:
        return frozenset([CompiledKind.FORWARD_MODE_JACOBIAN])
    return compiled.kinds


def assess(event: CompiledCallInDualRegion, compiled: CompiledFacts, target: TorchTarget) -> DualCall:
    kinds = kinds_of(event, compiled)
    plain_first = event.plain_first
    order = CallOrder.PLAIN_FIRST if plain_first else CallOrder.FIRST_CALL_DUAL
    fullgraph = compiled.fullgraph
    options = (False, True) if fullgraph is None else (fullgraph,)
    compiled_on = compiled.compiled_on
    per_series = []
    for series in target.series:
        if compiled_on is not None and series not in compiled_on:
            per_series.append(SeriesOutcome(series, frozenset()))
            continue
        outcomes = {forward_ad_row(kind, order, full, series).outcome for kind in kinds for full in options}
        per_series.append(SeriesOutcome(series, frozenset(outcomes)))
    return DualCall(event, compiled, kinds, order, plain_first, tuple(per_series))


#: What each outcome means, as a clause of a message.
CONSEQUENCES = {
    Outcome.TANGENT_NONE: "the tangent is silently None",
    Outcome.RAISES_NOT_IMPLEMENTED: "it raises NotImplementedError (the compiled parameters have no jvp)",
    Outcome.RAISES_UNSUPPORTED: "it raises Unsupported (fullgraph=True forbids the graph break)",
    Outcome.JACOBIAN_WRONG: "the Jacobian is silently wrong (zeros) or it fails with BackendCompilerFailed",
    Outcome.TANGENT_CORRECT: "it graph-breaks and runs eagerly (the tangent is kept)",
    Outcome.JACOBIAN_CORRECT: "it graph-breaks and runs eagerly (the Jacobian is right)",
}
#: Outcomes in the order a message names them: the worst first.
SEVERITY_ORDER = (
    Outcome.TANGENT_NONE,
    Outcome.JACOBIAN_WRONG,
    Outcome.RAISES_NOT_IMPLEMENTED,
    Outcome.RAISES_UNSUPPORTED,
    Outcome.TANGENT_CORRECT,
    Outcome.JACOBIAN_CORRECT,
)


def consequence(outcomes: Iterable[Outcome]) -> str:
    """``its tangent is silently None``, or two outcomes joined when the kind is not known."""
    present = set(outcomes)
    chosen = [o for o in SEVERITY_ORDER if o in present]
    if len(chosen) == 2 and set(chosen) == {Outcome.TANGENT_NONE, Outcome.RAISES_NOT_IMPLEMENTED}:
        return "it raises NotImplementedError (a module with parameters) or the tangent is silently None"
    return "; or ".join(CONSEQUENCES[o] for o in chosen)


#: The headline's short form of each outcome.
SHORT = {
    Outcome.TANGENT_NONE: "the tangent is silently None",
    Outcome.RAISES_NOT_IMPLEMENTED: "it raises NotImplementedError",
    Outcome.RAISES_UNSUPPORTED: "it raises Unsupported",
    Outcome.JACOBIAN_WRONG: "the Jacobian is wrong",
    Outcome.TANGENT_CORRECT: "it runs eagerly",
    Outcome.JACOBIAN_CORRECT: "it runs eagerly",
}


def headline_consequence(outcomes: Iterable[Outcome]) -> str:
    present = set(outcomes)
    chosen = [o for o in SEVERITY_ORDER if o in present]
    if set(chosen) == {Outcome.TANGENT_NONE, Outcome.RAISES_NOT_IMPLEMENTED}:
        return "it raises or drops the tangent"
    if len(chosen) > 1:
        return "the tangent is lost or it raises"
    return SHORT[chosen[0]] if chosen else "it runs eagerly"


def by_version(call: DualCall, target: TorchTarget) -> list[tuple[str, str, bool]]:
    """(``torch 2.13``, what happens there, whether that is broken) for each group of the target's series
    with the same outcomes, oldest first; series where nothing is compiled say so."""
    groups: list[tuple[list[Series], frozenset[Outcome]]] = []
    for entry in call.per_series:
        if groups and groups[-1][1] == entry.outcomes:
            groups[-1][0].append(entry.series)
        else:
            groups.append(([entry.series], entry.outcomes))
    return [
        (
            target.versions_text(series),
            consequence(outcomes) if outcomes else "`.compile()` in place compiles nothing there (the tangent is kept)",
            any(not o.correct for o in outcomes),
        )
        for series, outcomes in groups
    ]


def dual_calls(facts: Facts, target: TorchTarget, reported_in: Container[str] | None) -> Iterator[DualCall]:
    """Every dual call of a callable compiled with a tangent-dropping backend, assessed on ``target``
    (CAL001 reports the ones broken on some series, CAL006 the ones that only run eagerly)."""
    for event in facts.of(CompiledCallInDualRegion):
        if not event.dual_inputs:
            continue
        compiled = facts.compiled(event.compiled)
        if compiled.backend in facts.safe.tangent:
            continue
        if reported_in is not None and event.chain[0].location.path not in reported_in:
            continue  # reported at the region's first call (``at_first_call``)
        yield assess(event, compiled, target)


def after_plain_call(call: DualCall, eager: Sequence[Series]) -> str:
    """What the dual call gives on ``eager`` (series where a first dual call graph-breaks) once the
    callable has run with plain inputs: ``its tangent is silently None``."""
    options = (False, True) if call.compiled.fullgraph is None else (call.compiled.fullgraph,)
    return consequence(
        {
            forward_ad_row(kind, CallOrder.PLAIN_FIRST, full, series).outcome
            for kind in call.kinds
            for full in options
            for series in eager
        }
    )
