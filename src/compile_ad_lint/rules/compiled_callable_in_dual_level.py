"""CAL001 compiled-callable-in-dual-level."""

from __future__ import annotations

from collections.abc import Container, Iterator
from dataclasses import dataclass

from ..core.findings import Applicability, Evidence, Finding, Fix, Severity, headline
from ..core.locations import Location, RelatedLocation, StatementSite
from ..core.plans import CallUncompiled, CompileSite, CompileWithBackend, ReverseModeJacobian
from ..core.torch_versions import Series, TorchTarget
from ..facts import CompiledCallInDualRegion, Facts, Hop
from ..knowledge.behaviour import CallOrder, CompiledKind, Outcome, forward_ad_row
from .base import Case, FixAvailability, Rule, contradicts, on_path, path_conditions
from .forward_ad import (
    SHOWN_PLAIN_CALLS,
    DualCall,
    after_plain_call,
    by_version,
    consequence,
    dual_calls,
    headline_consequence,
)


@dataclass(frozen=True)
class Cal001Evidence(Evidence):
    """What a CAL001 finding rests on: the forward-AD region, the calls from it to the compiled
    callable, how that was compiled, and what running it is expected to do.

    Confirm mode builds its probe from ``backend`` and ``expected``; the report's facts are rendered
    from the same values.
    """

    region: Location
    #: The calls from the region to the compiled callable: ``hops[0]`` is the flagged call.
    hops: tuple[Hop, ...]
    compile_site: Location
    backend: str
    spelling: str
    #: What is compiled: ``tangent-none`` (a function or a module without parameters), ``raises`` (a
    #: module with parameters), ``raises-or-tangent-none`` (a project module) or ``wrong-jacobian``.
    expected: str
    #: ``first call dual`` or ``plain first`` (it can run with plain inputs before the dual call).
    order: str = CallOrder.FIRST_CALL_DUAL.value
    #: Where it runs with plain inputs before the dual call (the first few).
    plain_calls: tuple[Location, ...] = ()
    #: What the dual call gives on each torch series of the target: ``("2.13", "tangent None")``, ...
    outcomes: tuple[tuple[str, str], ...] = ()

    @property
    def flagged_site(self) -> StatementSite | None:
        return self.hops[0].site if self.hops else None

    @classmethod
    def of(cls, call: DualCall, expected: str) -> Cal001Evidence:
        event, compiled = call.event, call.compiled
        outcomes = tuple(
            (str(entry.series), " or ".join(sorted(o.value for o in entry.outcomes)) or "not compiled")
            for entry in call.per_series
        )
        return cls(
            event.region,
            event.chain,
            compiled.site,
            compiled.backend,
            compiled.spelling,
            expected,
            call.order.value,
            call.plain_first[:SHOWN_PLAIN_CALLS],
            outcomes,
        )

    def facts(self) -> tuple[tuple[str, str], ...]:
        return tuple(
            sorted(
                {
                    "backend": self.backend,
                    "spelling": self.spelling,
                    "expected": self.expected,
                    "hops": str(len(self.hops)),
                    "order": self.order,
                    "outcomes": "; ".join(f"torch {series}: {outcome}" for series, outcome in self.outcomes),
                }.items()
            )
        )


class CompiledCallableInDualLevel(Rule):
    code = "CAL001"
    name = "compiled-callable-in-dual-level"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SOMETIMES
    fix_safety = frozenset({Applicability.UNSAFE})
    VERSIONED_TABLES = ("forward_ad", "in_place")
    summary = (
        "A torch.compile'd callable receives dual tensors inside forward_ad.dual_level(): the tangent is dropped "
        "or the call raises."
    )
    what_it_does = """
Flags a call inside a forward-mode AD region (`with torch.autograd.forward_ad.dual_level():` or a
function decorated with `@dual_level()`) that reaches, directly or through a chain of calls across
functions and modules, a callable compiled with a tangent-dropping backend (inductor, the default, or
a backend that cannot be determined statically; a backend function of the checked code that
returns the graph module it is given, or its `forward`, runs it as torch's eager backend does and is
not one), when dual tensors can flow into it and the target torch gives a wrong tangent or an
exception for it.

What happens depends on the torch version and on call order (the Versions table below):

- **torch 2.13 and earlier**: every such call drops the tangent silently (`None`), or raises
  `NotImplementedError` when the inputs or the compiled module's parameters require grad.
- **torch 2.14 and later**: the callable's *first* call with dual inputs graph-breaks and runs
  eagerly, so the tangent is right (that is CAL006, a warning, unless `fullgraph=True`, which
  raises `Unsupported`). But when the same callable can run with plain inputs first (a training
  step, a warm-up, an evaluation, also a plain call inside the region), the graph traced then is
  reused for the dual call: the tangent is silently `None` again, or a module with parameters
  raises `NotImplementedError`. A plain call counts unless it is module-level code, outside any
  loop, after the region.

`torch.autograd.functional.jacobian(f, x, strategy="forward-mode", vectorize=True)` runs `f` under
forward-mode AD itself: a compiled `f` (or one reaching a compiled callable) is reported at the
`jacobian` call on torch 2.13 (wrong Jacobian); reverse mode, `torch.func.jacfwd` and
`torch.func.jvp` are fine.

Compiled callables are recognized however they are spelled: `torch.compile(f)`, `@torch.compile`,
`@torch.compile(...)`, `from torch import compile as jit`, `torch._dynamo.optimize(...)`,
`functools.partial(torch.compile, ...)`, `model.compile()` in place, and compiled modules held in
variables, module globals, `self.<attr>` or returned by factory functions. The finding is reported at
the call inside the region; related locations name every hop, the compile site and the plain calls
that can come first.

`model.compile()` in place on a module that torch.nn itself defines (`nn.Linear(...).compile()`, an
`nn.Sequential` of them) compiles nothing on torch 2.13 (Dynamo skips torch.nn's frames) and compiles
it from torch 2.14 on; project modules are compiled on every version.
"""
    why_bad = """
`torch.compile` (inductor) does not implement forward-mode AD. With dual inputs that do not require
grad, `fwAD.unpack_dual(out).tangent` is silently `None`: no error, the JVP is simply lost. With
inputs or parameters that require grad (a compiled `nn.Module` with parameters, for example) the call
raises `NotImplementedError` instead. `fullgraph=False` does not help on torch 2.13; on 2.14 it only
helps for the callable's first call.

Safe alternatives, on every version: run the region eagerly (`torch.compiler.disable`), use
`torch.func.jvp`, which works over compiled functions, or compile with `backend="eager"`.
(`backend="aot_eager"` keeps the tangents of compiled functions, so it is not flagged, but it raises
for a compiled module with parameters: it is not the fix to suggest.)
"""
    example = """
import torch
import torch.autograd.forward_ad as fwAD

f = torch.compile(lambda x: torch.sin(x) * x)

with fwAD.dual_level():
    out = f(fwAD.make_dual(x, t))  # tangent of `out` is None
    jvp = fwAD.unpack_dual(out).tangent
"""
    use_instead = """
import torch

f = torch.compile(lambda x: torch.sin(x) * x)
out, jvp = torch.func.jvp(f, (x,), (t,))
"""
    VALID = (
        Case(
            """
import torch
import torch.autograd.forward_ad as fwAD

f = torch.compile(torch.sin, backend="aot_eager")
with fwAD.dual_level():
    y = f(fwAD.make_dual(x, t))
""",
            note="tangent-preserving backend",
        ),
        Case(
            """
import torch

f = torch.compile(torch.sin)
out, tangent = torch.func.jvp(f, (x,), (t,))
""",
            note="torch.func.jvp over a compiled function",
        ),
        Case(
            """
import re
import torch.autograd.forward_ad as fwAD

pattern = re.compile("a+")
with fwAD.dual_level():
    pattern.match(fwAD.make_dual(x, t))
""",
            note="re.compile is not torch.compile",
        ),
        Case(
            """
import torch
import torch.autograd.forward_ad as fwAD

f = torch.compile(torch.sin)
with fwAD.dual_level():
    dual = fwAD.make_dual(x, t)
y = f(x)
""",
            note="call after the region ends",
        ),
        Case(
            """
import torch
import torch.autograd.forward_ad as fwAD

f = torch.compile(torch.sin)
with fwAD.dual_level():
    y = f(torch.ones(3))
""",
            note="provably non-dual arguments",
        ),
        Case(
            """
import torch
import torch.autograd.forward_ad as fwAD

f = torch.compiler.disable(torch.sin)
with fwAD.dual_level():
    y = f(fwAD.make_dual(x, t))
""",
            note="torch.compiler.disable runs eagerly",
        ),
    )
    INVALID = (
        Case(
            """
import torch
import torch.autograd.forward_ad as fwAD

f = torch.compile(torch.sin)
with fwAD.dual_level():
    y = f(fwAD.make_dual(x, t))  # expect[<2.14]: CAL001  # expect[>=2.14]: CAL006
"""
        ),
        Case(
            """
from torch import compile as jit
from torch.autograd.forward_ad import dual_level as level, make_dual

@jit
def g(x):
    return x.sin()

def run(x, t):
    with level():
        return g(make_dual(x, t))  # expect[<2.14]: CAL001  # expect[>=2.14]: CAL006
"""
        ),
        Case(
            """
import torch
from torch.autograd import forward_ad


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(3, 3)

    def forward(self, x):
        return self.proj(x).tanh()


net = Head()
net.compile()

@forward_ad.dual_level()
def tangent_of(x, t):
    return forward_ad.unpack_dual(net(forward_ad.make_dual(x, t))).tangent  # expect[<2.14]: CAL001  # expect[>=2.14]: CAL006
"""
        ),
        Case(
            """
import torch.autograd.forward_ad as fwAD
from helpers import step

def check(x, t):
    with fwAD.dual_level():
        return step(fwAD.make_dual(x, t))  # expect[<2.14]: CAL001  # expect[>=2.14]: CAL006
""",
            files=(
                ("helpers.py", "import torch\n\n@torch.compile(mode='max-autotune')\ndef step(x):\n    return x * 2\n"),
            ),
            note="across modules, decorator with arguments",
        ),
        Case(
            """
import torch
import torch.autograd.forward_ad as fwAD

model = torch.compile(torch.nn.Linear(4, 4))


def train(batches, optimizer):
    for x in batches:
        model(x).square().mean().backward()
        optimizer.step()


def jvp_of(x, t):
    with fwAD.dual_level():
        return fwAD.unpack_dual(model(fwAD.make_dual(x, t))).tangent  # expect: CAL001
""",
            note="a training step runs the compiled module with plain inputs first: its graph is reused",
        ),
        Case(
            """
import torch
import torch.autograd.forward_ad as fwAD

f = torch.compile(torch.sin, fullgraph=True)
with fwAD.dual_level():
    y = f(fwAD.make_dual(x, t))  # expect: CAL001
""",
            note="fullgraph=True: tangent None on 2.13, Unsupported from 2.14 on",
        ),
        Case(
            """
import torch
import torch.autograd.forward_ad as fwAD

f = torch.compile(torch.sin)
with fwAD.dual_level():
    warm = f(torch.ones(3))
    y = f(fwAD.make_dual(x, t))  # expect: CAL001
""",
            note="a plain call inside the region traces the graph first",
        ),
    )

    def findings(self, facts: Facts, reported_in: Container[str] | None = None) -> Iterator[Finding]:
        target = self.target
        calls = [call for call in dual_calls(facts, target, reported_in) if call.broken_on]
        # One finding per call: each callable it may reach is compiled somewhere, and compiling
        # eagerly fixes it only where every one of them is (``CompileWithBackend``).
        sites: dict[Location, dict[CompileSite, None]] = {}
        for call in calls:
            compiled = CompileSite(call.compiled.site, call.compiled.spelling, call.compiled.edit)
            sites.setdefault(call.event.chain[0].location, {})[compiled] = None
        for call in calls:
            conditions = (*call.event.conditions, *call.compiled.conditions)
            if contradicts(conditions):
                continue  # compiled only on runs that do not make this call
            finding = self.finding(call, target, tuple(sites[call.event.chain[0].location]))
            yield on_path(finding, path_conditions(conditions))

    def finding(self, call: DualCall, target: TorchTarget, sites: tuple[CompileSite, ...] = ()) -> Finding:
        """``call``'s finding; ``sites``: where the callables it may reach were compiled."""
        event = call.event
        compiled = call.compiled
        backend = compiled.backend_text
        first = event.chain[0].callee
        if event.region == event.chain[0].location:
            return self.forward_mode_finding(call, target, backend, sites)
        worst = _worst(call, target)
        message = headline(
            f"`{first}(...)` runs a compiled callable on dual inputs: {worst}",
            f"A compiled callable gets dual inputs: {worst}",
        )
        if len(event.chain) == 1:
            reach = f"`{first}(...)` calls a callable compiled with {compiled.spelling} ({backend})"
        else:
            hops = len(event.chain) - 1
            reach = (
                f"`{first}(...)` reaches a callable compiled with {compiled.spelling} ({backend}) "
                f"through {hops} more call{'s' * (hops > 1)}"
            )
        details = (
            f"{reach} inside a forward-AD dual_level() region{_requires_grad_note(call)}.",
            *_on_each_version(call, target),
            *_order_note(call, target),
            "Run it eagerly (torch.compiler.disable), use torch.func.jvp, or compile with backend='eager': "
            "these keep the tangent on every torch version.",
        )
        related = [RelatedLocation(event.region, "forward-AD region entered here")]
        related += [RelatedLocation(hop.location, hop.description) for hop in event.chain[1:]]
        related.append(RelatedLocation(compiled.site, f"compiled here ({compiled.spelling}, {backend})"))
        related += _plain_related(call)
        evidence = Cal001Evidence.of(call, compiled.expected)
        return self.at_first_call(event, message, details, related, evidence, _fixes(call, sites))

    def forward_mode_finding(
        self, call: DualCall, target: TorchTarget, backend: str, sites: tuple[CompileSite, ...]
    ) -> Finding:
        """``jacobian(f, x, strategy="forward-mode", vectorize=True)``: ``f`` runs on dual tensors in a
        ``dual_level`` the function enters itself (``facts/forward_ad.py``, the jacobian cases)."""
        event = call.event
        compiled = call.compiled
        first = event.chain[0].callee
        hops = len(event.chain) - 1
        through = f" through {hops} call{'s' * (hops > 1)}" if hops else ""
        worst = _worst(call, target)
        message = headline(
            f"`{first}(..., strategy='forward-mode')` differentiates a compiled callable: {worst}",
            f"A forward-mode jacobian of a compiled callable: {worst}",
        )
        details = (
            f"It reaches a callable compiled with {compiled.spelling} ({backend}){through}.",
            *_on_each_version(call, target),
            *_order_note(call, target),
            "Use strategy='reverse-mode' or torch.func.jacfwd, or run the function eagerly (torch.compiler.disable).",
        )
        related = [RelatedLocation(hop.location, hop.description) for hop in event.chain[1:]]
        related.append(RelatedLocation(compiled.site, f"compiled here ({compiled.spelling}, {backend})"))
        reverse = Fix(
            'Use strategy="reverse-mode", not vectorized (unsafe: one backward per output element instead of one forward per input)',
            Applicability.UNSAFE,
            plan=ReverseModeJacobian(event.chain[0].location),
        )
        backend_fix = _backend_fix(sites)
        fixes = [reverse] if backend_fix is None else [reverse, backend_fix]
        evidence = Cal001Evidence.of(call, "wrong-jacobian")
        return self.at_first_call(event, message, details, related, evidence, fixes)

    def at_first_call(
        self,
        event: CompiledCallInDualRegion,
        message: str,
        details: tuple[str, ...],
        related: list[RelatedLocation],
        evidence: Cal001Evidence,
        fixes: list[Fix],
    ) -> Finding:
        """The finding, at the region's call that starts the chain; the first fix is the one offered."""
        return Finding(
            code=self.code,
            message=message,
            details=details,
            severity=self.severity,
            location=event.chain[0].location,
            related=tuple(related),
            evidence=evidence,
            fix=fixes[0] if fixes else None,
            alternative_fixes=tuple(fixes[1:]),
        )


def _fixes(call: DualCall, sites: tuple[CompileSite, ...]) -> list[Fix]:
    """Calling the uncompiled callable in the region (only the region runs eagerly), then compiling
    with ``backend="eager"`` (every call runs eagerly). Both unsafe: they change speed."""
    event, compiled = call.event, call.compiled
    fixes = []
    if len(event.chain) == 1 and compiled.known_target and not compiled.in_place and compiled.edit is not None:
        spelled = "`._orig_mod`" if compiled.module else "the original function (`.__wrapped__`)"
        fixes.append(
            Fix(
                f"Call the uncompiled callable in the forward-AD region, {spelled} (unsafe: this call runs eagerly)",
                Applicability.UNSAFE,
                plan=CallUncompiled(event.chain[0].location, compiled.site, compiled.module),
            )
        )
    backend_fix = _backend_fix(sites or (CompileSite(compiled.site, compiled.spelling, compiled.edit),))
    if backend_fix is not None:
        fixes.append(backend_fix)
    return fixes


def _backend_fix(sites: tuple[CompileSite, ...]) -> Fix | None:
    """Compiling eagerly where each callable the call may reach was compiled; none when one of
    them cannot be edited (the finding would stay)."""
    if not sites or any(compiled.edit is None for compiled in sites):
        return None
    where = f" at the {len(sites)} places they are compiled" if len(sites) > 1 else ""
    return Fix(
        f'Compile with backend="eager"{where}, which keeps tangents (unsafe: every call of it runs without inductor)',
        Applicability.UNSAFE,
        plan=CompileWithBackend(sites),
    )


def _worst(call: DualCall, target: TorchTarget) -> str:
    """The headline's clause: what goes wrong, in short, with the versions when not every series."""
    broken = [entry for entry in call.per_series if entry.broken]
    text = headline_consequence(o for entry in broken for o in entry.outcomes if not o.correct)
    if len(broken) == len(call.per_series):
        return text
    return f"{text} on {target.versions_text(entry.series for entry in broken)}"


def _requires_grad_note(call: DualCall) -> str:
    """`` (NotImplementedError instead if the inputs require grad)`` for a function where that row differs."""
    if call.kinds != {CompiledKind.FUNCTION}:
        return ""
    full = call.compiled.fullgraph
    options = (False, True) if full is None else (full,)
    raises = {
        forward_ad_row(CompiledKind.FUNCTION_INPUTS_REQUIRE_GRAD, call.order, f, series).outcome
        for series in call.broken_on
        for f in options
    }
    return (
        " (NotImplementedError instead if its inputs require grad)"
        if raises == {Outcome.RAISES_NOT_IMPLEMENTED}
        else ""
    )


def _on_each_version(call: DualCall, target: TorchTarget) -> list[str]:
    """What goes wrong, in full: one sentence, or one per group of series when they differ; nothing
    when the headline said it all."""
    groups = [(versions, text) for versions, text, broken in by_version(call, target) if broken]
    if len(groups) == 1 and len(call.broken_on) == len(call.per_series):
        text = groups[0][1]
        return [] if text == _worst(call, target) else [f"{text[0].upper()}{text[1:]}."]
    return [f"On {versions} {text}." for versions, text in groups]


def _saved_by_order(call: DualCall) -> list[Series]:
    """The target's series where this call is broken only because a plain call can come first."""
    kinds, full = call.kinds, call.compiled.fullgraph
    options = (False, True) if full is None else (full,)
    return [
        entry.series
        for entry in call.per_series
        if entry.broken
        and call.order is CallOrder.PLAIN_FIRST
        and all(
            forward_ad_row(kind, CallOrder.FIRST_CALL_DUAL, f, entry.series).outcome.correct
            for kind in kinds
            for f in options
        )
    ]


def _order_note(call: DualCall, target: TorchTarget) -> list[str]:
    """Why the call order matters, on the target's series where a first dual call would be fine."""
    saved = _saved_by_order(call)
    if call.order is CallOrder.PLAIN_FIRST and saved:
        where = ", ".join(
            f"line {loc.line}" if loc.path == call.event.chain[0].location.path else f"{loc.path}:{loc.line}"
            for loc in call.plain_first[:SHOWN_PLAIN_CALLS]
        )
        more = (
            f" and {len(call.plain_first) - SHOWN_PLAIN_CALLS} more"
            if len(call.plain_first) > SHOWN_PLAIN_CALLS
            else ""
        )
        return [
            f"It can run with plain inputs first ({where}{more}): on {target.versions_text(saved)} only a compiled "
            "callable's first call with dual inputs graph-breaks and keeps its tangent; a graph traced with plain "
            "inputs is reused for dual ones."
        ]
    notes = []
    fragile = call.fragile_on
    if call.order is CallOrder.FIRST_CALL_DUAL and fragile:
        notes.append(
            f"On {target.versions_text(fragile)} this first dual call graph-breaks and runs eagerly (correct, not "
            f"compiled), but after a plain call (a warm-up, a training step) {after_plain_call(call, fragile)}."
        )
    sturdy = [entry for entry in call.per_series if entry.outcomes and not entry.broken and entry.series not in fragile]
    if sturdy:
        outcomes = {o for entry in sturdy for o in entry.outcomes}
        notes.append(f"On {target.versions_text(e.series for e in sturdy)} {consequence(outcomes)}.")
    return notes


def _plain_related(call: DualCall) -> list[RelatedLocation]:
    if not _saved_by_order(call):
        return []  # the order changes nothing on the target: no need to point at the plain calls
    return [
        RelatedLocation(location, "runs with plain inputs before the dual call: its graph is reused")
        for location in call.plain_first[:SHOWN_PLAIN_CALLS]
    ]
