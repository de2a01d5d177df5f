"""The package's import graph, read from the sources without importing anything.

Every ``import`` and ``from ... import`` counts, at module level or inside a function (an import
deferred into a function still ties the two modules together), and so does the package
``__init__`` each import runs on the way (``from ..fixes.plans import X`` runs ``fixes/__init__``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PACKAGE = "compile_ad_lint"
SOURCE = Path(__file__).resolve().parents[2] / "src" / PACKAGE


@dataclass(frozen=True)
class Module:
    #: Dotted name under the package: ``linking.values``; ``""`` is the package itself.
    name: str
    path: Path

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"

    @property
    def package(self) -> str:
        """The package relative imports start from."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int
    #: The names taken from ``imported`` (``from x import a, b``); empty for ``import x``.
    names: tuple[str, ...] = ()


@cache
def modules() -> dict[str, Module]:
    found = {}
    for path in sorted(SOURCE.rglob("*.py")):
        parts = list(path.relative_to(SOURCE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = Module(".".join(parts), path)
    return found


@cache
def tree(name: str) -> ast.Module:
    return ast.parse(modules()[name].path.read_text(encoding="utf-8"))


def _absolute(module: Module, node: ast.ImportFrom) -> str | None:
    """The dotted name (under the package) an import names, or None when it is not the package's."""
    if node.level == 0:
        written = node.module or ""
        if written != PACKAGE and not written.startswith(PACKAGE + "."):
            return None
        return written[len(PACKAGE) + 1 :]
    base = module.package.split(".") if module.package else []
    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
    return ".".join([*base, *([node.module] if node.module else [])])


def direct_imports(name: str) -> Iterator[Import]:
    """The imports written in module ``name``, each resolved to the module it loads."""
    known = modules()
    module = known[name]
    for node in ast.walk(tree(name)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE + "."):
                    yield Import(name, alias.name[len(PACKAGE) + 1 :], node.lineno)
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(module, node)
            if target is None:
                continue
            plain = []
            for alias in node.names:
                submodule = f"{target}.{alias.name}" if target else alias.name
                if submodule in known:  # ``from . import values``: the submodule itself
                    yield Import(name, submodule, node.lineno)
                else:
                    plain.append(alias.name)
            if plain or not node.names:
                yield Import(name, target, node.lineno, tuple(plain))


def _ancestors(name: str) -> Iterator[str]:
    """The packages importing ``name`` runs first, the package itself left out (every module runs it)."""
    parts = name.split(".")
    for end in range(1, len(parts)):
        yield ".".join(parts[:end])


def loads(item: Import) -> Iterator[str]:
    """The modules an import runs: the packages above the imported module (not the importer's own)
    and the module itself."""
    known = modules()
    for target in (*_ancestors(item.imported), item.imported):
        if target in known and target != item.importer and not item.importer.startswith(target + "."):
            yield target


@cache
def graph(leaving_out: frozenset[tuple[str, str]] = frozenset()) -> dict[str, frozenset[str]]:
    """Module -> the modules importing it loads, without the imports ``leaving_out`` names as
    ``(importer, imported)``."""
    edges: dict[str, set[str]] = {name: set() for name in modules()}
    for name in edges:
        for item in direct_imports(name):
            if (name, item.imported) not in leaving_out:
                edges[name].update(loads(item))
    return {name: frozenset(targets) for name, targets in edges.items()}


def cycles(edges: dict[str, frozenset[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:
        nonlocal counter
        # Iterative: the graph is small, but recursion depth is not ours to assume.
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = counter
                    counter += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges[successor]))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for name in sorted(edges):
        if name not in index:
            visit(name)
    return sorted(found)


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_module_owner(name: str) -> str | None:
    """For a module with a private part (``confirm._child``), the package that may import it."""
    parts = name.split(".")
    for end, part in enumerate(parts):
        if is_private(part):
            return ".".join(parts[:end])
    return None


@dataclass(frozen=True)
class Reach:
    """A use in ``module`` (at ``line``) of a private name that ``owner`` defines."""

    module: str
    owner: str
    name: str
    line: int

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.module, self.owner, self.name)


@cache
def defined_private_names(name: str) -> frozenset[str]:
    """Private names module ``name`` defines: functions, classes, and names or attributes it assigns."""
    found: set[str] = set()
    for node in ast.walk(tree(name)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            found.add(node.attr)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
    return frozenset(n for n in found if is_private(n))


def _module_aliases(name: str) -> dict[str, str]:
    """Local names bound to a module of the package by an import in module ``name``."""
    known = modules()
    aliases: dict[str, str] = {}
    module = known[name]
    for node in ast.walk(tree(name)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name.startswith(PACKAGE + "."):
                    aliases[alias.asname] = alias.name[len(PACKAGE) + 1 :]
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(module, node)
            if target is None:
                continue
            for alias in node.names:
                submodule = f"{target}.{alias.name}" if target else alias.name
                if submodule in known:
                    aliases[alias.asname or alias.name] = submodule
    return aliases


def private_reaches() -> list[Reach]:
    """Every place a module uses another module's private name: imports it (``from x import _y``),
    imports a private module from outside its package, reads it from a module (``x._y``), or reads
    an attribute (``interp._globals``) that only another module defines (``self`` and ``cls`` are a
    class's own business)."""
    known = modules()
    owners: dict[str, set[str]] = {}
    for other in known:
        for private in defined_private_names(other):
            owners.setdefault(private, set()).add(other)
    found: list[Reach] = []
    for name in known:
        for item in direct_imports(name):
            owner = private_module_owner(item.imported)
            if owner is not None and not (name == owner or name.startswith(owner + ".") or owner == ""):
                found.append(Reach(name, item.imported, item.imported.rpartition(".")[2], item.line))
            found += [Reach(name, item.imported, n, item.line) for n in item.names if is_private(n)]
        aliases = _module_aliases(name)
        own = defined_private_names(name)
        for node in ast.walk(tree(name)):
            if not isinstance(node, ast.Attribute) or not is_private(node.attr):
                continue
            base = node.value
            if isinstance(base, ast.Name) and base.id in aliases:
                found.append(Reach(name, aliases[base.id], node.attr, node.lineno))
                continue
            if isinstance(base, ast.Name) and base.id in ("self", "cls"):
                continue
            if isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id == "super":
                continue
            if node.attr in own:
                continue
            others = sorted(owners.get(node.attr, ()))
            if others:
                found.append(Reach(name, others[0], node.attr, node.lineno))
    return found
