"""Cross-module linking by abstract interpretation of module summaries.

Starting from each anchor module (the module body and every function in it), the interpreter
walks statements in order, tracking what each name may hold (``values``) and the context the
code runs in: the forward-AD region, the autocast state and the effective
``backward_pass_autocast``. Calls into project functions are followed, across modules, with the
caller's arguments and context, up to ``max_call_depth``; modules are summarized only when a
name resolves into them. What it learns is reported as events (``events.py``) for the rules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..core.settings import Config
from ..summary import model as ir
from .analyses.dual_params import DualParameters
from .analyses.islands import IslandScan, nodes_in
from .analyses.results import ResultAnalysis
from .analyses.second_order import SecondOrders
from .analyses.switches import Switches
from .arguments import Values
from .call_order import with_plain_first
from .frames import Context, Frame
from .incremental import WalkMemory
from .index import ModuleIndex
from .reach import Reach
from .statements import Statements
from .values import (
    ClassVal,
    Collection,
    FunctionVal,
    Instance,
)


class Interpreter(Statements):
    """The engine for one analysis: its stack of classes (``state.py``) with the helpers that hold it
    through ``EngineContext`` (reach, islands, results, switches, dual parameters), and its roots."""

    def __init__(
        self,
        index: ModuleIndex,
        config: Config,
        cancelled: Callable[[], bool] | None = None,
        walk_memory: WalkMemory | None = None,
    ) -> None:
        super().__init__(index, config, cancelled, walk_memory)
        # What the effects hold (``effects/registry.py``) and the lower classes of its stack call up
        # (``EngineCalls``).
        self.engine = self
        #: CAL005: what compiled callables return, output by output.
        self.results = ResultAnalysis(self)
        #: Issue 11: wrappers, in-place and element changes, registries, frameworks.
        self.reach = Reach(self)
        self.islands = IslandScan(self)
        self.second_orders = SecondOrders(self)
        self.switches = Switches(self)
        self.dual_params = DualParameters(self)

    def analyze_module(self, path: Path, mentions: frozenset[str] = frozenset()) -> None:
        """Interpret ``path``'s module-level code, then, as entry points, the functions of its
        anchored blocks (and of blocks that call one of ``mentions``).

        A function of this file whose anchor depends on its parameters makes the blocks of this
        file that call it entry points too, in this same analysis (``covered`` names them): the
        next round would otherwise analyze the whole file again for them (``main()`` calling
        ``train_one_epoch`` in a training script: two walks of the file per check and per edit).
        """
        view = self.index.view(path)
        if view.failure is not None:
            return
        self.reach.root = path
        frame = Frame(path, {}, Context(), record=True)
        for index in view.effectful_blocks():
            self.exec_block(view.block(index).body, frame)
        module_ctx = Context(config=frame.ctx.config)
        walked: set[int] = set()
        closures: set[FunctionVal] = set()
        names = mentions
        while True:
            for index in view.root_blocks(names):
                if index in walked:
                    continue
                walked.add(index)
                for function in entry_functions(view.block(index).functions):
                    owner = ClassVal(path, function.owner_class) if function.owner_class else None
                    if function.decorators and "<" not in function.qualname:
                        # What its decorators make of it (``@torch.compile``: a compiled function whose
                        # own body may differentiate twice), though nothing here reads its name.
                        if owner is None:
                            self.module_global(path, function.name)
                        else:
                            self.find_member(owner, function.name)
                    bound = Instance(owner) if owner is not None and not function.is_staticmethod else None
                    root = Frame(path, {}, module_ctx, record=True)
                    returned = self.call_function(
                        FunctionVal(path, function.qualname, bound_self=bound), (), root, hop=None
                    )
                    self.walk_returned_closures(returned, path, module_ctx, closures)
            here = frozenset(
                qualname.rsplit(".", 1)[-1] for where, qualname in self.caller_requests if where == str(path)
            )
            if here <= names:
                break
            names |= here
        self.covered = names - mentions
        # One program: its plain calls, its dual calls; each fact once (a function walked again
        # repeats its events), so that each dual call is joined once.
        self.events[:] = with_plain_first(dict.fromkeys(self.events))

    def release(self) -> None:
        """Drop what this analysis holds, once its results are taken. The engine holds itself and
        its helpers hold it: without this, its whole state waited for the collector, which scanned
        it all first (docs/performance.md, "the analysis's state and the collector")."""
        vars(self).clear()

    def walk_returned_closures(self, returned: Values, path: Path, ctx: Context, walked: set[FunctionVal]) -> None:
        """Closures an entry point returns (a factory's ``jvp_fn``, a plugin's hook) are entry points
        too: a test harness or a plugin host calls them, outside what the analysis sees. Each is
        walked once, with its captured variables, and so are the closures it returns in turn."""
        pending = list(returned)
        while pending:
            value = pending.pop()
            if isinstance(value, Collection):
                pending.extend(value.items)
                continue
            if not (isinstance(value, FunctionVal) and value.path == path and "<locals>" in value.qualname):
                continue
            if value in walked:
                continue
            walked.add(value)
            frame = Frame(path, {}, ctx, record=True)
            pending.extend(self.call_function(value, (), frame, hop=None))


def entry_functions(functions: Sequence[ir.FunctionSummary]) -> list[ir.FunctionSummary]:
    """The functions of an anchored block that are walked as entry points. A method that another
    method of its class calls on ``self`` is walked from there, where it runs, and not as an entry
    of its own: walked as if anyone called it, ``if cfg.compile: self.compile_model()`` in the
    constructor would make the model compiled on every run. Methods such calls reach only in a
    cycle stay entries."""
    by_class: dict[str, dict[str, ir.FunctionSummary]] = {}
    for function in functions:
        if function.owner_class and function.params and not (function.is_staticmethod or function.is_classmethod):
            by_class.setdefault(function.owner_class, {})[function.name] = function
    skipped: set[str] = set()
    for methods in by_class.values():
        calls = {name: _called_on_self(method, methods) for name, method in methods.items()}
        inner = set().union(*calls.values())
        reached = [name for name in methods if name not in inner]
        pending = list(reached)
        while pending:
            for called in calls[pending.pop()]:
                if called not in reached:
                    reached.append(called)
                    pending.append(called)
        skipped |= {methods[name].qualname for name in inner if name in reached}
    return [function for function in functions if function.qualname not in skipped]


def _called_on_self(method: ir.FunctionSummary, methods: Mapping[str, ir.FunctionSummary]) -> set[str]:
    """The other ``methods`` that ``method``'s own body calls on its first parameter."""
    receiver = method.params[0]
    return {
        node.func.attr
        for node in nodes_in(method.body)
        if isinstance(node, ir.Call)
        and isinstance(node.func, ir.Attr)
        and isinstance(node.func.base, ir.Ref)
        and node.func.base.name == receiver
        and node.func.attr in methods
        and node.func.attr != method.name
    }
