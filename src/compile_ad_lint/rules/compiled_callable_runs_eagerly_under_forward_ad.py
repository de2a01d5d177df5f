"""CAL006 compiled-callable-runs-eagerly-under-forward-ad."""

from __future__ import annotations

from collections.abc import Container, Iterator

from ..core.findings import Applicability, Finding, Fix, Severity, headline
from ..core.locations import RelatedLocation
from ..core.plans import CallUncompiled
from ..core.torch_versions import TorchTarget
from ..facts import Facts
from .base import Case, FixAvailability, Rule, contradicts, on_path, path_conditions
from .compiled_callable_in_dual_level import Cal001Evidence
from .forward_ad import DualCall, after_plain_call, dual_calls


class CompiledCallableRunsEagerlyUnderForwardAd(Rule):
    code = "CAL006"
    name = "compiled-callable-runs-eagerly-under-forward-ad"
    severity = Severity.WARNING
    fix_availability = FixAvailability.SOMETIMES
    fix_safety = frozenset({Applicability.UNSAFE})
    VERSIONED_TABLES = ("forward_ad", "in_place")
    summary = (
        "A compiled callable's first call gets dual inputs: it graph-breaks and runs eagerly, and a plain call "
        "before it would drop the tangent."
    )
    what_it_does = """
Flags a call inside a forward-mode AD region (`with torch.autograd.forward_ad.dual_level():`, a
function decorated with `@dual_level()`, or `jacobian(..., strategy="forward-mode")`) that reaches a
callable compiled with a tangent-dropping backend with dual inputs, when the target torch gives the
right tangent only because nothing ran the callable with plain inputs before (torch 2.14 and later).

When some version of the target drops the tangent or raises instead (torch 2.13, `fullgraph=True`, a
plain call that can come first), the call is a CAL001 error, not this warning.
"""
    why_bad = """
From torch 2.14 on, Dynamo graph-breaks when a compiled function's input is a dual tensor, so the
first call with dual inputs runs eagerly and keeps its tangent: compiling that callable buys nothing
there. The result depends on call order: once the same callable has run with plain inputs (a warm-up,
a training step, an evaluation before the JVP), the graph traced then is reused for dual inputs and
the tangent is silently `None` again (a module with parameters raises `NotImplementedError`). A
refactor that adds a warm-up call turns this warning into a wrong result with no error.

Make the region independent of call order: run it eagerly (`torch.compiler.disable`, or call the
original callable: `._orig_mod` of a compiled module, `__wrapped__` of a compiled function), or use
`torch.func.jvp`, which works over compiled callables on every version.
"""
    example = """
import torch
import torch.autograd.forward_ad as fwAD

f = torch.compile(lambda x: torch.sin(x) * x)

with fwAD.dual_level():
    out = f(fwAD.make_dual(x, t))  # right on torch 2.14 only because f never ran before
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

f = torch.compile(torch.sin)
out, tangent = torch.func.jvp(f, (x,), (t,))
""",
            note="torch.func.jvp over a compiled function",
        ),
        Case(
            """
import torch
import torch.autograd.forward_ad as fwAD

f = torch.compile(torch.sin, backend="eager")
with fwAD.dual_level():
    y = f(fwAD.make_dual(x, t))
""",
            note="a backend that keeps tangents",
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
""",
            note="the first call is dual",
        ),
        Case(
            """
import torch
import torch.autograd.forward_ad as fwAD

net = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Tanh())
net.compile()
with fwAD.dual_level():
    y = net(fwAD.make_dual(x, t))  # expect[>=2.14]: CAL006
out = net(x)
""",
            note="in place, a module torch.nn defines compiles from 2.14 on; a plain call after the region is not first",
        ),
    )

    def findings(self, facts: Facts, reported_in: Container[str] | None = None) -> Iterator[Finding]:
        target = self.target
        calls = list(dual_calls(facts, target, reported_in))
        # Another program (root) that runs the same code after a plain call makes it a CAL001 there.
        broken = {call.event.chain[0].location for call in calls if call.broken_on}
        for call in calls:
            if not call.broken_on and call.fragile_on and call.event.chain[0].location not in broken:
                conditions = (*call.event.conditions, *call.compiled.conditions)
                if not contradicts(conditions):  # else compiled only on runs that do not make this call
                    yield on_path(self.finding(call, target), path_conditions(conditions))

    def finding(self, call: DualCall, target: TorchTarget) -> Finding:
        event = call.event
        compiled = call.compiled
        backend = compiled.backend_text
        first = event.chain[0].callee
        versions = target.versions_text(call.fragile_on)
        jacobian = event.region == event.chain[0].location
        spelled = f"`{first}(..., strategy='forward-mode')`" if jacobian else f"`{first}(...)`"
        message = headline(
            f"{spelled} runs a compiled callable with dual inputs: on {versions} it graph-breaks and runs eagerly",
            f"A compiled callable's first call gets dual inputs: it runs eagerly on {versions}",
        )
        details = (
            f"The result is right only because nothing runs the callable compiled with {compiled.spelling} "
            f"({backend}) before: after a plain call (a warm-up, a training step) "
            f"{after_plain_call(call, call.fragile_on)}.",
            "Use torch.func.jvp, or run the region eagerly (torch.compiler.disable), to hold on every torch version.",
        )
        related = [] if jacobian else [RelatedLocation(event.region, "forward-AD region entered here")]
        related += [RelatedLocation(hop.location, hop.description) for hop in event.chain[1:]]
        related.append(RelatedLocation(compiled.site, f"compiled here ({compiled.spelling}, {backend})"))
        fix = None
        if (
            len(event.chain) == 1
            and compiled.known_target
            and not compiled.in_place
            and not jacobian
            and compiled.edit is not None
        ):
            spelled_original = "`._orig_mod`" if compiled.module else "the original function (`.__wrapped__`)"
            fix = Fix(
                f"Call the uncompiled callable in the forward-AD region, {spelled_original} (unsafe: a later change "
                "of call order can no longer drop its tangent, but the call is no longer compiled)",
                Applicability.UNSAFE,
                plan=CallUncompiled(event.chain[0].location, compiled.site, compiled.module),
            )
        expected = "wrong-jacobian" if jacobian else compiled.expected
        return Finding(
            code=self.code,
            message=message,
            details=details,
            severity=self.severity,
            location=event.chain[0].location,
            related=tuple(related),
            evidence=Cal001Evidence.of(call, expected),
            fix=fix,
        )
