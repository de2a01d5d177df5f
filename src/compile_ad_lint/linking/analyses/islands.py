"""Whether a compiled region visibly holds code autocast computes differently: CAL002's numeric effect.

A backward traced for another autocast state than the one it runs under changes gradients only
where the region's backward has autocast-sensitive ops (``facts/noise_vs_semantics.py``): an
``autocast(enabled=False)`` block (an fp32 island), explicit ``.float()``/``.to(torch.float32)``
casts, or ops autocast runs in float32 (``torch_api.AUTOCAST_FP32_OPS``: softmax, layer_norm,
losses, ...). The scan reads the compiled callable's body and what it calls (project functions,
``self.<module>`` forwards, ``torch.nn`` modules from ``torch_api.AUTOCAST_FP32_MODULES``), a few
calls deep, once per compiled callable, only for callables a backward reaches.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from ...knowledge import torch_api as api
from ...summary import model as ir
from ..events import Island
from ..frames import Context, Frame
from ..values import ClassVal, Collection, Compiled, CompiledOutput, ExternalInstance, FunctionVal, Instance, Wrapper

if TYPE_CHECKING:
    from ..engine_context import EngineContext

#: How many calls deep a compiled callable is read, and how many function bodies at most per analysis.
MAX_DEPTH = 3
MAX_FUNCTIONS_PER_ANALYSIS = 400

#: Kinds of island, most telling first.
_FP32_BLOCK, _CAST, _FP32_OP = 0, 1, 2


class IslandScan:
    def __init__(self, interpreter: EngineContext) -> None:
        self.interp = interpreter
        self._found: dict[Compiled, Island | None] = {}
        self._functions: dict[tuple, _Found | None] = {}

    def of(self, origins: Iterable[CompiledOutput]) -> tuple[Island, ...]:
        islands = []
        for compiled in dict.fromkeys(origin.compiled for origin in origins):
            island = self.island(compiled)
            if island is not None:
                islands.append(island)
        return tuple(islands)

    def island(self, compiled: Compiled) -> Island | None:
        def scan() -> Island | None:
            try:
                best = self.value_island(compiled.target, 0)
            except RecursionError:
                best = None
            if best is None:
                return None
            _, location, text = best
            return Island(compiled.site, location if location is not None else compiled.site, text)

        # A region reached again while scanning it has none of its own.
        return self.interp.cached(self._found, compiled, scan, cycle=None)

    # -- values -----------------------------------------------------------------------------
    #
    # Each returns the most telling island (kind, then position) as ``(kind, location, text)``; a
    # location of None means "the compile site". Function bodies are read once per analysis.

    def value_island(self, value: object, depth: int) -> _Found | None:
        interp = self.interp
        if depth > MAX_DEPTH:
            return None
        if isinstance(value, Wrapper):
            return _best(self.value_island(inner, depth) for inner in value.inner)
        if isinstance(value, Compiled):
            return self.value_island(value.target, depth)
        if isinstance(value, Collection) and value.sequential:
            return _best(self.value_island(item, depth) for item in value.items)
        if isinstance(value, ExternalInstance) and value.cls in api.AUTOCAST_FP32_MODULES:
            name = api.short_name(value.cls)
            return _FP32_OP, None, f"`{name}`, whose layer_norm/softmax/loss autocast runs in float32"
        if isinstance(value, FunctionVal):
            return self.function_island(value, depth)
        if isinstance(value, Instance):
            members = interp.find_member(value.cls, "__call__")
            if members is None and interp.is_module_class(value.cls):
                # The module compiled in place by its own method (``self.compile()``) replaced its
                # forward with itself compiled: its region is its own forward.
                replaced = interp.reach.instance_forward(value)
                members = (interp.find_member(value.cls, api.FORWARD.name) or frozenset()) | frozenset(
                    m for m in replaced if not (isinstance(m, Compiled) and m.target == value)
                )
            return _best(
                self.value_island(member, depth) for member in interp.bind_methods(members or frozenset(), value)
            )
        return None

    def function_island(self, function: FunctionVal, depth: int) -> _Found | None:
        interp = self.interp
        owner = function.bound_self.cls if isinstance(function.bound_self, Instance) else None
        key = (function.path, function.qualname, owner)
        # Recursion sees none.
        return interp.cached(self._functions, key, lambda: self._function_island(function, owner, depth), cycle=None)

    def _function_island(self, function: FunctionVal, owner: ClassVal | None, depth: int) -> _Found | None:
        interp = self.interp
        if len(self._functions) > MAX_FUNCTIONS_PER_ANALYSIS:
            return None
        summary = interp.index.function(function.path, function.qualname)
        if summary is None:
            return None

        env: dict = {}
        params = [p.lstrip("*") for p in summary.params]
        if function.bound_self is not None and params:
            env[params[0]] = frozenset([function.bound_self])
        frame = Frame(
            function.path,
            env,
            Context(),
            record=False,
            stack=((function.path, function.qualname),),
            closure=dict(function.closure),
        )
        found: list[_Found | None] = []
        for node in nodes_in(summary.body):
            if isinstance(node, ir.With):
                if any(_disables_autocast(item.context) for item in node.items):
                    found.append(
                        (
                            _FP32_BLOCK,
                            interp.loc(function.path, node.span),
                            "an `autocast(enabled=False)` block (an fp32 island)",
                        )
                    )
            elif isinstance(node, ir.Call):
                call = _call_island(node)
                if call is not None:
                    found.append((call[0], interp.loc(function.path, node.span), call[1]))
                elif _plain_chain(node.func) and depth < MAX_DEPTH:
                    for callee in interp.eval(node.func, frame):
                        if isinstance(callee, ExternalInstance) and callee.cls in api.AUTOCAST_FP32_MODULES:
                            written, name = _written(node.func), api.short_name(callee.cls)
                            found.append(
                                (
                                    _FP32_OP,
                                    interp.loc(function.path, node.span),
                                    f"`{written}` ({name}), which autocast runs in float32",
                                )
                            )
                        elif isinstance(callee, (FunctionVal, Instance, Wrapper, Compiled)):
                            found.append(self.value_island(callee, depth + 1))
        return _best(found)


_Found = tuple  # (kind, Location | None, description)


def _best(candidates: Iterable[_Found | None]) -> _Found | None:
    """The most telling island, then the first by position (deterministic whatever the set order)."""
    present = [c for c in candidates if c is not None]
    if not present:
        return None
    return min(present, key=lambda c: (c[0], c[1] is None, c[1] or (), c[2]))


def nodes_in(statements: Iterable[ir.Stmt]) -> Iterator[object]:
    """Every ``With`` statement and every call in ``statements``, in order (nested defs excluded)."""
    for statement in statements:
        if isinstance(statement, ir.With):
            yield statement
            for item in statement.items:
                yield from _expr_nodes(item.context)
            yield from nodes_in(statement.body)
        elif isinstance(statement, ir.Branch):
            for arm in statement.arms:
                yield from nodes_in(arm)
        elif isinstance(statement, ir.Assign):
            yield from _expr_nodes(statement.value)
        elif isinstance(statement, ir.Evaluate):
            yield from _expr_nodes(statement.expr)
        elif isinstance(statement, ir.Return) and statement.value is not None:
            yield from _expr_nodes(statement.value)


def _expr_nodes(expr: object) -> Iterator[object]:
    if isinstance(expr, ir.Call):
        yield expr
        yield from _expr_nodes(expr.func)
        for arg in expr.args:
            yield from _expr_nodes(arg.value)
    elif isinstance(expr, ir.Attr) or isinstance(expr, ir.Item):
        yield from _expr_nodes(expr.base)
    elif isinstance(expr, (ir.Combine, ir.Elements)):
        for part in expr.parts:
            yield from _expr_nodes(part)
    elif isinstance(expr, ir.Choice):
        for option in expr.options:
            yield from _expr_nodes(option)


def _disables_autocast(expr: ir.Expr) -> bool:
    """``torch.autocast(..., enabled=False)``, ``torch.cuda.amp.autocast(enabled=False)``."""
    if not isinstance(expr, ir.Call):
        return False
    func = expr.func
    name = func.attr if isinstance(func, ir.Attr) else func.name if isinstance(func, ir.Ref) else ""
    if name != "autocast":
        return False
    return any(
        arg.keyword == "enabled" and isinstance(arg.value, ir.Const) and arg.value.value is False for arg in expr.args
    )


def _call_island(call: ir.Call) -> tuple[int, str] | None:
    func = call.func
    if not isinstance(func, ir.Attr):
        return None
    if func.attr in api.FLOAT32_CAST_METHODS and not call.args:
        return _CAST, f"an explicit `.{func.attr}()` cast"
    if func.attr == "to" and any(_is_float32(arg.value) for arg in call.args if arg.keyword in (None, "dtype")):
        return _CAST, "an explicit `.to(torch.float32)` cast"
    if func.attr in api.AUTOCAST_FP32_OPS:
        return _FP32_OP, f"`{func.attr}`, which autocast runs in float32"
    return None


def _is_float32(expr: ir.Expr) -> bool:
    if isinstance(expr, ir.Const) and isinstance(expr.value, ir.Symbol):
        return expr.value.name in api.FLOAT32_DTYPES
    if isinstance(expr, ir.Attr) and isinstance(expr.base, ir.Ref):
        return f"{expr.base.name}.{expr.attr}" in api.FLOAT32_DTYPES
    return False


def _written(expr: ir.Expr) -> str:
    if isinstance(expr, ir.Attr):
        return f"{_written(expr.base)}.{expr.attr}"
    return expr.name if isinstance(expr, ir.Ref) else "..."


def _plain_chain(expr: ir.Expr) -> bool:
    """``self.block``, ``helper``, ``F.gelu``: safe to evaluate without running anything."""
    while isinstance(expr, ir.Attr):
        expr = expr.base
    return isinstance(expr, ir.Ref)
