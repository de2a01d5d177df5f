"""A file as fixes edit it: its LibCST module with positions of the statements a fix asks about
(``positions.py``), parents along the paths it asks about, and scopes only where the ``ast`` table
of imports cannot answer.

Kept apart from ``source.py`` so that a report whose fix edits all come from the cache (a warm
``--format json``/``sarif`` run) never imports LibCST: a third of that run's time.
"""

from __future__ import annotations

import ast
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property

import libcst as cst
from libcst.metadata import CodePosition, MetadataWrapper, ScopeProvider

from ..core.locations import Location
from ..core.text import split_lines
from ..summary.outline import parse_module
from .positions import Positions


def dotted(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a name or a chain of attributes on one, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr.value}" if base is not None else None
    return None


class _Wrapper(MetadataWrapper):
    """LibCST's wrapper, less an empty visit: resolving a provider that is not batchable (positions)
    ends with a batched visit of the whole tree with no visitor in it, as long as the codegen."""

    def visit_batched(self, visitors, before_visit=None, after_leave=None):  # type: ignore[no-untyped-def]
        visitors = list(visitors)
        if not visitors and before_visit is None and after_leave is None:
            return self.module
        return super().visit_batched(visitors, before_visit, after_leave)


class ParsedModule:
    """One file's LibCST module with positions (parents on request, scopes when first asked)."""

    def __init__(self, display: str, data: bytes) -> None:
        self.display = display
        self.data = data
        # The module was just parsed and is ours alone: no defensive deep copy (a fifth of the cost).
        self.wrapper = _Wrapper(cst.parse_module(data), unsafe_skip_copy=True)
        self.module = self.wrapper.module
        # What LibCST parsed: the bytes decoded as it decodes them, which its code generation
        # reproduces exactly (``Module.code`` would render the whole file again to say so).
        self.text = data.decode(self.module.encoding)
        self.positions = Positions(self.wrapper, self.text, lambda: self.lines[1], lambda: self.syntax_tree)
        #: Parents found so far (``parent``), None for a node that is not in the module.
        self._parents: dict[cst.CSTNode, cst.CSTNode | None] = {}

    @cached_property
    def scopes(self) -> Mapping[cst.CSTNode, object]:
        return self.wrapper.resolve(ScopeProvider)

    def encode(self, text: str) -> bytes:
        """A transformed module's text as bytes, in the file's own encoding (``Module.bytes``)."""
        return text.encode(self.module.encoding)

    @cached_property
    def lines(self) -> tuple[list[str], list[int]]:
        """The text's lines (with their ends) and the offset where each starts (one past the end last)."""
        lines = split_lines(self.text)
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line))
        return lines, starts

    @cached_property
    def syntax_tree(self) -> ast.Module | None:
        """The text LibCST parsed, parsed by ``ast`` (the same lines: no BOM, no cookie); None
        when ``ast`` rejects it."""
        tree = parse_module(self.text)
        return tree if isinstance(tree, ast.Module) else None

    @cached_property
    def qualified_names(self) -> Mapping[cst.CSTNode, object]:
        from libcst.metadata import QualifiedNameProvider

        return self.wrapper.resolve(QualifiedNameProvider)

    def nodes_at(self, location: Location, *kinds: type) -> list[cst.CSTNode]:
        """Nodes of ``kinds`` whose span is exactly ``location``'s (``Location`` columns are
        1-based, LibCST's 0-based; both ends exclusive, parentheses around a node excluded)."""
        end = (location.end_line, location.end_column - 1)
        return [
            node
            for node, span in self.positions.starting_at(location.line, location.column - 1)
            if isinstance(node, kinds) and (span.end.line, span.end.column) == end
        ]

    def nodes_starting_at(self, location: Location, *kinds: type) -> list[cst.CSTNode]:
        """Nodes of ``kinds`` that start where ``location`` does, outermost first."""
        found = [
            (node, span)
            for node, span in self.positions.starting_at(location.line, location.column - 1)
            if isinstance(node, kinds)
        ]
        found.sort(key=lambda item: (item[1].end.line, item[1].end.column), reverse=True)
        return [node for node, _ in found]

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """``node``'s parent; None for the module and for a node that is not in it."""
        if node not in self._parents:
            self._trace(node)
        return self._parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """``node``'s parents, nearest first, up to the module."""
        chain = []
        parent = self.parent(node)
        while parent is not None:
            chain.append(parent)
            parent = self.parent(parent)
        return chain

    def _trace(self, target: cst.CSTNode) -> None:
        """Record the parents on the path from the module down to ``target``, descending only into
        children whose extent holds ``target``'s. LibCST nodes keep no parent links, and
        ``ParentNodeProvider`` visits every node of the file (the costliest part of building a fix
        on a large file) where a fix asks about a few paths a few dozen nodes long. The search
        starts at the statement whose positions were rendered with ``target``'s, whose parents are
        known."""
        span = None if target is self.module else self.positions.get(target)
        if span is None:
            self._parents[target] = None
            return
        holder = self.positions.holder(target)
        top, above = holder if holder is not None else (self.module, ())
        chain = (*above, top)
        if target is top:
            self._record(chain)
            return
        start, end = _at(span.start), _at(span.end)

        def children_holding(node: cst.CSTNode) -> Sequence[cst.CSTNode] | None:
            """``node``'s children when its extent holds ``target``'s span, else None."""
            children = node.children
            extent = self._extent(node, children)
            return children if extent is not None and extent[0] <= start and end <= extent[1] else None

        # Depth first, without recursion (deeply nested expressions); siblings may share an edge.
        # Should the extents ever miss (a node placed outside its parent's extent), every child is
        # searched the second time round.
        for children_of in (children_holding, lambda node: node.children):
            stack: list[tuple[cst.CSTNode, Iterator[cst.CSTNode]]] = [(top, iter(top.children))]
            while stack:
                node, children = stack[-1]
                child = next(children, None)
                if child is None:
                    stack.pop()
                elif child is target:
                    self._record((*above, *(n for n, _ in stack), target))
                    return
                else:
                    inside = children_of(child)
                    if inside is not None:
                        stack.append((child, iter(inside)))
        self._parents[target] = None

    def _record(self, chain: Sequence[cst.CSTNode]) -> None:
        """The parents along ``chain`` (from the module down), written once the path is complete:
        the language server's fix and request threads may share a module, and neither may see a
        parent half found."""
        for parent, below in zip(chain, chain[1:]):
            self._parents[below] = parent

    def _extent(
        self, node: cst.CSTNode, children: Sequence[cst.CSTNode] | None = None
    ) -> tuple[tuple[int, int], tuple[int, int]] | None:
        """Where ``node`` and everything in it lie: its span, widened to its children's (``children``
        when the caller has them). LibCST's spans leave out some of a node's own children: a
        definition's decorators, a class's body, parentheses, a parameter's name."""
        span = self.positions.get(node)
        if span is None:
            return None
        inside = node.children if children is None else children
        spans = [span, *(self.positions[child] for child in inside if child in self.positions)]
        return min(_at(s.start) for s in spans), max(_at(s.end) for s in spans)

    @cached_property
    def bindings(self) -> Mapping[str, tuple[tuple[str, int, int], ...]] | None:
        """Every binding of each name anywhere in the file, as (kind, line, column) of the statement
        (1-based line, 0-based column in characters, as ``positions``): kind ``import`` or
        ``from`` for an import statement at module level, ``other`` for anything else (an
        assignment, a parameter, a definition, an import inside a function or class, ``global``,
        ``del``). None when the file has a star import or ``ast`` rejects it.

        Read with the standard ``ast`` (in C, a fraction of the cost of LibCST's scope analysis):
        a name that only module-level imports bind means the same everywhere in the file, which
        answers the fixes' question "is ``torch`` the torch package here" without ``scopes``."""
        tree = self.syntax_tree
        if tree is None:
            return None
        found: dict[str, list[tuple[str, int, int]]] = {}
        lines = self.lines[0]
        # (node, module level): statements directly in the module, or in its if/try/with/for
        # blocks, bind module-level names; a def, class or lambda opens a scope of its own.
        stack: list[tuple[ast.AST, bool]] = [(tree, True)]
        while stack:
            node, module_level = stack.pop()
            inner = module_level
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                kind = ("import" if isinstance(node, ast.Import) else "from") if module_level else "other"
                if node.lineno > len(lines):
                    return None  # ``split_lines`` and the tokenizer disagree: let the scopes answer
                # ``ast`` columns count UTF-8 bytes.
                column = len(lines[node.lineno - 1].encode("utf-8")[: node.col_offset].decode("utf-8", "replace"))
                for alias in node.names:
                    if alias.name == "*":
                        return None
                    name = alias.asname or (alias.name.split(".")[0] if isinstance(node, ast.Import) else alias.name)
                    found.setdefault(name, []).append((kind, node.lineno, column))
            else:
                for name in _bound_names(node):
                    found.setdefault(name, []).append(("other", getattr(node, "lineno", 0), 0))
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                    inner = False
            stack.extend((child, inner) for child in ast.iter_child_nodes(node))
        return {name: tuple(kinds) for name, kinds in found.items()}


def _at(position: CodePosition) -> tuple[int, int]:
    return position.line, position.column


def _bound_names(node: ast.AST) -> list[str]:
    """The names ``node`` binds itself, other than by an import statement."""
    if isinstance(node, ast.Name):
        return [node.id] if isinstance(node.ctx, (ast.Store, ast.Del)) else []
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return list(node.names)
    if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
        return [node.name] if node.name else []
    if isinstance(node, ast.MatchMapping):
        return [node.rest] if node.rest else []
    name = getattr(node, "name", None)  # type parameters (Python 3.12)
    return [name] if isinstance(name, str) and type(node).__name__ in _TYPE_PARAMETERS else []


_TYPE_PARAMETERS = frozenset({"TypeVar", "ParamSpec", "TypeVarTuple"})


class _ParsedModules:
    """The LibCST modules parsed lately, by display path and content (an LRU holding at most
    ``budget`` bytes of source): the language server builds fixes after every edit, and a CAL002
    fix reads every file holding one of the compiled calls, most of which did not change."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._modules: OrderedDict[tuple[str, str], ParsedModule] = OrderedDict()
        self._size = 0

    def get(self, display: str, data: bytes, digest: str) -> ParsedModule:
        key = (display, digest)
        found = self._modules.get(key)
        if found is not None:
            self._modules.move_to_end(key)
            return found
        found = self._modules[key] = ParsedModule(display, data)
        self._size += len(data)
        while self._size > self.budget and len(self._modules) > 1:
            _, dropped = self._modules.popitem(last=False)
            self._size -= len(dropped.data)
        return found


#: LibCST takes about a GB per MB of source with positions: two files at the size limit fixes parse
#: (``source.MAX_FIX_FILE_BYTES``) at most.
_parsed_modules = _ParsedModules(budget=2_000_000)


def parse(display: str, data: bytes, digest: str) -> ParsedModule | None:
    """The file's module (parsed lately, or now); None when LibCST cannot parse it."""
    try:
        return _parsed_modules.get(display, data, digest)
    except (cst.ParserSyntaxError, RecursionError, UnicodeDecodeError, LookupError, SyntaxError, ValueError):
        return None
