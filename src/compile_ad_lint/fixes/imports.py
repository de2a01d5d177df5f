"""Names a fix writes, and the imports it adds for them (once per file, after the leading imports).

A fix that writes ``torch._functorch.config.patch(...)`` reuses the file's own alias of that module
(``import torch._functorch.config as fc``, ``from torch._functorch import config``) when the alias
means that module everywhere the fix writes it (no local variable shadows it); otherwise it adds
``import torch._functorch.config`` (``import torch`` alone does not load it) and spells the module
in full. ``torch.bfloat16`` needs ``torch`` to be the torch package there, likewise.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.metadata import GlobalScope, ImportAssignment

from .parsed import ParsedModule, dotted
from .transform import AfterImports, PlanError

CONFIG_MODULE = "torch._functorch.config"
CONFIG_IMPORT = f"import {CONFIG_MODULE}"


def config_imports(parsed: ParsedModule) -> dict[str, list[cst.CSTNode]]:
    """Module-level names bound to ``torch._functorch.config``, with the import statements that bind them."""
    found: dict[str, list[cst.CSTNode]] = {}
    for statement in parsed.module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    if dotted(alias.name) != CONFIG_MODULE:
                        continue
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        found.setdefault(alias.asname.name.value, []).append(small)
                    elif alias.asname is None:
                        found.setdefault(CONFIG_MODULE, []).append(small)
            elif isinstance(small, cst.ImportFrom) and not small.relative:
                if (
                    small.module is None
                    or dotted(small.module) != "torch._functorch"
                    or isinstance(small.names, cst.ImportStar)
                ):
                    continue
                for alias in small.names:
                    if isinstance(alias.name, cst.Name) and alias.name.value == "config":
                        name = (
                            alias.asname.name.value
                            if alias.asname is not None and isinstance(alias.asname.name, cst.Name)
                            else "config"
                        )
                        found.setdefault(name, []).append(small)
    return found


def module_imports(parsed: ParsedModule, name: str) -> tuple[tuple[str, int, int], ...] | None:
    """The module-level import statements that bind ``name``, as (``import`` or ``from``, line,
    column), when nothing else binds it anywhere in the file (``ParsedModule.bindings``): then
    ``name`` means these imports in every scope. None when something else may bind it: LibCST's
    scope analysis decides (several times the cost of parsing the file)."""
    bindings = parsed.bindings
    if bindings is None:
        return None
    found = bindings.get(name, ())
    return None if any(kind == "other" for kind, _, _ in found) else found


def only_these_imports(
    parsed: ParsedModule, found: Sequence[tuple[str, int, int]], allowed: Sequence[cst.CSTNode] | None
) -> bool:
    """Whether each of the imports ``found`` (``module_imports``) is one of the ``allowed``
    statements, or an ``import`` statement when ``allowed`` is None."""
    if allowed is None:
        return all(kind == "import" for kind, _, _ in found)
    starts = {(parsed.positions[node].start.line, parsed.positions[node].start.column) for node in allowed}
    return all((line, column) in starts for _, line, column in found)


def _binds(
    parsed: ParsedModule, uses: Sequence[cst.CSTNode], name: str, allowed: Sequence[cst.CSTNode] | None
) -> bool | None:
    """Whether ``name`` at every node of ``uses`` is bound only by imports (``allowed`` ones, or any
    ``import torch...`` when None). None: unbound everywhere (an import may add it)."""
    found = module_imports(parsed, name)
    if found is not None and all(use in parsed.positions for use in uses):
        if not found:
            return None
        first_use = min(parsed.positions[use].start.line for use in uses)
        if all(line < first_use for _, line, _ in found):  # bound before every use, in whatever scope
            return only_these_imports(parsed, found, allowed)
    unbound = True
    for use in uses:
        scope = parsed.scopes.get(use)
        if scope is None:
            return False
        assignments = scope[name]  # type: ignore[index]
        if not assignments:
            continue
        unbound = False
        if isinstance(scope, GlobalScope) and use in parsed.positions:
            # At module level an import binds only the statements after it.
            line = parsed.positions[use].start.line
            if not any(a.node in parsed.positions and parsed.positions[a.node].start.line < line for a in assignments):
                return False
        for assignment in assignments:
            if not isinstance(assignment, ImportAssignment):
                return False
            if allowed is not None and assignment.node not in allowed:
                return False
            if allowed is None and not isinstance(assignment.node, cst.Import):
                return False
    return None if unbound else True


def config_module(parsed: ParsedModule, uses: Sequence[cst.CSTNode], display: str) -> tuple[str, list[AfterImports]]:
    """How to spell ``torch._functorch.config`` at ``uses``, and the imports that needs."""
    for name, statements in sorted(
        config_imports(parsed).items(), key=lambda item: (item[0] == CONFIG_MODULE, item[0])
    ):
        root = name.split(".")[0]
        if name == CONFIG_MODULE:
            if _binds(parsed, uses, "torch", None):
                return CONFIG_MODULE, []
        elif _binds(parsed, uses, root, statements):
            return name, []
    if _binds(parsed, uses, "torch", None) is False:
        raise PlanError("`torch` is not the torch package where the fix would use it")
    return CONFIG_MODULE, [AfterImports(display, CONFIG_IMPORT)]


def torch_name(
    parsed: ParsedModule, uses: Sequence[cst.CSTNode], display: str, config_spelling: str, imports: list[AfterImports]
) -> list[AfterImports]:
    """The imports (added to ``imports``) that make ``torch`` the torch package at ``uses``."""
    bound = _binds(parsed, uses, "torch", None)
    if bound is False:
        raise PlanError("`torch` is not the torch package where the fix would use it")
    if bound is None and not any(i.statement == CONFIG_IMPORT for i in imports) and config_spelling != CONFIG_MODULE:
        return [*imports, AfterImports(display, "import torch")]
    return imports
