"""Where the engine is while it walks: the context code runs in (forward-AD region, autocast,
``backward_pass_autocast``, grad mode), the compiled calls pending in a region, and a function's frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from ..core.findings import Condition
from ..core.locations import Location
from ..summary import model as ir
from .arguments import Values
from .contexts import DEFAULT_CONFIG, NO_AUTOCAST, AutocastState, ConfigState
from .events import Hop
from .hashing import hashed_once
from .values import Compiled


@dataclass(frozen=True)
class Decorated:
    """What a function's decorators make of entering it: the contexts they enter around its body
    (``@torch.autocast(...)``, ``@dual_level()``), each with the definition's place, and whether it
    is a ``@contextmanager`` generator (its ``yield`` is where the caller's ``with`` body runs)."""

    contexts: list[tuple[Values, Location]]
    context_manager: bool = False


@hashed_once
@dataclass(frozen=True)
class Context:
    region: Location | None = None
    autocast: AutocastState = NO_AUTOCAST
    config: ConfigState = DEFAULT_CONFIG
    #: False inside ``torch.no_grad()``/``inference_mode()``: outputs carry no compiled backward.
    grad_enabled: bool = True
    #: Walked only to see what a class's methods store on ``self`` (``harvest_instance_attributes``),
    #: not because anything calls it: what it would compile stays uncompiled (code that never runs).
    harvest: bool = False


@dataclass(frozen=True)
class PendingCall:
    """A compiled call inside a region that is not yet attributed to the region's own frame."""

    region: Location
    chain: tuple[Hop, ...]
    compiled: Compiled
    dual_inputs: bool
    conditions: tuple[Condition, ...] = ()

    def through(self, hop: Hop) -> PendingCall:
        return replace(self, chain=(hop, *self.chain))


@dataclass
class Frame:
    path: Path
    env: dict[str, Values]
    ctx: Context
    record: bool
    stack: tuple[tuple[Path, str], ...] = ()  # (module, qualname) of each function being walked
    closure: dict[str, Values] = field(default_factory=dict)
    pending: list[PendingCall] = field(default_factory=list)
    returns: set = field(default_factory=set)
    #: A ``@contextmanager`` generator's context as it was entered: what a ``yield`` changed from it
    #: is what the caller's ``with`` body runs under (None for other functions).
    entry_ctx: Context | None = None
    #: Names bound to an element of a container expression (``for block in model.blocks``).
    element_of: dict[str, ir.Expr] = field(default_factory=dict)
    #: Names bound to an attribute or an item (``layers = model.layers``, ``blocks =
    #: model.transformer["h"]``): changing one of its elements in place changes the holder's.
    aliases: dict[str, ir.Attr | ir.Item] = field(default_factory=dict)
    #: Flags known true or false in the ``if <flag>:`` arm being walked (frame-local).
    assumptions: dict[str, bool] = field(default_factory=dict)
    #: The run-time switches of the arms being walked in this frame (``if args.compile:``:
    #: ``switches.py``). Frame-local, not part of the context a callee's walk is memoized under
    #: (carried into callees, they split every walk below a switch: +44 % walks on
    #: pytorch-image-models' train.py); what a callee returns into an arm is stamped instead.
    conditions: tuple[Condition, ...] = ()
    #: The argument expressions of the call being made (``enabled=<flag>`` of an autocast).
    call_args: tuple[ir.Arg, ...] = ()
    #: Lines of the simple statement being executed (None in a compound statement's header).
    statement: tuple[int, int] | None = None
    #: Lines of the function being walked (None for module-level code).
    function_lines: tuple[int, int] | None = None
    #: How many loop bodies around the statement being executed, in this frame.
    loops: int = 0
    #: The function's ``*args`` parameter: it holds every extra positional argument's values, so
    #: ``args[0]`` is one of them (torchrl's ``compile_with_warmup(*args, ...)``: ``model = args[0]``).
    star: str | None = None
    #: What each callee gave while one call is made (``call_values``), by arguments and context,
    #: then callee: wrappers and modules reach the same callees again inside it.
    callee_results: dict[tuple, dict[object, Values]] | None = None


def runs_once(frame: Frame) -> bool:
    """Whether the statement ``frame`` executes is module-level code outside any loop."""
    return not frame.stack and frame.function_lines is None and frame.loops == 0
