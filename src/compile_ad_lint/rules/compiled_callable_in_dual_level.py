"""CAL001 compiled-callable-in-dual-level."""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator
from dataclasses import dataclass

from ..findings import Applicability, Evidence, Finding, Fix, Location, RelatedLocation, Severity, StatementSite
from ..fixes.plans import CallUncompiled, CompileWithBackend, ReverseModeJacobian
from ..knowledge import torch_api as api
from ..linking.events import CompiledCallInDualRegion, Hop
from ..linking.values import UNKNOWN_BACKEND, Compiled, ExternalInstance, Instance
from .base import Case, Rule


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
    #: ``tangent-none``, ``raises``, ``raises-or-tangent-none`` or ``wrong-jacobian``.
    expected: str

    @property
    def flagged_site(self) -> StatementSite | None:
        return self.hops[0].site if self.hops else None

    @classmethod
    def of(cls, event: CompiledCallInDualRegion, expected: str) -> Cal001Evidence:
        compiled = event.compiled
        return cls(event.region, event.chain, compiled.site, compiled.backend, compiled.spelling, expected)

    def facts(self) -> tuple[tuple[str, str], ...]:
        return tuple(
            sorted(
                {
                    "backend": self.backend,
                    "spelling": self.spelling,
                    "expected": self.expected,
                    "hops": str(len(self.hops)),
                }.items()
            )
        )


class CompiledCallableInDualLevel(Rule):
    code = "CAL001"
    name = "compiled-callable-in-dual-level"
    severity = Severity.ERROR
    summary = "A torch.compile'd callable receives dual tensors inside forward_ad.dual_level(): tangents are dropped."
    what_it_does = """
Flags a call inside a forward-mode AD region (`with torch.autograd.forward_ad.dual_level():` or a
function decorated with `@dual_level()`) that reaches, directly or through a chain of calls across
functions and modules, a callable compiled with a tangent-dropping backend (inductor, the default, or
a backend that cannot be determined statically), when dual tensors can flow into it.

`torch.autograd.functional.jacobian(f, x, strategy="forward-mode", vectorize=True)` runs `f` under
forward-mode AD itself: a compiled `f` (or one reaching a compiled callable) is reported at the
`jacobian` call; reverse mode, `torch.func.jacfwd` and `torch.func.jvp` are fine.

Compiled callables are recognized however they are spelled: `torch.compile(f)`, `@torch.compile`,
`@torch.compile(...)`, `from torch import compile as jit`, `torch._dynamo.optimize(...)`,
`functools.partial(torch.compile, ...)`, `model.compile()` in place, and compiled modules held in
variables, module globals, `self.<attr>` or returned by factory functions. The finding is reported at
the call inside the region; related locations name every hop and the compile site.

`model.compile()` in place compiles only project code: dynamo skips torch.nn's own frames, so a
built-in module compiled in place (`nn.Linear(...).compile()`, an `nn.Sequential` of built-ins) keeps
running eagerly and is not flagged (torch 2.13).
"""
    why_bad = """
`torch.compile` (inductor) does not implement forward-mode AD. With dual inputs that do not require
grad, `fwAD.unpack_dual(out).tangent` is silently `None`: no error, the JVP is simply lost. With
inputs or parameters that require grad (a compiled `nn.Module` with parameters, for example) the call
raises `NotImplementedError` instead. `fullgraph=False` does not help.

Safe alternatives: run the region eagerly (`torch.compiler.disable`), use `torch.func.jvp`, which
works over compiled functions, or compile with `backend="eager"`. (`backend="aot_eager"` keeps the
tangents of compiled functions, so it is not flagged, but it raises for a compiled module with
parameters: it is not the fix to suggest.)
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
        Case(
            """
import torch
import torch.autograd.forward_ad as fwAD

net = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Tanh())
net.compile()
with fwAD.dual_level():
    y = net(fwAD.make_dual(x, t))
""",
            note="in place, a built-in module is not compiled: dynamo skips torch.nn frames",
        ),
    )
    INVALID = (
        Case(
            """
import torch
import torch.autograd.forward_ad as fwAD

f = torch.compile(torch.sin)
with fwAD.dual_level():
    y = f(fwAD.make_dual(x, t))  # expect: CAL001
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
        return g(make_dual(x, t))  # expect: CAL001
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
    return forward_ad.unpack_dual(net(forward_ad.make_dual(x, t))).tangent  # expect: CAL001
"""
        ),
        Case(
            """
import torch.autograd.forward_ad as fwAD
from helpers import step

def check(x, t):
    with fwAD.dual_level():
        return step(fwAD.make_dual(x, t))  # expect: CAL001
""",
            files=(
                ("helpers.py", "import torch\n\n@torch.compile(mode='max-autotune')\ndef step(x):\n    return x * 2\n"),
            ),
            note="across modules, decorator with arguments",
        ),
    )

    def findings(self, events: Iterable[object], reported_in: Container[str] | None = None) -> Iterator[Finding]:
        safe = api.TANGENT_SAFE_BACKENDS | self.config.extend_safe_backends
        for event in events:
            if not isinstance(event, CompiledCallInDualRegion) or not event.dual_inputs:
                continue
            if event.compiled.backend in safe:
                continue
            if reported_in is not None and event.chain[0].location.path not in reported_in:
                continue  # reported at the region's first call (``at_first_call``)
            yield self.finding(event)

    def finding(self, event: CompiledCallInDualRegion) -> Finding:
        compiled = event.compiled
        outcome, consequence = _outcome(compiled)
        backend = "an unknown backend" if compiled.backend == UNKNOWN_BACKEND else f"backend={compiled.backend!r}"
        first = event.chain[0].callee
        if event.region == event.chain[0].location:
            return self.forward_mode_finding(event, backend)
        if len(event.chain) == 1:
            reach = f"`{first}(...)` calls a callable compiled with {compiled.spelling} ({backend})"
        else:
            hops = len(event.chain) - 1
            reach = f"`{first}(...)` reaches a callable compiled with {compiled.spelling} ({backend}) through {hops} more call{'s' * (hops > 1)}"
        message = (
            f"{reach} inside a forward-AD dual_level() region with dual inputs: {consequence}. Run it eagerly "
            f"(torch.compiler.disable), use torch.func.jvp, or compile with backend='eager'."
        )
        related = [RelatedLocation(event.region, "forward-AD region entered here")]
        related += [RelatedLocation(hop.location, hop.description) for hop in event.chain[1:]]
        related.append(RelatedLocation(compiled.site, f"compiled here ({compiled.spelling}, {backend})"))
        return self.at_first_call(event, message, related, Cal001Evidence.of(event, outcome), _fixes(event))

    def forward_mode_finding(self, event: CompiledCallInDualRegion, backend: str) -> Finding:
        """``jacobian(f, x, strategy="forward-mode", vectorize=True)``: ``f`` runs on dual tensors in a
        ``dual_level`` the function enters itself (``facts/other_autograd_differences.py``)."""
        compiled = event.compiled
        first = event.chain[0].callee
        hops = len(event.chain) - 1
        through = f" through {hops} call{'s' * (hops > 1)}" if hops else ""
        message = (
            f"`{first}(..., strategy='forward-mode')` differentiates a callable compiled with {compiled.spelling} "
            f"({backend}){through} in forward mode: the Jacobian comes out wrong with no error (all zeros) or the "
            f"call fails with BackendCompilerFailed, depending on shapes. Use strategy='reverse-mode' or "
            f"torch.func.jacfwd, or run the function eagerly (torch.compiler.disable)."
        )
        related = [RelatedLocation(hop.location, hop.description) for hop in event.chain[1:]]
        related.append(RelatedLocation(compiled.site, f"compiled here ({compiled.spelling}, {backend})"))
        reverse = Fix(
            'Use strategy="reverse-mode", not vectorized (unsafe: one backward per output element instead of one forward per input)',
            Applicability.UNSAFE,
            plan=ReverseModeJacobian(event.chain[0].location),
        )
        backend_fix = _backend_fix(compiled)
        fixes = [reverse] if backend_fix is None else [reverse, backend_fix]
        return self.at_first_call(event, message, related, Cal001Evidence.of(event, "wrong-jacobian"), fixes)

    def at_first_call(
        self,
        event: CompiledCallInDualRegion,
        message: str,
        related: list[RelatedLocation],
        evidence: Cal001Evidence,
        fixes: list[Fix],
    ) -> Finding:
        """The finding, at the region's call that starts the chain; the first fix is the one offered."""
        return Finding(
            code=self.code,
            message=message,
            severity=self.severity,
            location=event.chain[0].location,
            related=tuple(related),
            evidence=evidence,
            fix=fixes[0] if fixes else None,
            alternative_fixes=tuple(fixes[1:]),
        )


#: Spellings whose compile call ``CompileWithBackend`` knows how to edit; ``torch.compile (replaces
#: .forward)`` and the like start with one of them.
_EDITABLE_SPELLINGS = (
    "torch.compile",
    "@torch.compile",
    "torch._dynamo.optimize",
    "functools.partial(torch.compile)",
    "nn.Module.compile()",
)


def _fixes(event: CompiledCallInDualRegion) -> list[Fix]:
    """Calling the uncompiled callable in the region (only the region runs eagerly), then compiling
    with ``backend="eager"`` (every call runs eagerly). Both unsafe: they change speed."""
    compiled = event.compiled
    fixes = []
    target = compiled.target
    is_module = isinstance(target, (Instance, ExternalInstance))
    in_place = compiled.spelling.startswith("nn.Module.compile()")
    if len(event.chain) == 1 and target is not None and not in_place and _editable(compiled.spelling):
        spelled = "`._orig_mod`" if is_module else "the original function (`.__wrapped__`)"
        fixes.append(
            Fix(
                f"Call the uncompiled callable in the forward-AD region, {spelled} (unsafe: this call runs eagerly)",
                Applicability.UNSAFE,
                plan=CallUncompiled(event.chain[0].location, compiled.site, is_module),
            )
        )
    backend_fix = _backend_fix(compiled)
    if backend_fix is not None:
        fixes.append(backend_fix)
    return fixes


def _backend_fix(compiled: Compiled) -> Fix | None:
    if not _editable(compiled.spelling):
        return None
    return Fix(
        'Compile with backend="eager", which keeps tangents (unsafe: every call of it runs without inductor)',
        Applicability.UNSAFE,
        plan=CompileWithBackend(compiled.site, compiled.spelling),
    )


def _editable(spelling: str) -> bool:
    return spelling in _EDITABLE_SPELLINGS or spelling.startswith("torch.compile (")


def _outcome(compiled: Compiled) -> tuple[str, str]:
    """What running it does: drop the tangent silently, or raise (modules with parameters)."""
    target = compiled.target
    silent = "the output's tangent is silently None (NotImplementedError instead if inputs require grad)"
    if isinstance(target, ExternalInstance):
        if target.cls in api.PARAMETERLESS_MODULES:
            return "tangent-none", silent
        return "raises", "the call raises NotImplementedError (the compiled module's parameters have no jvp)"
    if isinstance(target, Instance):
        return "raises-or-tangent-none", (
            "the call raises NotImplementedError if the module has parameters, otherwise the tangent is silently None"
        )
    return "tangent-none", silent
