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

from typing import TYPE_CHECKING, Iterable, Iterator

from ..summary import model as ir
from . import torch_api as api
from .events import Island
from .values import Collection, Compiled, CompiledOutput, ExternalInstance, FunctionVal, Instance, Wrapper

if TYPE_CHECKING:
    from .interpreter import Interpreter

#: How many calls deep, and how many function bodies at most, one compiled callable is read.
MAX_DEPTH = 3
MAX_FUNCTIONS = 40

#: Kinds of island, most telling first.
_FP32_BLOCK, _CAST, _FP32_OP = 0, 1, 2


class IslandScan:
    def __init__(self, interpreter: Interpreter) -> None:
        self.interp = interpreter
        self._found: dict[Compiled, Island | None] = {}

    def of(self, origins: Iterable[CompiledOutput]) -> tuple[Island, ...]:
        islands = []
        for compiled in dict.fromkeys(origin.compiled for origin in origins):
            island = self.island(compiled)
            if island is not None:
                islands.append(island)
        return tuple(islands)

    def island(self, compiled: Compiled) -> Island | None:
        if compiled not in self._found:
            self._found[compiled] = None  # a region reached again while scanning it has none of its own
            visited: set[tuple] = set()
            try:
                # Most telling kind first, then by position: deterministic whatever the set order.
                found = sorted(self.value_islands(compiled.target, compiled, visited, 0), key=lambda item: (item[0], item[1].location))
            except RecursionError:
                found = []
            self._found[compiled] = found[0][1] if found else None
        return self._found[compiled]

    # -- values -----------------------------------------------------------------------------

    def value_islands(self, value: object, compiled: Compiled, visited: set, depth: int) -> Iterator[tuple[int, Island]]:
        interp = self.interp
        if depth > MAX_DEPTH or len(visited) > MAX_FUNCTIONS:
            return
        if isinstance(value, Wrapper):
            for inner in sorted(value.inner, key=repr):
                yield from self.value_islands(inner, compiled, visited, depth)
        elif isinstance(value, Compiled):
            yield from self.value_islands(value.target, compiled, visited, depth)
        elif isinstance(value, Collection) and value.sequential:
            for item in sorted(value.items, key=repr):
                yield from self.value_islands(item, compiled, visited, depth)
        elif isinstance(value, ExternalInstance) and value.cls in api.AUTOCAST_FP32_MODULES:
            name = value.cls.replace("torch.nn.", "nn.")
            yield _FP32_OP, Island(compiled.site, compiled.site, f"`{name}`, whose layer_norm/softmax/loss autocast runs in float32")
        elif isinstance(value, FunctionVal):
            yield from self.function_islands(value, compiled, visited, depth)
        elif isinstance(value, Instance):
            members = interp.find_member(value.cls, "__call__")
            if members is None and interp.is_module_class(value.cls):
                members = (interp.find_member(value.cls, "forward") or frozenset()) | interp.reach.instance_forward(value)
            for member in sorted(interp.bind_methods(members or frozenset(), value), key=repr):
                yield from self.value_islands(member, compiled, visited, depth)

    def function_islands(self, function: FunctionVal, compiled: Compiled, visited: set, depth: int) -> Iterator[tuple[int, Island]]:
        interp = self.interp
        key = (function.path, function.qualname)
        if key in visited:
            return
        visited.add(key)
        summary = interp.index.view(function.path).function(function.qualname)
        if summary is None:
            return
        from .interpreter import Context, Frame

        env: dict = {}
        params = [p.lstrip("*") for p in summary.params]
        if function.bound_self is not None and params:
            env[params[0]] = frozenset([function.bound_self])
        frame = Frame(function.path, env, Context(), record=False, stack=((function.path, function.qualname),), closure=dict(function.closure))
        for node in _nodes(summary.body):
            if isinstance(node, ir.With):
                for item in node.items:
                    if _disables_autocast(item.context):
                        yield _FP32_BLOCK, Island(compiled.site, interp.loc(function.path, node.span), "an `autocast(enabled=False)` block (an fp32 island)")
            elif isinstance(node, ir.Call):
                found = _call_island(node)
                if found is not None:
                    kind, text = found
                    yield kind, Island(compiled.site, interp.loc(function.path, node.span), text)
                elif _plain_chain(node.func):
                    for callee in sorted(interp.eval(node.func, frame), key=repr):
                        if isinstance(callee, ExternalInstance) and callee.cls in api.AUTOCAST_FP32_MODULES:
                            written, name = _written(node.func), callee.cls.replace("torch.nn.", "nn.")
                            yield _FP32_OP, Island(compiled.site, interp.loc(function.path, node.span), f"`{written}` ({name}), which autocast runs in float32")
                        elif isinstance(callee, (FunctionVal, Instance, Wrapper, Compiled)):
                            yield from self.value_islands(callee, compiled, visited, depth + 1)


def _nodes(statements: Iterable[ir.Stmt]) -> Iterator[object]:
    """Every ``With`` statement and every call in ``statements``, in order (nested defs excluded)."""
    for statement in statements:
        if isinstance(statement, ir.With):
            yield statement
            for item in statement.items:
                yield from _expr_nodes(item.context)
            yield from _nodes(statement.body)
        elif isinstance(statement, ir.Branch):
            for arm in statement.arms:
                yield from _nodes(arm)
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
    return any(arg.keyword == "enabled" and isinstance(arg.value, ir.Const) and arg.value.value is False for arg in expr.args)


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
