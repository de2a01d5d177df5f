"""CAL005 unused-compiled-output-zero-grad."""

from __future__ import annotations

from collections.abc import Container, Iterator, Sequence
from dataclasses import dataclass

from ..core.findings import Evidence, Finding, Severity, headline
from ..core.locations import Location, RelatedLocation, StatementSite, unique_related
from ..facts import (
    BackwardThroughCompiled,
    CompiledFacts,
    CompiledResult,
    Facts,
    GradReset,
    Leaf,
    LeafRead,
    OutputFacts,
    OutputsEscape,
)
from .base import Case, Rule, contradicts, on_path, path_conditions


@dataclass(frozen=True)
class Cal005Evidence(Evidence):
    """What a CAL005 finding rests on: the compiled call returning several outputs, which of them the
    backward leaves unused, and the leaves (as the compiled code names them) only those feed."""

    compiled_call: Location
    compile_site: Location
    backend: str
    outputs: int
    unused_outputs: tuple[int, ...]
    leaves: tuple[str, ...]
    #: The statement and function of the backward call.
    flagged: StatementSite | None = None

    def facts(self) -> tuple[tuple[str, str], ...]:
        return tuple(
            sorted(
                {
                    "backend": self.backend,
                    "call_site": f"{self.compiled_call.path}:{self.compiled_call.line}",
                    "leaves": ",".join(self.leaves),
                    "outputs": str(self.outputs),
                    "unused_outputs": ",".join(map(str, self.unused_outputs)),
                }.items()
            )
        )


#: The start of the cases' two-head module: each output depends on its own head.
_TWO_HEADS = """
import torch
from torch import nn

class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 2)
        self.aux_head = nn.Linear(4, 2)

    def forward(self, h):
        return self.head(h), self.aux_head(h)

"""


class UnusedCompiledOutputZeroGrad(Rule):
    code = "CAL005"
    name = "unused-compiled-output-zero-grad"
    severity = Severity.WARNING
    VERSIONED_TABLES = ("in_place",)
    summary = "A backward uses only some outputs of a compiled call: leaves only the others depend on get zero grads instead of None."
    what_it_does = """
Flags a backward (`loss.backward()`, `torch.autograd.backward`, `torch.autograd.grad`) that uses
only some of the outputs of a compiled call, when the outputs it does not use depend on leaves
(parameters, or modules and `nn.Parameter`s passed in) that the used ones do not: an auxiliary head,
a second branch. Reported at the backward; related locations name the compiled call, each unused
output and each such leaf.

Only what can be shown is reported:

- the compiled callable (a function, or a module's `forward`) visibly returns a tuple
  (`return self.head(h), self.aux_head(h)`) or a dict display with string keys, and the call's
  result is unpacked (`logits, aux = model(x)`) or indexed with a literal (`out[0]`, `out["logits"]`;
  iterating over it, `*rest` or an index not known statically count as using every output);
- no backward the analysis sees uses the other outputs, and they do not leave the code it sees (returned
  to an unknown caller, stored on an attribute, passed to an unknown function, appended to a list);
- the used outputs cannot reach the leaf: they do not call a method of `self` or a project function,
  the leaf is not shared with another attribute (`self.a = self.b`, tied weights,
  `nn.Sequential(self.block, ...)`) and is not read outside the module (`model.aux_head(...)`);
- no `.grad = None` assignment (the suggested fix) appears in the backward's file.

So `return logits, loss` (every parameter feeds the loss) is never reported.
"""
    why_bad = """
The compiled backward computes a gradient for every input of the graph that requires grad, with zeros
for outputs that got no gradient. A leaf only the unused outputs depend on therefore has `.grad`
filled with zeros, where eager leaves it `None` (PyTorch documents this under "torch.compile has
different autograd semantics"). Optimizers skip parameters whose `.grad` is `None` but not zeros:
AdamW's weight decay and Adam's running moments, SGD's momentum then update parameters eager would
have left untouched, and `p.grad is None` checks (freezing logic, gradient logging) change meaning.

Seen on torch 2.13 CPU (`facts/double_backward_and_unused_outputs.py`): two outputs, only the first in
the loss: the second one's leaf has `.grad` zeros compiled (inductor, `aot_eager`, also for a dict
result) and `None` eager or with `backend="eager"`; a module's auxiliary head gets zeros and one
`AdamW(weight_decay=0.1)` step moves it (eager: untouched). Returning only what the loss uses, or
setting those leaves' `.grad` to `None` after the backward, gives `None` again; with
`return logits, loss` every gradient equals eager.
"""
    example = """
import torch

class TwoHeads(torch.nn.Module):
    def forward(self, x):
        h = self.trunk(x)
        return self.head(h), self.aux_head(h)

model = torch.compile(TwoHeads())
logits, aux = model(x)
loss_fn(logits, y).backward()  # aux_head's .grad: zeros, not None
optimizer.step()               # AdamW decays aux_head anyway
"""
    use_instead = """
import torch

class TwoHeads(torch.nn.Module):
    def forward(self, x):
        return self.head(self.trunk(x))  # return only what the loss uses

model = torch.compile(TwoHeads())
loss_fn(model(x), y).backward()
optimizer.step()
# or keep both outputs and reset after the backward:
#     for p in model.aux_head.parameters(): p.grad = None
"""
    VALID = (
        Case(
            """
import torch
from torch import nn

class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(4, 4)
        self.head = nn.Linear(4, 2)

    def forward(self, x, y):
        logits = self.head(self.trunk(x))
        return logits, nn.functional.cross_entropy(logits, y)

model = torch.compile(TwoHeads())
logits, loss = model(x, y)
loss.backward()
""",
            note="return logits, loss: every parameter feeds the loss",
        ),
        Case(
            _TWO_HEADS
            + """model = torch.compile(TwoHeads())
main, aux = model(x)
(main.sum() + 0.1 * aux.sum()).backward()
""",
            note="both outputs reach the loss",
        ),
        Case(
            _TWO_HEADS
            + """model = torch.compile(TwoHeads(), backend="eager")
main, aux = model(x)
main.sum().backward()
""",
            note="backend='eager': eager autograd leaves the aux head's grad None",
        ),
        Case(
            _TWO_HEADS
            + """model = torch.compile(TwoHeads())

def step(x):
    main, aux = model(x)
    main.sum().backward()
    return aux
""",
            note="the unused output is returned: the caller may backward it",
        ),
        Case(
            """
import torch
from torch import nn

class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 4)
        self.aux_head = nn.Linear(4, 4)
        self.aux_head.weight = self.head.weight

    def forward(self, h):
        return self.head(h), self.aux_head(h)

model = torch.compile(Tied())
main, aux = model(x)
main.sum().backward()
""",
            note="tied weights: the used output reaches the shared parameter",
        ),
    )
    INVALID = (
        Case(
            """
import torch
from torch import nn

class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(4, 4)
        self.head = nn.Linear(4, 2)
        self.aux_head = nn.Linear(4, 2)

    def forward(self, x):
        h = self.trunk(x).relu()
        return self.head(h), self.aux_head(h)

model = torch.compile(TwoHeads())
optimizer = torch.optim.AdamW(model.parameters(), weight_decay=0.1)

def train_step(x, y):
    logits, aux = model(x)
    loss = nn.functional.cross_entropy(logits, y)
    loss.backward()  # expect: CAL005
    optimizer.step()
"""
        ),
        Case(
            """
import torch
from torch import nn

u = nn.Parameter(torch.randn(3, 3))
w = nn.Parameter(torch.randn(3, 3))

@torch.compile
def two(a, u, w):
    return a @ u, a @ w

p, _ = two(m, u, w)
torch.autograd.backward(p.sum())  # expect: CAL005
""",
            note="the facts script's two-output function; parameters passed in",
        ),
    )

    def findings(self, facts: Facts, reported_in: Container[str] | None = None) -> Iterator[Finding]:
        safe = facts.safe.eager_backward
        results: dict[Location, list[CompiledResult]] = {}
        used: dict[Location, set[int | None]] = {}
        read: set[str] = set()
        resets: set[str] = set()
        backwards: list[BackwardThroughCompiled] = []
        for event in facts.events:
            if isinstance(event, CompiledResult) and facts.compiled(event.compiled).backend not in safe:
                results.setdefault(event.call_site, []).append(event)
            elif isinstance(event, (BackwardThroughCompiled, OutputsEscape)):
                for element in event.elements:
                    used.setdefault(element.call_site, set()).add(element.index)
                if isinstance(event, BackwardThroughCompiled):
                    backwards.append(event)
            elif isinstance(event, LeafRead):
                read.add(event.key)
            elif isinstance(event, GradReset):
                resets.add(event.location.path)
        for backward in sorted(backwards, key=lambda b: b.location):
            if backward.location.path in resets:
                continue
            for site in sorted({e.call_site for e in backward.elements if e.index is not None}):
                indices = used.get(site, set())
                if None in indices:
                    continue
                # The backward's paths through this call: a path without a switch makes it hold there too.
                origins = [o for o in facts.outputs(backward.origins) if o.call_site == site]
                feasible = [o for o in origins if not contradicts((*backward.conditions, *o.path_conditions()))]
                if origins and not feasible:
                    continue  # made only on runs that do not take this backward's path
                origins = feasible
                for result in results.get(site, ()):
                    finding = self.finding(backward, result, facts.compiled(result.compiled), indices, read, origins)
                    if finding is not None:
                        yield finding
                        break

    def finding(
        self,
        backward: BackwardThroughCompiled,
        result: CompiledResult,
        compiled: CompiledFacts,
        indices: set[int | None],
        read: set[str],
        origins: Sequence[OutputFacts] = (),
    ) -> Finding | None:
        used = [e for e in result.elements if e.index in indices]
        unused = [e for e in result.elements if e.index not in indices]
        if not used or not unused or any(e.opaque for e in used):
            return None
        covered = {leaf.key for e in used for leaf in e.leaves}
        shown: dict[str, tuple[Leaf, list[int]]] = {}
        for element in unused:
            for leaf in sorted(element.leaves, key=lambda candidate: candidate.name):
                if leaf.key not in covered and leaf.key not in read:
                    shown.setdefault(leaf.key, (leaf, []))[1].append(element.index)
        if not shown:
            return None
        leaves = [leaf for leaf, _ in shown.values()]
        names = "; ".join(
            f"{_describe(leaf)} feeds only output{'s' * (len(outputs) > 1)} {', '.join(map(str, outputs))}"
            for leaf, outputs in shown.values()
        )
        site = result.call_site
        used_text = ", ".join(str(e.index) for e in used)
        outputs = f"output{'s' * (len(used) > 1)} {used_text} of the compiled call's {len(result.elements)} outputs"
        one = len(leaves) == 1
        grads = "zero gradients, not None"
        message = headline(
            f"{backward.spelling} uses only {outputs}: {_describe(leaves[0]) if one else f'{len(leaves)} leaves'} "
            f"{'gets' if one else 'get'} {grads}",
            f"{backward.spelling} uses only {outputs}: {'a leaf gets' if one else f'{len(leaves)} leaves get'} {grads}",
            f"Backward uses {len(used)} of the compiled call's {len(result.elements)} outputs: leaves feeding only "
            f"the others get {grads}",
        )
        if backward.returns_gradients:
            effect = (
                f"The gradients it returns for {'it' if one else 'them'} are zeros (compiled) where eager returns "
                "None (allow_unused=True) or raises (not used in the graph)."
            )
            fix = "Return only what the loss uses from the compiled region, or do not differentiate with respect to those leaves"
        else:
            effect = (
                f"After this backward {'its' if one else 'their'} .grad is zeros (compiled) instead of None (eager): "
                f"AdamW's weight decay and Adam/SGD momentum then update {'it' if one else 'them'} anyway, and "
                "`p.grad is None` checks see a gradient."
            )
            fix = "Return only what the loss uses from the compiled region, or set those leaves' .grad to None after the backward"
        details = (
            names[:1].upper() + names[1:] + ".",
            effect,
            f"{fix}.",
            *self.only_on_details([compiled]),
        )
        related = [RelatedLocation(site, f"compiled call returning {len(result.elements)} outputs")]
        related.append(
            RelatedLocation(
                compiled.site,
                f"compiled here ({compiled.spelling}, {compiled.backend_text})",
            )
        )
        for element in unused:
            related.append(RelatedLocation(element.location, f"output {element.index}, unused by this backward"))
        for leaf in leaves:
            if leaf.location is not None:
                related.append(RelatedLocation(leaf.location, f"{_describe(leaf)} gets zero gradients instead of None"))
        finding = Finding(
            code=self.code,
            message=message,
            details=details,
            severity=self.severity,
            location=backward.location,
            related=unique_related(related),
            evidence=Cal005Evidence(
                site,
                compiled.site,
                compiled.backend,
                len(result.elements),
                tuple(e.index for e in unused),
                tuple(leaf.name for leaf in leaves),
                backward.site,
            ),
        )
        alternatives = [o.path_conditions() for o in origins]
        shorter = ("unused compiled outputs leave zero gradients where eager leaves None",)
        return on_path(finding, path_conditions(backward.conditions, alternatives), shorter)


def _describe(leaf: Leaf) -> str:
    if leaf.kind == "argument":
        return f"the parameter passed as `{leaf.name}`"
    if leaf.kind == "global":
        return f"the module global `{leaf.name}`"
    return f"`{leaf.name}`"
