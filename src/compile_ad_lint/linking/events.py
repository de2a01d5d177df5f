"""Facts the interpreter establishes for the rules; rules turn them into findings."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.findings import Condition
from ..core.locations import Location, StatementSite
from ..summary.model import LiteralValue
from .contexts import AutocastState
from .hashing import hashed_once
from .values import Compiled, CompiledOutput, OutputElement


@hashed_once
@dataclass(frozen=True)
class Hop:
    """One call on the way from an anchor to a compiled callable."""

    location: Location
    #: The callee as written at the call (``helper``, ``self.block``).
    callee: str
    description: str
    site: StatementSite | None = None


@hashed_once
@dataclass(frozen=True)
class CompiledCallInDualRegion:
    """A compiled callable is called, directly or through ``chain``, inside a forward-AD region."""

    region: Location
    chain: tuple[Hop, ...]  # chain[0] is the call inside the region, chain[-1] the compiled call
    compiled: Compiled
    dual_inputs: bool
    #: The region is module-level code outside any loop: it runs once, in line order.
    once: bool = False
    #: Calls of the same compiled callable with plain inputs that can run before this one, in the
    #: same root's program (``call_order.with_plain_first``, when the root is done).
    plain_first: tuple[Location, ...] = ()
    #: The run-time switches the compiled call ran under (its compile's are on ``compiled``).
    conditions: tuple[Condition, ...] = ()


@hashed_once
@dataclass(frozen=True)
class CompiledCallPlain:
    """A compiled callable called with inputs that carry no tangent, in or out of a forward-AD
    region: from torch 2.14 on, the graph traced then is reused by later dual calls (CAL001)."""

    compiled: Compiled
    location: Location
    #: Module-level code outside any loop: it runs once, in line order.
    once: bool


@hashed_once
@dataclass(frozen=True)
class Island:
    """Code inside a compiled region that autocast computes differently (an ``autocast(enabled=False)``
    block, a ``.float()`` cast, an op autocast runs in float32): where a CAL002 mismatch changes
    gradients numerically."""

    #: The compile site of the region it is in (``Compiled.site``).
    compiled_site: Location
    location: Location
    description: str


@hashed_once
@dataclass(frozen=True)
class BackwardThroughCompiled:
    """A backward call whose graph goes through compiled call outputs."""

    location: Location
    spelling: str
    backward_autocast: AutocastState
    origins: tuple[CompiledOutput, ...]
    #: ``create_graph=``: True, False, or None when it is not a constant (CAL004).
    create_graph: bool | None = False
    #: The compiled outputs, element by element, the backward's tensors derive from (CAL005).
    elements: frozenset[OutputElement] = frozenset()
    #: Autocast-sensitive code visible in the compiled regions (CAL002's numeric effect).
    islands: tuple[Island, ...] = ()
    site: StatementSite | None = None
    #: The run-time switches the backward ran under.
    conditions: tuple[Condition, ...] = ()
    #: ``create_graph=`` as written when it is not a constant (``second_order``): CAL004 holds when it is true.
    create_graph_text: str = ""
    #: ``torch.autograd.grad``: returns the gradients, ``.grad`` untouched (``BackwardFunction``).
    returns_gradients: bool = False


@hashed_once
@dataclass(frozen=True)
class FunctionalThroughCompiled:
    """A ``torch.autograd.functional`` call that may differentiate twice, over a function whose
    result goes through compiled calls (CAL004)."""

    location: Location
    #: Qualified name (``torch.autograd.functional.hvp``).
    function: str
    origins: tuple[CompiledOutput, ...]
    #: True when it always differentiates twice or ``create_graph=True``; None when not a constant.
    second_order: bool | None
    site: StatementSite | None = None
    #: The run-time switches the call ran under.
    conditions: tuple[Condition, ...] = ()
    #: ``create_graph=`` as written when it is not a constant.
    create_graph_text: str = ""


@dataclass(frozen=True)
class SecondOrderInCompiled:
    """A compiled function that differentiates twice: a ``grad``/``backward`` with
    ``create_graph=True`` in its body or in what the body calls, then a later backward (a gradient
    penalty computed and backpropagated inside ``torch.compile(update)``) (CAL004). Recorded where it
    is compiled: every call of it does this."""

    #: The ``create_graph=True`` call inside the compiled function, or its body's call reaching it.
    location: Location
    #: The later backward, in the compiled body or in the callee that made the first.
    second: Location
    spelling: str
    compiled: Compiled
    #: The ``create_graph=True`` call when it is in a function or module the compiled body calls;
    #: ``location`` is then that call in the compiled body (None: ``location`` is the call itself).
    reached: Location | None = None
    #: Recorded where the compiled function is called (its switches as the call sees them: a helper
    #: that compiles under ``if cfg.compile:``), not where it is compiled.
    called: bool = False
    #: The run-time switches inside the compiled function on the way (``if self.use_grad_penalty:``).
    conditions: tuple[Condition, ...] = ()


@hashed_once
@dataclass(frozen=True)
class Leaf:
    """Something holding parameters that an output of a compiled callable depends on (CAL005)."""

    #: As the compiled code names it: ``self.aux_head``, ``aux_head`` (a global), ``w`` (an argument).
    name: str
    #: Identifies it across events: ``path:Class.attr`` for attributes, the name otherwise.
    key: str
    location: Location | None
    #: ``attribute``, ``argument`` (a parameter of the compiled function) or ``global``.
    kind: str = "attribute"


@hashed_once
@dataclass(frozen=True)
class ResultElement:
    """One output of a compiled callable's returned tuple, with the leaves it may depend on."""

    index: int
    location: Location
    leaves: frozenset[Leaf]
    #: It depends on something whose leaves are unknown (a method of ``self``, a project function).
    opaque: bool
    #: Its key when the callable returns a dict display (``out["aux"]``).
    key: str | None = None


@hashed_once
@dataclass(frozen=True)
class CompiledResult:
    """A compiled call whose callable visibly returns a tuple of several outputs (CAL005)."""

    call_site: Location
    compiled: Compiled
    elements: tuple[ResultElement, ...]


@hashed_once
@dataclass(frozen=True)
class OutputsEscape:
    """Compiled outputs that reach code the analysis cannot see (a caller, an unknown function, an
    attribute): a backward may use them there (CAL005 then counts them as used)."""

    location: Location
    elements: frozenset[OutputElement]


@hashed_once
@dataclass(frozen=True)
class LeafRead:
    """``model.<attribute>`` read outside the module's own methods: the leaf may reach a backward
    by another path (CAL005 then names it no more)."""

    key: str


@hashed_once
@dataclass(frozen=True)
class GradReset:
    """``<tensor>.grad = None``: the fix CAL005 suggests."""

    location: Location


@hashed_once
@dataclass(frozen=True)
class ConfigWrite:
    """``backward_pass_autocast`` set to ``value`` (a literal, or None when not literal)."""

    location: Location
    how: str
    value: LiteralValue
    is_literal: bool


@hashed_once
@dataclass(frozen=True)
class ModuleFailure:
    """A file that could not be read or parsed."""

    location: Location
    reason: str


Event = (
    CompiledCallInDualRegion
    | CompiledCallPlain
    | BackwardThroughCompiled
    | ConfigWrite
    | ModuleFailure
    | FunctionalThroughCompiled
    | SecondOrderInCompiled
    | CompiledResult
    | OutputsEscape
    | LeafRead
    | GradReset
)


@dataclass(frozen=True)
class UnusedSuppression:
    """A suppression comment in a checked file that silences nothing the check found (CAL901).

    Built by the API after the other rules ran, from the file's text and what its comments
    suppressed (``linking.suppressions``); never part of a cached result.
    """

    #: The suppression's text in its line (1-based columns, the end exclusive).
    location: Location
    #: ``noqa`` or ``compile-ad-lint: ignore``.
    kind: str
    #: The codes it lists that silence nothing (empty: a blanket ``compile-ad-lint: ignore``), and
    #: those that name no rule at all.
    unused: tuple[str, ...]
    unknown: tuple[str, ...]
    #: ``(start column, end column, replacement)`` on the line that removes them: the whole
    #: suppression, or the unused codes from its list.
    removal: tuple[int, int, str]
