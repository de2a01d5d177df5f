"""A compiled function that differentiates twice (CAL004): ``grad(..., create_graph=True)`` or
``backward(create_graph=True)``, then a later backward, as a gradient penalty computed and
backpropagated inside ``torch.compile(update)``. The ``create_graph=True`` call may be in the body
itself or in a function or module the body calls (pytorch/rl's gail: ``GAILLoss.forward`` computes
the penalty, the compiled ``update`` runs ``backward``); Dynamo traces those calls into the same
compiled function. The compiled call's output carries no such graph, so the backwards that
``BackwardThroughCompiled`` follows never see it: the bodies are read instead, once per function."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.findings import Condition
from ...knowledge import torch_api as api
from ...summary import model as ir
from ..arguments import written_argument
from ..events import SecondOrderInCompiled
from ..frames import Context, Frame
from ..values import Compiled, External, FunctionVal, Instance
from .islands import nodes_in
from .switches import with_condition

if TYPE_CHECKING:
    from ..engine_context import EngineContext


#: ``record`` keeps an event from frames that report: this one is a fact of the compiled function.
_RECORDED = Frame(Path(), {}, Context(), record=True)
#: How deep below the compiled function a ``create_graph=True`` call is looked for (a loss module's
#: ``forward`` calling its penalty helper is two).
CALLEE_DEPTH = 2


@dataclass(frozen=True)
class _First:
    """A ``create_graph=True`` backward call, in ``path``, and the switches it runs under."""

    call: ir.Call
    path: Path
    spelling: str
    conditions: tuple[Condition, ...] = ()


@dataclass(frozen=True)
class Twice:
    """Where a compiled function differentiates twice: the ``create_graph=True`` call (in ``path``),
    its spelling, the later backward, and the call in the compiled body that reaches the first one
    when it is in a callee (None: in the body itself)."""

    first: ir.Call
    path: Path
    spelling: str
    second: ir.Call
    second_path: Path
    via: ir.Call | None = None
    #: The run-time switches on the way: the call reaching the first, the first, the second.
    conditions: tuple[Condition, ...] = ()


@dataclass(frozen=True)
class _Scan:
    """What one function's body does: its first ``create_graph=True`` backward (with the file and the
    spelling), and a pair (that call or one below it, then a later backward) when it has one."""

    first: _First | None
    twice: Twice | None


_NOTHING = _Scan(None, None)


class SecondOrders:
    def __init__(self, interpreter: EngineContext) -> None:
        self.interp = interpreter
        #: By function (closure and bound instance included) and depth left: the summary read (kept,
        #: so that its id is not reused) and what its body does. The recursion guard is not part of
        #: the key: a cycle only cuts a scan short.
        self._scanned: dict[tuple[FunctionVal, int], tuple[ir.FunctionSummary, _Scan]] = {}

    def note(self, compiled: Compiled, called: bool = False) -> None:
        """Record ``compiled`` when it is a function that differentiates twice: where it is compiled
        (whatever calls it, a module's binding block run lazily too), and, ``called``, where a call
        reaches it with the switches the compile ran under (a helper's compile under ``if cfg.compile:``)."""
        target = compiled.target
        if not isinstance(target, FunctionVal):
            return
        twice = self.inside(target)
        if twice is None:
            return
        first = self.interp.loc(twice.path, twice.first.span)
        after = self.interp.loc(twice.second_path, twice.second.span)
        if twice.via is None:
            event = SecondOrderInCompiled(first, after, twice.spelling, compiled, None, called, twice.conditions)
        else:  # reported in the compiled function, whose author chose to compile what it calls
            via = self.interp.loc(target.path, twice.via.span)
            event = SecondOrderInCompiled(via, after, twice.spelling, compiled, first, called, twice.conditions)
        self.interp.record(event, _RECORDED)

    def inside(self, function: FunctionVal) -> Twice | None:
        """Where ``function`` differentiates twice (its body, and what the body calls down to
        ``CALLEE_DEPTH``); None when it does not."""
        return self._scan(function, CALLEE_DEPTH, frozenset()).twice

    def _scan(self, function: FunctionVal, depth: int, above: frozenset[tuple[Path, str]]) -> _Scan:
        summary = self.interp.index.function(function.path, function.qualname)  # the walk depends on the body
        if summary is None:
            return _NOTHING
        key = (function, depth)
        known = self._scanned.get(key)
        if known is None or known[0] is not summary:
            known = (summary, self._scan_body(function, summary, depth, above | {(function.path, function.qualname)}))
            self._scanned[key] = known
        return known[1]

    def _scan_body(
        self, function: FunctionVal, summary: ir.FunctionSummary, depth: int, above: frozenset[tuple[Path, str]]
    ) -> _Scan:
        path = function.path
        env = {name: values for name, values in function.closure}
        if function.bound_self is not None and summary.receiver is not None:
            env[summary.receiver] = frozenset([function.bound_self])
        frame = Frame(path, env, Context(), record=False)
        first: _First | None = None
        via: ir.Call | None = None
        for node, conditions in self._calls_in(summary.body, frame, ()):
            kind = self._backward(node, frame)
            if kind is not None:
                spelling, position = kind
                if first is not None and _after(node, via or first.call):
                    twice = Twice(first.call, first.path, first.spelling, node, path, via)
                    return _Scan(first, replace(twice, conditions=_joined(first.conditions, conditions)))
                if first is None and _create_graph_true(node, position):
                    first = _First(node, path, spelling, conditions)
                continue
            if depth <= 0 or first is not None:
                continue
            for callee in self._callees(node, frame):
                if (callee.path, callee.qualname) in above:
                    continue
                below = self._scan(callee, depth - 1, above)
                if below.twice is not None:  # the callee differentiates twice itself
                    twice = below.twice
                    return _Scan(
                        below.first,
                        replace(twice, via=twice.via or node, conditions=_joined(conditions, twice.conditions)),
                    )
                if below.first is not None:
                    first = replace(below.first, conditions=_joined(conditions, below.first.conditions))
                    via = node
                    break
        return _Scan(first, None)

    def _calls_in(
        self, statements: tuple[ir.Stmt, ...], frame: Frame, conditions: tuple[Condition, ...]
    ) -> Iterator[tuple[ir.Call, tuple[Condition, ...]]]:
        """The calls of ``statements`` in order, each with the run-time switches it runs under (``if
        self.use_grad_penalty:``); an arm a known flag rules out is skipped. A test that calls
        something is not evaluated: both arms, no switch named."""
        for statement in statements:
            if isinstance(statement, ir.Branch):
                test = statement.condition
                if test is None or not _pure(test):
                    for arm in statement.arms:
                        yield from self._calls_in(arm, frame, conditions)
                    continue
                arms, switched = self.interp.decided_arms(statement, frame)
                for position, arm in enumerate(arms):
                    own = conditions if switched is None else with_condition(conditions, switched[position])
                    yield from self._calls_in(arm, frame, own)
            elif isinstance(statement, ir.With):
                for node in _in_order(replace(statement, body=())):
                    yield node, conditions
                yield from self._calls_in(statement.body, frame, conditions)
            else:
                for node in _in_order(statement):
                    yield node, conditions

    def _callees(self, call: ir.Call, frame: Frame) -> list[FunctionVal]:
        """The project functions ``call`` runs: a function, a bound method, or an instance's
        ``__call__`` (a module's ``forward``). Only names and attributes are evaluated."""
        func = call.func
        if not isinstance(func, (ir.Ref, ir.Attr)):
            return []
        found: list[FunctionVal] = []
        for value in self.interp.eval(func, frame):
            if isinstance(value, FunctionVal):
                found.append(value)
            elif isinstance(value, Instance):
                members = self.interp.find_member(value.cls, "__call__")
                if members is None and self.interp.is_module_class(value.cls):
                    members = self.interp.find_member(value.cls, api.FORWARD.name)
                if members is not None:
                    found.extend(v for v in self.interp.bind_methods(members, value) if isinstance(v, FunctionVal))
        return found

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


def _joined(*groups: tuple[Condition, ...]) -> tuple[Condition, ...]:
    joined: tuple[Condition, ...] = ()
    for group in groups:
        for condition in group:
            joined = with_condition(joined, condition)
    return joined


def _pure(test: ir.Expr) -> bool:
    """A name or an attribute chain on one: evaluating it calls nothing."""
    while isinstance(test, ir.Attr):
        test = test.base
    return isinstance(test, (ir.Ref, ir.Import))


def _in_order(statement: ir.Stmt) -> list[ir.Call]:
    """The calls of one statement in the order they run: a call ends after its receiver and its
    arguments (``(loss + penalty(x)).backward()`` runs the penalty first)."""
    return sorted((node for node in nodes_in((statement,)) if isinstance(node, ir.Call)), key=_end)


def _end(call: ir.Call) -> tuple[int, int]:
    return call.span.end_line, call.span.end_column


def _after(node: ir.Call, earlier: ir.Call) -> bool:
    """``node`` runs after ``earlier`` has returned (both in one body)."""
    return _end(node) > _end(earlier)


def _create_graph_true(call: ir.Call, position: int) -> bool:
    """``create_graph=True`` written as a constant, by keyword or at its position."""
    written = written_argument(call.args, api.CREATE_GRAPH.name, position)
    return isinstance(written, ir.Const) and written.value is True
