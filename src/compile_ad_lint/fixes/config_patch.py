"""CAL002's fixes: the config that matches the real backward, at the compiled calls or for the module.

``WrapInConfigPatch`` (safe) wraps the statement of each compiled call, or the smallest run of
statements of one function body that holds all of a file's, in
``with torch._functorch.config.patch(backward_pass_autocast=<value>):``. The config is read when the
compiled backward is traced, at the call, so the ``with`` needs to hold only the call: the backward
itself stays where it is. A call is wrapped only where the ``with`` runs exactly when the call does:
in a simple statement of a block (not in a lambda, a generator expression, a decorator or the header
of an ``if``/``for``/``with``), and the run never takes in another compiled call (``avoid``).

``SetConfigAtModuleLevel`` (unsafe) sets the config once after the module's imports.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import GlobalScope, ImportAssignment

from ..core.locations import Location
from ..core.plans import SetConfigAtModuleLevel, WrapInConfigPatch, config_source
from .imports import (
    CONFIG_IMPORT,
    CONFIG_MODULE,
    config_imports,
    config_module,
    module_imports,
    only_these_imports,
    torch_name,
)
from .parsed import ParsedModule
from .source import Sources
from .transform import AfterImports, Op, PlanError, Wrap, leading_import_count

#: Nodes a call may not be inside for a ``with`` around its statement to run when the call does.
_DEFERRED = (cst.Lambda, cst.GeneratorExp, cst.FunctionDef, cst.ClassDef, cst.Decorator)


@dataclass(frozen=True)
class _Step:
    block: cst.CSTNode  # a Module or IndentedBlock
    index: int  # of the statement in block.body


def call_node(parsed: ParsedModule, location: Location) -> cst.Call:
    found = parsed.nodes_at(location, cst.Call)
    if not found:
        raise PlanError(f"no call at {location.path}:{location.line}:{location.column}")
    return found[0]  # type: ignore[return-value]


def statement_path(parsed: ParsedModule, node: cst.CSTNode) -> tuple[cst.CSTNode, list[_Step]]:
    """The scope (function, class or module) the call runs in, and the statements holding it, from
    that scope's body down to the call's simple statement."""
    ancestors = parsed.ancestors(node)
    line_at = next((i for i, a in enumerate(ancestors) if isinstance(a, cst.SimpleStatementLine)), None)
    if line_at is None or any(
        isinstance(a, (*_DEFERRED, cst.BaseCompoundStatement, cst.SimpleStatementSuite)) for a in ancestors[:line_at]
    ):
        raise PlanError("the call is not in a statement of its own that runs when the call does")
    steps: list[_Step] = []
    child = ancestors[line_at]
    for parent in ancestors[line_at + 1 :]:
        if isinstance(parent, (cst.Module, cst.IndentedBlock)) and child in parent.body:
            steps.append(_Step(parent, list(parent.body).index(child)))  # type: ignore[arg-type]
            if isinstance(parent, cst.Module):
                return parent, steps[::-1]
        elif isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return parent, steps[::-1]
        if isinstance(parent, cst.BaseStatement):
            child = parent
    raise PlanError("the call's statement has no enclosing block")


def wrap_ops(plan: WrapInConfigPatch, sources: Sources) -> list[Op]:
    ops: list[Op] = []
    by_file: dict[str, list[Location]] = {}
    for call in plan.calls:
        by_file.setdefault(call.path, []).append(call)
    for display, calls in sorted(by_file.items()):
        parsed = sources.parsed(display)
        if parsed is None:
            raise PlanError(f"{display} cannot be edited")
        nodes = [call_node(parsed, call) for call in calls]
        avoided = []
        for location in plan.avoid:
            if location.path == display:
                found = parsed.nodes_at(location, cst.Call)
                if found:
                    avoided.append(statement_path(parsed, found[0]) if _in_statement(parsed, found[0]) else None)
        scopes: dict[cst.CSTNode, list[list[_Step]]] = {}
        for node in nodes:
            scope, steps = statement_path(parsed, node)
            scopes.setdefault(scope, []).append(steps)
        spelling, imports = config_module(parsed, nodes, display)
        if not isinstance(plan.value, str):
            imports = torch_name(parsed, nodes, display, spelling, imports)
        item = f"{spelling}.patch(backward_pass_autocast={config_source(plan.value)})"
        for scope, paths in scopes.items():
            for block, first, last in _ranges(scope, paths, [a for a in avoided if a is not None and a[0] is scope]):
                ops.append(Wrap(display, block, first, last, item))
        ops += imports
    return ops


def _in_statement(parsed: ParsedModule, node: cst.CSTNode) -> bool:
    try:
        statement_path(parsed, node)
    except PlanError:
        return False
    return True


def _ranges(
    scope: cst.CSTNode, paths: list[list[_Step]], avoided: list[tuple[cst.CSTNode, list[_Step]]]
) -> list[tuple[cst.CSTNode, int, int]]:
    """One run of statements of the deepest block holding every call; each call's own statement
    when that run would also hold an avoided call (one on a flagged call's line: no fix)."""
    depth = 0
    while (
        all(len(p) > depth for p in paths)
        and len({p[depth].block for p in paths}) == 1
        and len({p[depth].index for p in paths}) == 1
    ):
        depth += 1
    if all(len(p) > depth for p in paths) and len({p[depth].block for p in paths}) == 1:
        block = paths[0][depth].block
        first, last = min(p[depth].index for p in paths), max(p[depth].index for p in paths)
    else:  # one line, or different branches of one statement: that statement
        block, first = paths[0][depth - 1].block, paths[0][depth - 1].index
        last = first
    if not any(step.block is block and first <= step.index <= last for _, steps in avoided for step in steps):
        return [(block, first, last)]
    ranges = []
    for path in paths:
        step = path[-1]
        if any(steps and steps[-1] == step for _, steps in avoided):
            raise PlanError("another compiled call is on the same line")
        if (step.block, step.index, step.index) not in ranges:
            ranges.append((step.block, step.index, step.index))
    return ranges


def module_level_ops(plan: SetConfigAtModuleLevel, sources: Sources) -> list[Op]:
    parsed = sources.parsed(plan.path)
    if parsed is None:
        raise PlanError(f"{plan.path} cannot be edited")
    module = parsed.module
    at = leading_import_count(module)
    leading = {small for statement in module.body[:at] for small in getattr(statement, "body", ())}
    spelling, imports = None, []
    for name, statements in sorted(config_imports(parsed).items()):
        root = name.split(".")[0]
        if name != CONFIG_MODULE and all(s in leading for s in statements) and _only_imports(parsed, root, statements):
            spelling = name
            break
    if spelling is None:
        if not _only_imports(parsed, "torch", None):
            raise PlanError("`torch` is not the torch package at module level")
        spelling = CONFIG_MODULE
        if not any(
            isinstance(s, cst.Import)
            and any(cst.Module([]).code_for_node(a.name) == CONFIG_MODULE and a.asname is None for a in s.names)
            for s in leading
        ):
            imports.append(AfterImports(plan.path, CONFIG_IMPORT))
    elif not isinstance(plan.value, str):
        if not _only_imports(parsed, "torch", None):
            raise PlanError("`torch` is not the torch package at module level")
        if not _bound_at_module_level(parsed, "torch"):
            imports.append(AfterImports(plan.path, "import torch"))
    statement = f"{spelling}.backward_pass_autocast = {config_source(plan.value)}"
    return [*imports, AfterImports(plan.path, statement, separate=True)]


def _module_scope(parsed: ParsedModule) -> object:
    return parsed.scopes.get(parsed.module.body[0]) if parsed.module.body else None


def _only_imports(parsed: ParsedModule, name: str, statements: list[cst.CSTNode] | None) -> bool:
    """Whether module-level ``name`` is bound by nothing but imports (``statements``, or any
    ``import ...`` when None)."""
    found = module_imports(parsed, name)
    if found is not None:
        return only_these_imports(parsed, found, statements)
    scope = _module_scope(parsed)
    if not isinstance(scope, GlobalScope):
        return scope is None
    for assignment in scope[name]:
        if not isinstance(assignment, ImportAssignment):
            return False
        if statements is not None and assignment.node not in statements:
            return False
        if statements is None and not isinstance(assignment.node, cst.Import):
            return False
    return True


def _bound_at_module_level(parsed: ParsedModule, name: str) -> bool:
    found = module_imports(parsed, name)
    if found is not None:
        return bool(found)
    scope = _module_scope(parsed)
    return scope is not None and bool(scope[name])  # type: ignore[index]
