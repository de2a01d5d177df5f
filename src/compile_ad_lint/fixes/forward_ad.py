"""CAL001's fixes: keep tangents by not running inductor under forward-mode AD.

- ``CallUncompiled``: inside the region, call what was compiled: ``model._orig_mod(x)`` for a
  module compiled with ``torch.compile(model)``, ``f.__wrapped__(x)`` for a compiled function
  (``torch.compile`` keeps the original there, as ``functools.wraps`` does), ``g(x)`` for
  ``torch.compile(g)(x)`` written in the region. Only the region runs eagerly.
- ``CompileWithBackend``: compile with ``backend="eager"`` (dynamo still captures graphs; they run
  eagerly, so forward AD works, also for modules with parameters, where ``"aot_eager"`` raises
  ``NotImplementedError`` like inductor). ``mode=``/``options=`` belong to inductor and are dropped.
- ``ReverseModeJacobian``: ``jacobian(..., strategy="reverse-mode")`` without ``vectorize=True``
  (vectorized reverse mode over a compiled function fails with "Cannot access data pointer of
  Tensor that doesn't have storage", torch 2.13; found by the runtime tests).
"""

from __future__ import annotations

import libcst as cst

from ..core.plans import (
    BackendEdit,
    CallUncompiled,
    CompileSite,
    CompileWithBackend,
    ReverseModeJacobian,
    string_literal,
)
from ..knowledge import torch_api as api
from ..knowledge.effects import Effect
from .parsed import ParsedModule, dotted
from .source import Sources
from .transform import Op, PlanError, Replace

_INDUCTOR_ONLY = ("mode", "options")


def _parsed(sources: Sources, display: str) -> ParsedModule:
    parsed = sources.parsed(display)
    if parsed is None:
        raise PlanError(f"{display} cannot be edited")
    return parsed


def _call(parsed: ParsedModule, location) -> cst.Call:  # type: ignore[no-untyped-def]
    found = parsed.nodes_at(location, cst.Call)
    if not found:
        raise PlanError("the call is not where the analysis saw it")
    return found[0]  # type: ignore[return-value]


# -- calling the uncompiled callable ---------------------------------------------------------------


def uncompiled_ops(plan: CallUncompiled, sources: Sources) -> list[Op]:
    parsed = _parsed(sources, plan.call.path)
    call = _call(parsed, plan.call)
    func = call.func
    site = parsed.positions.get(func)
    inline = (
        isinstance(func, cst.Call)
        and site is not None
        and plan.compile_site.path == plan.call.path
        and (site.start.line, site.start.column + 1) == (plan.compile_site.line, plan.compile_site.column)
    )
    if inline:
        assert isinstance(func, cst.Call)
        original = func.args[0].value if func.args and func.args[0].keyword is None and not func.args[0].star else None
        if original is None or dotted(original) is None:
            raise PlanError("the compiled callable is not a name")
    else:
        callee = dotted(func)
        if callee is None:
            raise PlanError("the callee is not a name")
        bound = _bound_name(_parsed(sources, plan.compile_site.path), plan.compile_site)
        if bound is None or bound.split(".")[-1] != callee.split(".")[-1]:
            raise PlanError("the callee is not what the compile statement binds")

    attribute = (api.ORIGINAL_MODULE if plan.module else api.ORIGINAL_FUNCTION).name

    def build(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        func = node.func
        if inline:
            assert isinstance(func, cst.Call)
            return node.with_changes(func=func.args[0].value)
        return node.with_changes(func=cst.Attribute(value=func, attr=cst.Name(attribute)))

    return [Replace(plan.call.path, call, build, ("uncompiled", plan))]


def _bound_name(parsed: ParsedModule, site) -> str | None:  # type: ignore[no-untyped-def]
    """The name the compile statement at ``site`` binds: ``f`` in ``f = torch.compile(g)`` (also
    ``self.model = ...``), ``f`` of ``@torch.compile`` / ``@torch.compile(...)`` on ``def f``."""
    for node in parsed.nodes_at(site, cst.Call):
        parent = parsed.parent(node)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            return dotted(parent.targets[0].target)
        if isinstance(parent, cst.AnnAssign) and parent.value is node:
            return dotted(parent.target)
        if isinstance(parent, cst.Decorator):
            definition = parsed.parent(parent)
            if isinstance(definition, cst.FunctionDef):
                return definition.name.value
    for node in parsed.nodes_at(site, cst.Name):
        definition = parsed.parent(node)
        if isinstance(definition, cst.FunctionDef) and definition.name is node:
            return definition.name.value
    return None


# -- compiling with another backend ----------------------------------------------------------------


#: The keyword ``torch.compile`` (and ``optimize``) take the backend by.
_BACKEND = api.BACKEND_ARGUMENTS[Effect.COMPILE][0]


def _keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(
        value=value,
        keyword=cst.Name(name),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )


def _with_backend(call: cst.Call, backend: str, positional: bool) -> cst.Call:
    """``call`` with ``backend=<backend>`` (or its first positional argument, for ``optimize``),
    without inductor's ``mode=``/``options=``; commas and line breaks as the call had them."""
    value = cst.SimpleString(string_literal(backend))
    args = list(call.args)
    for index, arg in enumerate(args):
        if arg.keyword is not None and arg.keyword.value == _BACKEND:
            args[index] = arg.with_changes(value=value)
            return call.with_changes(args=args)
    if positional:
        if args and args[0].keyword is None and not args[0].star:
            args[0] = args[0].with_changes(value=value)
            return call.with_changes(args=args)
        return call.with_changes(
            args=[
                cst.Arg(
                    value=value,
                    comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if args else cst.MaybeSentinel.DEFAULT,
                ),
                *args,
            ]
        )
    trailing = args[-1].comma if args else cst.MaybeSentinel.DEFAULT
    between = [arg.comma for arg in args[:-1] if isinstance(arg.comma, cst.Comma)]
    if between:
        separator = between[0]
    elif isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):  # one argument per line
        separator = cst.Comma(whitespace_after=call.whitespace_before_args)
    else:
        separator = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    kept = [arg for arg in args if not (arg.keyword is not None and arg.keyword.value in _INDUCTOR_ONLY)]
    if kept:
        kept[-1] = kept[-1].with_changes(comma=separator)
    return call.with_changes(args=[*kept, _keyword(_BACKEND, value).with_changes(comma=trailing)])


def backend_ops(plan: CompileWithBackend, sources: Sources) -> list[Op]:
    return [_backend_op(compiled, plan.backend, sources) for compiled in plan.sites]


def _backend_op(compiled: CompileSite, backend: str, sources: Sources) -> Op:
    if compiled.edit is None:
        raise PlanError(f"no fix knows where {compiled.spelling} takes its backend")
    parsed = _parsed(sources, compiled.site.path)
    if compiled.edit is BackendEdit.BARE_DECORATOR:
        return _bare_decorator(parsed, compiled, backend)
    calls = parsed.nodes_at(compiled.site, cst.Call)
    if not calls:
        raise PlanError("the compile call is not where the analysis saw it")
    call = calls[0]
    positional = compiled.edit is BackendEdit.POSITIONAL

    def build(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        return _with_backend(node, backend, positional)

    return Replace(compiled.site.path, call, build, ("backend", backend))


def _bare_decorator(parsed: ParsedModule, compiled: CompileSite, backend: str) -> Op:
    """``@torch.compile`` (any alias of it) on the function named at the site becomes
    ``@torch.compile(backend="eager")``."""
    definitions = [parsed.parent(n) for n in parsed.nodes_at(compiled.site, cst.Name)]
    definition = next((d for d in definitions if isinstance(d, cst.FunctionDef)), None)
    if definition is None:
        raise PlanError("the compiled function is not where the analysis saw it")
    names = parsed.qualified_names
    found = [
        decorator
        for decorator in definition.decorators
        if not isinstance(decorator.decorator, cst.Call)
        and any(q.name == "torch.compile" for q in _qualified(names.get(decorator.decorator)))
    ]
    if len(found) != 1:
        raise PlanError("no single @torch.compile decorator")
    expression = found[0].decorator

    def build(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.BaseExpression)
        value = cst.SimpleString(string_literal(backend))
        return cst.Call(func=node, args=[_keyword(_BACKEND, value)])

    return Replace(compiled.site.path, expression, build, ("backend", backend))


def _qualified(value: object) -> set:
    """A QualifiedNameProvider value (LibCST computes them lazily)."""
    if value is None:
        return set()
    return value() if callable(value) else value  # type: ignore[return-value]


# -- reverse-mode jacobian -------------------------------------------------------------------------


def reverse_mode_ops(plan: ReverseModeJacobian, sources: Sources) -> list[Op]:
    parsed = _parsed(sources, plan.call.path)
    call = _call(parsed, plan.call)
    strategy = [arg for arg in call.args if arg.keyword is not None and arg.keyword.value == "strategy"]
    if (
        len(strategy) != 1
        or not isinstance(strategy[0].value, cst.SimpleString)
        or strategy[0].value.evaluated_value != "forward-mode"
    ):
        raise PlanError('no strategy="forward-mode" keyword to change')
    old = strategy[0].value
    quote = old.quote
    new_value = old.with_changes(value=f"{old.prefix}{quote}reverse-mode{quote}")

    def build(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        args = [
            arg.with_changes(value=new_value) if arg.keyword is not None and arg.keyword.value == "strategy" else arg
            for arg in node.args
        ]
        return _without_keyword(node.with_changes(args=args), "vectorize")

    return [Replace(plan.call.path, call, build, ("reverse-mode",))]


def _without_keyword(call: cst.Call, name: str) -> cst.Call:
    """``call`` without the keyword argument ``name``; the last argument keeps the call's trailing comma style."""
    args = list(call.args)
    for index, arg in enumerate(args):
        if arg.keyword is not None and arg.keyword.value == name:
            if index == len(args) - 1 and index > 0:
                args[index - 1] = args[index - 1].with_changes(comma=arg.comma)
            del args[index]
            return call.with_changes(args=args)
    return call
