"""What a compiled callable returns, output by output, and which leaves each output depends on (CAL005).

When a compiled function or module ``forward`` visibly returns a tuple (``return self.head(h),
self.aux_head(h)``), each returned expression is traced back, inside that body, to the names it is
computed from: the function's arguments, ``self.<attribute>`` and module globals. The interpreter
then says which of them hold parameters (``torch.nn.Linear(...)``, ``nn.Parameter(...)``, a project
module with such attributes): those are the leaves whose ``.grad`` the compiled backward fills with
zeros when only other outputs reach the loss.

The tracing is deliberately cautious, because a leaf is only reported when no used output can
reach it: calling a method of ``self`` or a project function, a lambda, or ``self`` passed along
makes an output *opaque* (it may reach any leaf), and attributes that alias one another (``self.a =
self.b``, ``self.head.weight = self.embed.weight``, ``nn.Sequential(self.block, ...)``) are never
named.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.locations import Location
from ...knowledge import torch_api as api
from ...summary import model as ir
from ..events import Leaf, ResultElement
from ..values import ClassVal, Collection, Compiled, Disabled, ExternalInstance, FunctionVal, Instance

if TYPE_CHECKING:
    from ..arguments import Args
    from ..engine_context import EngineContext


@dataclass(frozen=True, slots=True)
class ParamRoot:
    """An output's value may come from the function's parameter ``name``."""

    name: str


@dataclass(frozen=True, slots=True)
class SelfRoot:
    """An output's value may come from ``self.<attribute>``."""

    attribute: str


@dataclass(frozen=True, slots=True)
class GlobalRoot:
    """An output's value may come from ``name`` in the function's closure or module."""

    name: str


@dataclass(frozen=True, slots=True)
class AnyRoot:
    """An output's value may come from anything: a lambda, a local definition, an expression the
    roots do not follow (the output is opaque)."""


@dataclass(frozen=True, slots=True)
class WholeSelf:
    """An output's value may come from ``self`` (or ``super()``) as a whole (the output is opaque)."""


#: What an output's value may come from.
Root = ParamRoot | SelfRoot | GlobalRoot | AnyRoot | WholeSelf
_TOP: Root = AnyRoot()
_SELF_ALL: Root = WholeSelf()
#: Per returned position, the roots it depends on, the returned expression (where it is one display),
#: and the keys of a returned dict display (empty for a tuple or list).
ReturnShape = tuple[tuple[frozenset[Root], ...], tuple[ir.Expr | None, ...], tuple[str, ...]]
_DISPLAY = "#"  # env key prefix: a name bound to a tuple/list display, position by position


class _Returns:
    """Per-position roots of every ``return`` of one function body (flow-sensitive on straight
    code, merged over branches)."""

    def __init__(self, params: Sequence[str], self_name: str | None) -> None:
        self.self_name = self_name
        self.params = {p.lstrip("*") for p in params} - {self_name}
        self.returns: list[tuple[tuple[frozenset, ...] | None, tuple[ir.Expr, ...], tuple[str, ...]]] = []

    def block(self, statements: Iterable[ir.Stmt], env: dict) -> None:
        for statement in statements:
            self.statement(statement, env)

    def statement(self, statement: ir.Stmt, env: dict) -> None:
        if isinstance(statement, ir.Assign):
            roots, parts = self.expr(statement.value, env), self.parts(statement.value, env)
            for target in statement.targets:
                self.bind(target, roots, parts, env)
        elif isinstance(statement, ir.Evaluate):
            call = statement.expr
            # ``h.add_(...)``, ``outputs.append(...)``: the receiver now also depends on the arguments.
            if isinstance(call, ir.Call) and isinstance(call.func, ir.Attr) and isinstance(call.func.base, ir.Ref):
                name = call.func.base.name
                if name in env:
                    env[name] = env[name] | frozenset().union(*(self.expr(a.value, env) for a in call.args))
                    env.pop(_DISPLAY + name, None)
        elif isinstance(statement, ir.With):
            for item in statement.items:
                if item.target is not None:
                    self.bind(item.target, self.expr(item.context, env), None, env)
            self.block(statement.body, env)
        elif isinstance(statement, ir.Return):
            value = statement.value
            if value is None:
                self.returns.append((None, (), ()))
            else:
                display = value.parts if isinstance(value, ir.Elements) else ()
                keys = value.keys if isinstance(value, ir.Elements) else ()
                self.returns.append((self.parts(value, env), display, keys))
        elif isinstance(statement, ir.Branch):
            outcomes = []
            for arm in statement.arms:
                arm_env = dict(env)
                self.block(arm, arm_env)
                outcomes.append(arm_env)
            merged: dict = {}
            for key in set().union(*outcomes) if outcomes else ():
                values = [o.get(key) for o in outcomes]
                if key.startswith(_DISPLAY):
                    if all(v == values[0] for v in values) and values[0] is not None:
                        merged[key] = values[0]
                else:
                    merged[key] = frozenset().union(
                        *(v if v is not None else env.get(key, frozenset()) for v in values)
                    )
            env.clear()
            env.update(merged)
        elif isinstance(statement, ir.Define):
            env[statement.name] = frozenset([_TOP])
            env.pop(_DISPLAY + statement.name, None)

    def bind(self, target: ir.Target, roots: frozenset, parts: tuple | None, env: dict) -> None:
        if isinstance(target, ir.NameTarget):
            env[target.name] = roots
            if parts is not None:
                env[_DISPLAY + target.name] = parts
            else:
                env.pop(_DISPLAY + target.name, None)
        elif isinstance(target, ir.MultiTarget):
            exact = parts is not None and len(parts) == len(target.targets)
            for position, element in enumerate(target.targets):
                self.bind(element, parts[position] if parts is not None and exact else roots, None, env)

    def parts(self, expr: ir.Expr, env: dict) -> tuple[frozenset, ...] | None:
        if isinstance(expr, ir.Elements):
            return tuple(self.expr(part, env) for part in expr.parts)
        if isinstance(expr, ir.Ref):
            return env.get(_DISPLAY + expr.name)
        return None

    def expr(self, expr: ir.Expr, env: dict) -> frozenset:
        if isinstance(expr, ir.Const) or isinstance(expr, ir.Import):
            return frozenset()
        if isinstance(expr, ir.Ref):
            name = expr.name
            if name in env:
                return env[name]
            if name == self.self_name or name == "super":
                return frozenset([_SELF_ALL])
            if name in self.params:
                return frozenset([ParamRoot(name)])
            return frozenset([GlobalRoot(name)])
        if isinstance(expr, ir.Attr):
            base = expr.base
            if isinstance(base, ir.Ref) and base.name == self.self_name and base.name not in env:
                return frozenset([SelfRoot(expr.attr)])
            return self.expr(base, env)
        if isinstance(expr, ir.Call):
            return self.expr(expr.func, env).union(*(self.expr(a.value, env) for a in expr.args))
        if isinstance(expr, (ir.Combine, ir.Elements)):
            return frozenset().union(*(self.expr(p, env) for p in expr.parts))
        if isinstance(expr, ir.Choice):
            return frozenset().union(*(self.expr(p, env) for p in expr.options))
        if isinstance(expr, ir.Item):
            return self.expr(expr.base, env)
        return frozenset([_TOP])  # lambdas, anything new


def returned_roots(summary: ir.FunctionSummary, self_name: str | None) -> ReturnShape | None:
    """Per returned position, the roots it depends on, and the returned expression (where it is
    one display), when every ``return`` returns a tuple of the same size (at least two)."""
    walker = _Returns(summary.params, self_name)
    walker.block(summary.body, {})
    returned = [parts for parts, _, _ in walker.returns if parts is not None]
    sizes = {len(parts) for parts in returned}
    if len(returned) != len(walker.returns) or len(sizes) != 1 or next(iter(sizes)) < 2:
        return None
    size = next(iter(sizes))
    roots = tuple(frozenset[Root]().union(*(parts[i] for parts in returned)) for i in range(size))
    displays = [display for _, display, _ in walker.returns if len(display) == size]
    shown: tuple[ir.Expr | None, ...] = (
        tuple(displays[0]) if len(displays) == 1 and len(walker.returns) == 1 else (None,) * size
    )
    # ``return {"logits": h, "aux": a}``: outputs by key, when every return names the same keys.
    keys = {key for _, _, key in walker.returns}
    return roots, shown, keys.pop() if len(keys) == 1 else ()


class ResultAnalysis:
    """``CompiledResult`` structures for one interpreter, memoized."""

    def __init__(self, interpreter: EngineContext) -> None:
        self.interp = interpreter
        self._roots: dict[tuple[Path, str, str | None], ReturnShape | None] = {}
        self._aliased: dict[ClassVal, tuple[frozenset[str], dict[str, tuple[Path, ir.Span]]]] = {}
        self._memo: dict[tuple, tuple[ResultElement, ...] | None] = {}

    def structure(self, compiled: Compiled, args: Args, site: Location) -> tuple[ResultElement, ...] | None:
        # Recursion through a module holding itself sees "unknown".
        return self.interp.cached(
            self._memo, (compiled.target, args, site), lambda: self._structure(compiled, args, site), cycle=None
        )

    def _structure(self, compiled: Compiled, args: Args, site: Location) -> tuple[ResultElement, ...] | None:
        found = self.target_function(compiled.target)
        if found is None:
            return None
        function, summary, owner = found
        self_name = summary.params[0] if function.bound_self is not None and summary.params else None
        memo_key = (function.path, function.qualname, self_name)
        if memo_key not in self._roots:
            self._roots[memo_key] = returned_roots(summary, self_name)
        shape = self._roots[memo_key]
        if shape is None:
            return None
        roots, displays, keys = shape
        bound = dict(self.interp.bind(function, summary, args))
        elements = []
        for index, (position_roots, display) in enumerate(zip(roots, displays)):
            leaves, opaque = self.classify(position_roots, function, owner, bound, site)
            where = (
                self.interp.loc(function.path, display.span)
                if isinstance(display, ir.Call)
                else self.interp.loc(function.path, summary.span)
            )
            elements.append(ResultElement(index, where, frozenset(leaves), opaque, keys[index] if keys else None))
        return tuple(elements)

    def target_function(self, target: object) -> tuple[FunctionVal, ir.FunctionSummary, ClassVal | None] | None:
        interp = self.interp
        if isinstance(target, Instance):
            if not interp.is_module_class(target.cls) or interp.find_member(target.cls, "__call__") is not None:
                return None
            members = interp.find_member(target.cls, api.FORWARD.name) or frozenset()
            functions = [m for m in members if isinstance(m, FunctionVal)]
            if len(functions) != 1 or len(members) != 1:
                return None
            target = FunctionVal(
                functions[0].path, functions[0].qualname, bound_self=target, closure=functions[0].closure
            )
        if not isinstance(target, FunctionVal):
            return None
        summary = interp.index.function(target.path, target.qualname)
        if summary is None:
            return None
        owner = target.bound_self.cls if isinstance(target.bound_self, Instance) else None
        return target, summary, owner

    # -- leaves -------------------------------------------------------------------------------

    def classify(
        self, roots: frozenset[Root], function: FunctionVal, owner: ClassVal | None, bound: dict, site: Location
    ) -> tuple[set[Leaf], bool]:
        leaves: set[Leaf] = set()
        opaque = False
        for root in roots:
            match root:
                case AnyRoot() | WholeSelf():
                    opaque = True
                case SelfRoot(attribute):
                    if owner is None:
                        opaque = True
                        continue
                    leaf, is_opaque = self.self_leaf(owner, attribute)
                    opaque = opaque or is_opaque
                    if leaf is not None:
                        leaves.add(leaf)
                case ParamRoot(name):
                    values = bound.get(name, frozenset())
                    if any(isinstance(v, (FunctionVal, ClassVal)) for v in values):
                        opaque = True
                    elif values and self.holds_parameters(values):
                        leaves.add(
                            Leaf(name, f"argument {name} at {site.path}:{site.line}:{site.column}", site, "argument")
                        )
                case GlobalRoot(name):
                    values = dict(function.closure).get(name)
                    if values is None:
                        values = self.interp.lookup_global(function.path, name)
                    if not values:
                        continue
                    if any(isinstance(v, (FunctionVal, ClassVal, Disabled)) for v in values):
                        opaque = True
                    elif self.holds_parameters(values):
                        leaves.add(Leaf(name, f"{function.path}:{name}", None, "global"))
        return leaves, opaque

    def self_leaf(self, owner: ClassVal, attribute: str) -> tuple[Leaf | None, bool]:
        """The leaf ``self.<attribute>`` is, and whether it makes the output opaque (a method)."""
        interp = self.interp
        member = interp.find_member(owner, attribute)
        if member is not None and any(isinstance(v, (FunctionVal, Compiled, Disabled)) for v in member):
            return None, True
        values = (interp.instance_attribute(owner, attribute) or frozenset()) | (member or frozenset())
        aliased, sites = self.aliasing(owner)
        if attribute in aliased:
            return None, True  # shared with another attribute: whatever uses that one may reach it
        if not values or not self.holds_parameters(values):
            return None, False
        site = sites.get(attribute)
        location = interp.loc(*site) if site is not None else None
        return Leaf(f"self.{attribute}", f"{owner.path}:{owner.qualname}.{attribute}", location), False

    def holds_parameters(self, values: Iterable[object], depth: int = 0) -> bool:
        if depth > 4:
            return False
        interp = self.interp
        for value in values:
            if isinstance(value, ExternalInstance) and value.cls in api.PARAMETERIZED_MODULES:
                return True
            if (
                isinstance(value, Compiled)
                and value.target is not None
                and self.holds_parameters([value.target], depth + 1)
            ):
                return True
            if isinstance(value, Collection) and self.holds_parameters(value.items, depth + 1):
                return True
            if isinstance(value, Instance) and interp.is_module_class(value.cls):
                for attribute in self.instance_attributes(value.cls):
                    if self.holds_parameters(interp.instance_attribute(value.cls, attribute) or (), depth + 1):
                        return True
        return False

    def instance_attributes(self, cls: ClassVal) -> set[str]:
        names: set[str] = set()
        for klass in self.interp.mro(cls):
            if isinstance(klass, ClassVal):
                summary = self.interp.class_summary(klass)
                for _, qualname in summary.methods if summary else ():
                    function = self.interp.index.function(klass.path, qualname)
                    if function is not None and function.params:
                        names |= {target.attr for target, _, _ in _self_assignments(function.body, function.params[0])}
        return names

    def aliasing(self, owner: ClassVal) -> tuple[frozenset[str], dict[str, tuple[Path, ir.Span]]]:
        """Attributes that may share an object with another one, and where each attribute is set."""
        return self.interp.cached(self._aliased, owner, lambda: self._aliasing(owner))

    def _aliasing(self, owner: ClassVal) -> tuple[frozenset[str], dict[str, tuple[Path, ir.Span]]]:
        aliased: set[str] = set()
        sites: dict[str, tuple[Path, ir.Span]] = {}
        sources: dict[str, set[str]] = {}
        for klass in self.interp.mro(owner):
            if not isinstance(klass, ClassVal):
                continue
            summary = self.interp.class_summary(klass)
            for _, qualname in summary.methods if summary else ():
                function = self.interp.index.function(klass.path, qualname)
                if function is None or not function.params:
                    continue
                self_name = function.params[0]
                for target, value, span in _self_assignments(function.body, self_name, nested=True):
                    chain = _self_chain(target.base, self_name)
                    if chain is not None:  # ``self.head.weight = ...``: ``head`` now shares a tensor
                        aliased.add(chain)
                        continue
                    sites.setdefault(target.attr, (klass.path, span))
                    mentioned = set(_self_attributes(value, self_name))
                    aliased |= mentioned  # ``self.proj = nn.Sequential(self.block, ...)``
                    if mentioned and not isinstance(value, ir.Call):
                        aliased.add(target.attr)  # ``self.aux_head = self.head``
                    if isinstance(value, ir.Ref):
                        sources.setdefault(value.name, set()).add(target.attr)
        for attributes in sources.values():
            if len(attributes) > 1:  # ``self.a = m; self.b = m``
                aliased |= attributes
        return frozenset(aliased), sites


def _self_assignments(statements: Iterable[ir.Stmt], self_name: str, nested: bool = False):
    """``(target, value, span)`` of every ``self.<attr> = value`` (``nested``: also ``self.a.b = ...``)."""
    for statement in ir.statements_in(statements):
        if isinstance(statement, ir.Assign):
            for target in _flat_targets(statement.targets):
                if isinstance(target, ir.AttrTarget):
                    direct = isinstance(target.base, ir.Ref) and target.base.name == self_name
                    if direct or (nested and _self_chain(target.base, self_name) is not None):
                        yield target, statement.value, statement.span


def _flat_targets(targets: Iterable[ir.Target]):
    for target in targets:
        if isinstance(target, ir.MultiTarget):
            yield from _flat_targets(target.targets)
        else:
            yield target


def _self_chain(expr: ir.Expr, self_name: str) -> str | None:
    """``head`` for ``self.head``, ``self.head.proj``, ``self.head[0]``; else None."""
    while isinstance(expr, (ir.Attr, ir.Item)):
        if isinstance(expr, ir.Attr) and isinstance(expr.base, ir.Ref) and expr.base.name == self_name:
            return expr.attr
        expr = expr.base
    return None


def _self_attributes(expr: object, self_name: str):
    """Every ``self.<attr>`` an expression mentions."""
    if isinstance(expr, ir.Attr):
        if isinstance(expr.base, ir.Ref) and expr.base.name == self_name:
            yield expr.attr
        else:
            yield from _self_attributes(expr.base, self_name)
    elif isinstance(expr, ir.Call):
        yield from _self_attributes(expr.func, self_name)
        for arg in expr.args:
            yield from _self_attributes(arg.value, self_name)
    elif isinstance(expr, (ir.Combine, ir.Elements)):
        for part in expr.parts:
            yield from _self_attributes(part, self_name)
    elif isinstance(expr, ir.Choice):
        for option in expr.options:
            yield from _self_attributes(option, self_name)
    elif isinstance(expr, ir.Item):
        yield from _self_attributes(expr.base, self_name)


__all__ = ["ResultAnalysis", "returned_roots"]


def indexed_outputs(
    values: Iterable[object], index: int | str, sizes: dict[Location, set[int]], keys: dict[Location, set[tuple]]
) -> frozenset | None:
    """``out[1]`` / ``out["aux"]`` of a compiled call's whole result: that output only (CAL005 then
    counts the others as unused); None when a value is not such a result, or the position is not
    known for every size (or key set) the call's result has."""
    from ..values import Data, OutputElement

    result = []
    for value in values:
        if not isinstance(value, Data) or not value.exact:
            return None
        elements = set(value.elements)
        for site in value.exact:
            if isinstance(index, str):
                named = keys.get(site, set())
                if len(named) != 1 or index not in next(iter(named)):
                    return None
                position = next(iter(named)).index(index)
            else:
                if not sizes.get(site) or any(index >= size for size in sizes[site]):
                    return None
                position = index
            elements.discard(OutputElement(site))
            elements.add(OutputElement(site, position))
        result.append(Data(value.origins, value.dual, value.from_parameter, value.requires_grad, frozenset(elements)))
    return frozenset(result) if result else None
