"""A compiled function whose own body differentiates twice (CAL004): ``grad(..., create_graph=True)``
or ``backward(create_graph=True)``, then a later backward in the same body, as a gradient penalty
computed and backpropagated inside ``torch.compile(update)`` (pytorch/rl's gail under
``compile.compile``). The compiled call's output carries no such graph, so the backwards that
``BackwardThroughCompiled`` follows never see it: the body is read instead, once per function."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ...knowledge import torch_api as api
from ...summary import model as ir
from ..arguments import written_argument
from ..events import SecondOrderInCompiled
from ..frames import Context, Frame
from ..values import Compiled, External, FunctionVal
from .islands import nodes_in

if TYPE_CHECKING:
    from ..engine_context import EngineContext


#: ``record`` keeps an event from frames that report: this one is a fact of the compiled function.
_RECORDED = Frame(Path(), {}, Context(), record=True)


class SecondOrders:
    def __init__(self, interpreter: EngineContext) -> None:
        self.interp = interpreter
        #: By function summary (kept, so that its id is not reused): the two calls and the spelling.
        self._scanned: dict[int, tuple[ir.FunctionSummary, tuple[ir.Call, ir.Call, str] | None]] = {}

    def note(self, compiled: Compiled) -> None:
        """Record ``compiled`` when it is a function whose own body differentiates twice: whatever
        calls it, and wherever the compile ran (a module's binding block run lazily too)."""
        target = compiled.target
        if not isinstance(target, FunctionVal):
            return
        inner = self.inside(target)
        if inner is None:
            return
        first, second, spelling = inner
        location, after = self.interp.loc(target.path, first.span), self.interp.loc(target.path, second.span)
        self.interp.record(SecondOrderInCompiled(location, after, spelling, compiled), _RECORDED)

    def inside(self, function: FunctionVal) -> tuple[ir.Call, ir.Call, str] | None:
        """The ``create_graph=True`` backward and the later backward of ``function``'s own body,
        with the first's spelling; None when the body does not differentiate twice."""
        summary = self.interp.index.function(function.path, function.qualname)  # the walk depends on the body
        if summary is None:
            return None
        known = self._scanned.get(id(summary))
        if known is None or known[0] is not summary:
            known = (summary, self._scan(function.path, summary))
            self._scanned[id(summary)] = known
        return known[1]

    def _scan(self, path: Path, summary: ir.FunctionSummary) -> tuple[ir.Call, ir.Call, str] | None:
        frame = Frame(path, {}, Context(), record=False)
        first: tuple[ir.Call, str] | None = None
        for node in nodes_in(summary.body):
            if not isinstance(node, ir.Call):
                continue
            kind = self._backward(node, frame)
            if kind is None:
                continue
            spelling, position = kind
            if first is None:
                if _create_graph_true(node, position):
                    first = (node, spelling)
            elif (node.span.line, node.span.column) > (first[0].span.line, first[0].span.column):
                return first[0], node, first[1]
        return None

    def _backward(self, call: ir.Call, frame: Frame) -> tuple[str, int] | None:
        """How ``call`` is spelled and where its ``create_graph`` goes, when it runs a backward."""
        func = call.func
        if not isinstance(func, (ir.Ref, ir.Attr)):
            return None
        for value in self.interp.eval(func, frame):  # names the module binds: ``torch.autograd.grad``, ``grad``
            if isinstance(value, External) and value.name in api.BACKWARD_FUNCTIONS:
                return f"{value.name}()", api.BACKWARD_FUNCTIONS[value.name].create_graph_position
        if isinstance(func, ir.Attr) and func.attr == api.TENSOR_BACKWARD.name:
            return "Tensor.backward()", api.TENSOR_BACKWARD.create_graph_position
        return None


def _create_graph_true(call: ir.Call, position: int) -> bool:
    """``create_graph=True`` written as a constant, by keyword or at its position."""
    written = written_argument(call.args, api.CREATE_GRAPH.name, position)
    return isinstance(written, ir.Const) and written.value is True
