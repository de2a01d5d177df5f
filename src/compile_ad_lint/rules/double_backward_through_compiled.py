"""CAL004 double-backward-through-compiled."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Iterator
from dataclasses import dataclass

from ..core.findings import Condition, Evidence, Finding, Severity, headline
from ..core.locations import Location, RelatedLocation, StatementSite, unique_related
from ..core.torch_versions import Series
from ..facts import BackwardThroughCompiled, Facts, FunctionalThroughCompiled, OutputFacts, SecondOrderInCompiled
from ..knowledge import second_order as twice
from ..knowledge import torch_api as api
from .base import Case, Rule, contradicts, on_path, path_conditions


@dataclass(frozen=True)
class Cal004Evidence(Evidence):
    """What a CAL004 finding rests on: the first compiled call differentiated twice and how it was
    compiled; the backward's or the functional call's own part is in the subclasses."""

    compiled_call: Location
    compile_site: Location
    backend: str

    def facts(self) -> tuple[tuple[str, str], ...]:
        facts = {
            **self._own_facts(),
            "backend": self.backend,
            "call_site": f"{self.compiled_call.path}:{self.compiled_call.line}",
        }
        return tuple(sorted(facts.items()))

    def _own_facts(self) -> dict[str, str]:
        raise NotImplementedError


@dataclass(frozen=True)
class Cal004BackwardEvidence(Cal004Evidence):
    """A backward (``t.backward``, ``autograd.grad``) with ``create_graph``: True, or None when it is
    not a constant."""

    spelling: str
    create_graph: bool | None
    flagged: StatementSite | None = None

    def _own_facts(self) -> dict[str, str]:
        return {"spelling": self.spelling, "create_graph": repr(self.create_graph)}


@dataclass(frozen=True)
class Cal004InsideEvidence(Cal004Evidence):
    """A compiled function whose own body runs ``spelling`` with ``create_graph=True`` and then the
    second backward at line ``second_line`` (``compiled_call`` is the compile site)."""

    spelling: str
    second_line: int

    def _own_facts(self) -> dict[str, str]:
        return {"spelling": self.spelling, "second_backward_line": str(self.second_line), "inside": "compiled function"}


@dataclass(frozen=True)
class Cal004FunctionalEvidence(Cal004Evidence):
    """A ``torch.autograd.functional`` call (qualified name) that differentiates twice: True, or None
    when that depends on a ``create_graph`` that is not a constant."""

    function: str
    second_order: bool | None
    flagged: StatementSite | None = None

    def _own_facts(self) -> dict[str, str]:
        return {"function": self.function, "second_order": repr(self.second_order)}


_RAISES = "RuntimeError: torch.compile with aot_autograd does not currently support double backward"
_FIX = (
    "Use the torch.func transform instead (torch.func.grad, vjp, jacrev, jacfwd and hessian are correct over "
    "compiled callables), or keep this path eager: compile with backend='eager' or call the uncompiled function "
    "or module here (torch.compiler.disable on the function itself; wrapping the compiled callable in it does not help)"
)


class DoubleBackwardThroughCompiled(Rule):
    code = "CAL004"
    name = "double-backward-through-compiled"
    severity = Severity.ERROR
    VERSIONED_TABLES = ("in_place",)
    summary = "A second-order backward goes through a torch.compile'd region, whose backward cannot be differentiated."
    what_it_does = """
Flags a second-order backward through a region compiled with an AOTAutograd backend (inductor, the
default, `"aot_eager"`, `"cudagraphs"`, or a backend that cannot be determined statically):

- `torch.autograd.grad(..., create_graph=True)`, `t.backward(create_graph=True)` and
  `torch.autograd.backward(..., create_graph=True)` whose tensors derive from the output of a compiled
  call, reported at that backward call;
- `torch.autograd.functional.jvp`, `hvp`, `vhp`, `hessian`, and `vjp` / `jacobian` with
  `create_graph=True`, applied to a compiled callable or to a function that calls one, reported at
  that call;
- a compiled function whose own body runs `grad`/`backward` with `create_graph=True` and then a
  second backward (a gradient penalty computed and backpropagated inside `torch.compile(update)`),
  reported at the `create_graph=True` call; or whose body calls a function or module (a loss
  module's `forward`, two calls deep at most) that takes the `create_graph=True` gradients, then runs
  the second backward itself, reported at that call (pytorch/rl's gail). Switches on the way
  (`if self.use_grad_penalty:`) and those the compile ran under are named. The second backward
  raises on torch 2.13 and 2.14, and can raise on 2.15 (it did in five of the six recorded shapes).

A `create_graph` value that is not a constant (`create_graph=second_order`, true only when a
second-order optimizer is chosen) is a run-time switch: the finding is a warning, names it in its
message and its `conditions` ("when `second_order` is set"), and says the second backward fails when
it is true. Related locations name the compiled call and the compile site.

Not flagged: first-order `grad`/`backward`; `torch.func` transforms (`grad`, `jacrev`, `jacfwd`,
`hessian`, `jvp`, `vjp`) over a compiled callable; `backend="eager"` (and `extend-safe-backends`),
and a backend function of the checked code that returns the graph module it is given, or its
`forward`, as torch's own eager backend does (tests' counting backends); a function decorated with
`torch.compiler.disable` instead of being compiled.
"""
    why_bad = """
AOTAutograd's compiled backward is an `autograd.Function` whose own backward raises. With
`create_graph=True` the first backward still works, but the gradients it returns carry that node, so
the second backward (a gradient penalty, a MAML outer step, a second-order optimizer, a Hessian-vector
product) raises `RuntimeError: torch.compile with aot_autograd does not currently support double
backward`, typically hours into a run. Seen on torch 2.13.0, 2.14.1 and 2.15.0 CPU
(`facts/double_backward_and_unused_outputs.py`, recorded in `facts/recorded/`):

| what, over a compiled callable | outcome |
|---|---|
| `grad(create_graph=True)` / `backward(create_graph=True)`, then a second backward (inductor, `aot_eager`) | the second backward raises |
| the same with `backend="cudagraphs"` (on CPU: cudagraphs skipped, the AOTAutograd graph runs) | the second backward raises |
| `create_graph=True` after a first-order backward through the same compiled callable (a module saving activations with inductor; a plain function with cudagraphs) | `create_graph=True` itself raises (`non-empty donated buffers which requires create_graph=False`) |
| `torch.autograd.functional.jvp`, `hvp`, `vhp` | raise |
| `torch.autograd.functional.hessian` | torch 2.13: an all-zero Hessian, no error; torch 2.14 and later: raises `RuntimeError` |
| `vjp(create_graph=True)`, `jacobian(create_graph=True)` | correct values; `.backward()` through them raises; `autograd.grad` w.r.t. the inputs finds them unused (2.13) or raises the double-backward error (2.14 and later) |
| `torch.func.grad`, `jacrev`, `jacfwd`, `hessian`, `jvp`, `vjp` | correct |
| `backend="eager"`, `torch.compiler.disable(f)` instead of compiling | correct |
| `torch.compiler.disable(lambda x: compiled(x))` | the second backward still raises |
| a compiled function running `grad`/`backward(create_graph=True)` and then a second backward or `grad` in its own body | torch 2.13 and 2.14: the second backward raises (five shapes); 2.15: it raises in four of them, and a penalty over a plain `nn.Sequential` runs and matches eager |
| a compiled update calling a loss module whose `forward` takes `grad(create_graph=True)`, then running `backward` | the second backward raises on 2.13, 2.14 and 2.15 |

Once a `torch.func` transform has run a compiled function, later calls of it in the same process run
eagerly (`autograd.functional.hessian` is then correct): the failure can depend on call order.
"""
    example = """
import torch

critic = torch.compile(Critic())

def gradient_penalty(real, fake):
    mix = (0.5 * real + 0.5 * fake).requires_grad_()
    (grads,) = torch.autograd.grad(critic(mix).sum(), mix, create_graph=True)
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()  # its backward raises
"""
    use_instead = """
import torch

critic_module = Critic()
critic = torch.compile(critic_module)

def gradient_penalty(real, fake):
    mix = (0.5 * real + 0.5 * fake).requires_grad_()
    (grads,) = torch.autograd.grad(critic_module(mix).sum(), mix, create_graph=True)  # eager path
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()
"""
    VALID = (
        Case(
            """
import torch

f = torch.compile(torch.sin)
(g,) = torch.autograd.grad(f(x).sum(), x)
""",
            note="first-order grad",
        ),
        Case(
            """
import torch

f = torch.compile(torch.sin, backend="eager")
(g,) = torch.autograd.grad(f(x).sum(), x, create_graph=True)
""",
            note="backend='eager' has an eager backward",
        ),
        Case(
            """
import torch

graphs = []

def counting_backend(graph_module, example_inputs):
    graphs.append(graph_module)
    return graph_module.forward

f = torch.compile(torch.sin, backend=counting_backend)
(g,) = torch.autograd.grad(f(x).sum(), x, create_graph=True)
""",
            note="a backend that hands the graph back as torch's eager backend does (NVIDIA/physicsnemo's tests)",
        ),
        Case(
            """
import torch

def field(x):
    return (x * x * x).sin().sum()

f = torch.compile(field)
h = torch.func.hessian(f)(x)
g = torch.func.grad(f)(x)
out, vjp_fn = torch.func.vjp(f, x)
j = torch.func.jacrev(f)(x), torch.func.jacfwd(f)(x)
value, tangent = torch.func.jvp(f, (x,), (v,))
""",
            note="torch.func transforms over a compiled callable are correct",
        ),
        Case(
            """
import torch

@torch.compiler.disable
def field(x):
    return (x * x * x).sin().sum()

hv = torch.autograd.functional.hvp(field, x, v)
""",
            note="torch.compiler.disable on the function itself: never compiled",
        ),
        Case(
            """
import torch

f = torch.compile(torch.sin)
out, vjp = torch.autograd.functional.vjp(f, x, v)
jac = torch.autograd.functional.jacobian(f, x, create_graph=False)
""",
            note="first-order autograd.functional calls",
        ),
        Case(
            """
import torch

f = torch.compile(torch.sin)
y = f(x)
(g,) = torch.autograd.grad((w * x).sum(), w, create_graph=True)
""",
            note="the differentiated tensor does not come from the compiled call",
        ),
        Case(
            """
import torch

@torch.compile
def input_gradient(net, x):
    x = x.requires_grad_(True)
    (g,) = torch.autograd.grad(net(x).sum(), x, create_graph=True)
    return g.detach()
""",
            note="create_graph=True inside a compiled function with no second backward there",
        ),
        Case(
            """
import torch
from losses import PlainLoss

loss_module = PlainLoss(critic)

def update(expert, policy):
    loss = loss_module(expert, policy)
    loss.backward()

update = torch.compile(update)
""",
            files=(
                (
                    "losses.py",
                    """
import torch
from torch import nn

class PlainLoss(nn.Module):
    def __init__(self, critic):
        super().__init__()
        self.critic = critic

    def forward(self, expert, policy):
        mix = (0.5 * expert + 0.5 * policy).requires_grad_(True)
        (grads,) = torch.autograd.grad(self.critic(mix).sum(), mix)
        return self.critic(expert).mean() + grads.abs().mean().detach()
""",
                ),
            ),
            note="a loss module called by the compiled update takes first-order gradients only",
        ),
    )
    INVALID = (
        Case(
            """
import torch

f = torch.compile(torch.sin)
(g,) = torch.autograd.grad(f(x).sum(), x, create_graph=True)  # expect: CAL004
penalty = g.square().sum()
penalty.backward()
"""
        ),
        Case(
            """
import torch

model = torch.compile(net, backend="aot_eager")

def step(x):
    model(x).sum().backward(create_graph=True)  # expect: CAL004
"""
        ),
        Case(
            """
import torch
from torch.autograd.functional import hessian, hvp

loss_fn = torch.compile(lambda w: (w ** 4).sum())

def curvature(w, v):
    _, hv = hvp(loss_fn, w, v)  # expect: CAL004
    return hv, hessian(lambda p: loss_fn(p), w)  # expect: CAL004
"""
        ),
        Case(
            """
import torch

model = torch.compile(net)

def inner_step(x, y, params, second_order):
    loss = torch.nn.functional.mse_loss(model(x), y)
    return torch.autograd.grad(loss, params, create_graph=second_order)  # expect: CAL004
""",
            note="create_graph not constant: may be true",
        ),
        Case(
            """
import torch
from torch._dynamo.backends.common import aot_autograd

def inspecting_backend(graph_module, example_inputs):
    if example_inputs:
        return aot_autograd(fw_compiler=lambda gm, _: gm.forward)(graph_module, example_inputs)
    return graph_module.forward

f = torch.compile(torch.sin, backend=inspecting_backend)
(g,) = torch.autograd.grad(f(x).sum(), x, create_graph=True)  # expect: CAL004
""",
            note="a backend of the checked code that may hand the graph to AOTAutograd",
        ),
        Case(
            """
import torch

def update(critic, real, optimizer):
    real = real.requires_grad_(True)
    score = critic(real).sum()
    (grads,) = torch.autograd.grad(score, real, create_graph=True)  # expect: CAL004
    loss = score + ((grads.norm(2, dim=1) - 1) ** 2).mean()
    loss.backward()
    optimizer.step()

update = torch.compile(update)
""",
            note="a gradient penalty computed and backpropagated inside the compiled function",
        ),
        Case(
            """
import torch
from losses import PenaltyLoss

def main(cfg, critic, loader):
    discriminator_loss = PenaltyLoss(critic)

    def update(expert, policy):
        d_loss = discriminator_loss(expert, policy)  # expect: CAL004
        d_loss.backward()

    if cfg.compile:
        update = torch.compile(update)
    for expert, policy in loader:
        update(expert, policy)
""",
            files=(
                (
                    "losses.py",
                    """
import torch
from torch import autograd, nn

class PenaltyLoss(nn.Module):
    def __init__(self, critic):
        super().__init__()
        self.critic = critic

    def forward(self, expert, policy):
        mix = (0.5 * expert + 0.5 * policy).requires_grad_(True)
        grads = autograd.grad(self.critic(mix).sum(), mix, create_graph=True)[0]
        return -self.critic(expert).mean() + ((grads.norm(2, dim=1) - 1) ** 2).mean()
""",
                ),
            ),
            note="the penalty in a loss module's forward that the compiled update calls (pytorch/rl's gail)",
        ),
    )

    def findings(self, facts: Facts, reported_in: Container[str] | None = None) -> Iterator[Finding]:
        safe = facts.safe.eager_backward
        yield from self.inside_findings(facts)
        for event in facts.events:
            if isinstance(event, BackwardThroughCompiled) and event.create_graph is not False:
                own = (*event.conditions, *_switch(event.create_graph, event.create_graph_text))
                origins = _feasible(facts.outputs(event.origins), safe, own)
                if origins:
                    yield self.backward_finding(event, origins)
            elif isinstance(event, FunctionalThroughCompiled) and event.second_order is not False:
                own = (*event.conditions, *_switch(event.second_order, event.create_graph_text))
                origins = _feasible(facts.outputs(event.origins), safe, own)
                if origins:
                    yield self.functional_finding(event, origins)

    def backward_finding(self, event: BackwardThroughCompiled, origins: list[OutputFacts]) -> Finding:
        if event.create_graph:
            flag = short = "create_graph=True"
            fails = "fails"
        else:  # a switch (``create_graph=second_order``): the error path is taken only when it is true
            flag = f"create_graph={_written(event.create_graph_text)} (not a constant)"
            short = f"create_graph={_written(event.create_graph_text)}"
            fails = "fails when it is true"
        message = headline(
            f"{event.spelling} with {flag} differentiates through a compiled backward that cannot be differentiated",
            f"{event.spelling} with {short} differentiates through a compiled backward",
            f"Backward with {short} differentiates through a compiled backward",
        )
        details = (
            f"The gradients it returns carry a node whose backward raises {_RAISES}, so the second backward (a "
            f"gradient penalty, a MAML outer step, a Hessian-vector product) {fails} at run time.",
            "After a first-order backward through the same compiled callable, create_graph=True itself can raise "
            "(donated buffers).",
            f"{_FIX}.",
            *self.only_on_details(o.compiled for o in origins),
        )
        first = origins[0]
        evidence = Cal004BackwardEvidence(
            first.call_site, first.compiled.site, first.compiled.backend, event.spelling, event.create_graph, event.site
        )
        own = (*event.conditions, *_switch(event.create_graph, event.create_graph_text))
        conditions = path_conditions(own, _alternatives(origins))
        certain = event.create_graph is not None
        return self._finding(
            event.location, message, details, _related(event.location, origins), evidence, conditions, certain
        )

    def inside_findings(self, facts: Facts) -> Iterator[Finding]:
        """One finding per compiled function differentiating twice (per compile site and place):
        under the switches its calls found it compiled under, or, when no call was seen, those of
        its compile."""
        groups: dict[tuple[Location, Location, Location | None, Location], list[SecondOrderInCompiled]] = {}
        for event in facts.events:
            if isinstance(event, SecondOrderInCompiled):
                key = (event.location, event.second, event.reached, event.compiled.site)
                groups.setdefault(key, []).append(event)
        for events in groups.values():
            called = [event for event in events if event.called]
            chosen = called or events
            conditions = path_conditions(
                chosen[0].conditions, [facts.compiled(event.compiled).conditions for event in chosen]
            )
            finding = self.inside_finding(facts, chosen[0], conditions)
            if finding is not None:
                yield finding

    def inside_finding(
        self, facts: Facts, event: SecondOrderInCompiled, conditions: tuple[Condition, ...]
    ) -> Finding | None:
        """A compiled function differentiating twice, at its ``create_graph=True`` call, or at its body's
        call that reaches one in a function or module it calls."""
        compiled = facts.compiled(event.compiled)
        if compiled.backend in facts.safe.eager_backward:
            return None
        groups = self._by_series(twice.inside_compiled_on)
        raises = "raises" if all(text.startswith("raises") for _, text in groups) else "can raise"
        if event.reached is None:
            message = headline(
                f"{event.spelling} with create_graph=True and a second backward inside one compiled function: "
                f"the second backward {raises}",
                f"A compiled function differentiates twice in its own body: the second backward {raises}",
            )
        else:
            message = headline(
                f"This call runs {event.spelling} with create_graph=True, and a second backward follows, inside "
                f"one compiled function: the second backward {raises}",
                f"A compiled function differentiates twice through what it calls: the second backward {raises}",
            )
        if len(groups) == 1:
            outcome = f"It {groups[0][1]}."
        else:
            outcome = " ".join(f"On {self.target.versions_text(series)} it {text}." for series, text in groups)
        if event.reached is None:
            where = f"The second backward (line {event.second.line}) differentiates the compiled backward of this create_graph=True call."
        else:
            where = (
                f"This call reaches {event.spelling} with create_graph=True ({event.reached.path}:{event.reached.line}), "
                f"which Dynamo traces into the same compiled function; the second backward ({event.second.path}:"
                f"{event.second.line}) differentiates its compiled backward."
            )
        details = (
            f"{where} {outcome}",
            f"{_FIX}.",
            *self.only_on_details([compiled]),
        )
        evidence = Cal004InsideEvidence(
            event.compiled.site, event.compiled.site, compiled.backend, event.spelling, event.second.line
        )
        related = [
            RelatedLocation(event.second, "the second backward"),
            RelatedLocation(event.compiled.site, f"compiled here ({compiled.spelling}, {compiled.backend_text})"),
        ]
        if event.reached is not None:
            related.insert(0, RelatedLocation(event.reached, f"{event.spelling} with create_graph=True"))
        shorter = f"the second backward differentiates a compiled backward, which {raises}"
        return self._finding(event.location, message, details, related, evidence, conditions, shorter=shorter)

    def functional_finding(self, event: FunctionalThroughCompiled, origins: list[OutputFacts]) -> Finding:
        spec = api.AUTOGRAD_FUNCTIONAL[event.function]
        short = event.function.rsplit(".", 1)[-1]
        condition = short_condition = ""
        if not spec.always_second_order:
            written = _written(event.create_graph_text)
            condition = (
                " with create_graph=True" if event.second_order else f" with create_graph={written} (not a constant)"
            )
            short_condition = " with create_graph=True" if event.second_order else f" with create_graph={written}"
        message = headline(
            f"torch.autograd.functional.{short}{condition} differentiates twice through a compiled callable",
            f"{short}(){short_condition} differentiates twice through a compiled callable",
        )
        outcome = self._outcome(spec) if event.second_order is not None else f"{self._outcome(spec)} when it is true"
        details = (
            f"The compiled backward cannot be differentiated: it {outcome}.",
            f"{_FIX}.",
            *self.only_on_details(o.compiled for o in origins),
        )
        origin = origins[0]
        evidence = Cal004FunctionalEvidence(
            origin.call_site,
            origin.compiled.site,
            origin.compiled.backend,
            event.function,
            event.second_order,
            event.site,
        )
        own = (*event.conditions, *_switch(event.second_order, event.create_graph_text))
        conditions = path_conditions(own, _alternatives(origins))
        certain = event.second_order is not None
        return self._finding(
            event.location, message, details, _related(event.location, origins), evidence, conditions, certain
        )

    def _outcome(self, spec: api.FunctionalSpec) -> str:
        """What the function does over a compiled callable on the target, by version when that differs."""
        groups = self._by_series(spec.outcome_on)
        if len(groups) == 1:
            return groups[0][1]
        return "; ".join(f"on {self.target.versions_text(series)} {text}" for series, text in groups)

    def _by_series(self, outcome_on: Callable[[Series], str]) -> list[tuple[list[Series], str]]:
        """The target's series in runs that ``outcome_on`` gives the same text, in order."""
        groups: list[tuple[list[Series], str]] = []
        for series in self.target.series:
            text = outcome_on(series)
            if groups and groups[-1][1] == text:
                groups[-1][0].append(series)
            else:
                groups.append(([series], text))
        return groups

    def _finding(
        self,
        location: Location,
        message: str,
        details: tuple[str, ...],
        related: list[RelatedLocation],
        evidence: Cal004Evidence,
        conditions: tuple[Condition, ...] = (),
        certain: bool = True,
        shorter: str = "the second backward differentiates a compiled backward, which raises",
    ) -> Finding:
        # An error only when create_graph is certain: a switch (``create_graph=second_order``) may never be on.
        finding = Finding(
            code=self.code,
            message=message,
            details=details,
            severity=self.severity if certain else Severity.WARNING,
            location=location,
            related=unique_related(related),
            evidence=evidence,
        )
        return on_path(finding, conditions, (shorter,))


def _related(location: Location, origins: list[OutputFacts]) -> list[RelatedLocation]:
    """The compiled calls whose backward is differentiated again, and where each was compiled."""
    related: list[RelatedLocation] = []
    for origin in origins:
        if origin.call_site != location:
            related.append(RelatedLocation(origin.call_site, "compiled call whose backward is differentiated again"))
        related.append(
            RelatedLocation(origin.compiled.site, f"compiled here ({origin.compiled.spelling}, {_backend(origin)})")
        )
    return related


def _written(text: str) -> str:
    return f"`{text}`" if text else "a value not known statically"


def _switch(value: bool | None, text: str) -> tuple[Condition, ...]:
    """The condition a ``create_graph`` that is not a constant puts on the finding."""
    return (Condition(text or "create_graph", True),) if value is None else ()


def _feasible(origins: Iterable[OutputFacts], safe: Container[str], own: tuple[Condition, ...]) -> list[OutputFacts]:
    """The compiled outputs whose backward is not eager and that a run can make on the event's path."""
    return [o for o in origins if o.compiled.backend not in safe and not contradicts((*own, *o.path_conditions()))]


def _alternatives(origins: list[OutputFacts]) -> list[frozenset[Condition]]:
    return [origin.path_conditions() for origin in origins]


def _backend(origin: OutputFacts) -> str:
    return origin.compiled.backend_text
