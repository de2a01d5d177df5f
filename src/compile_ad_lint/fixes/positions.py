"""Positions of the statements a fix asks about, not of the whole file.

LibCST's ``PositionProvider`` renders the whole module to count lines and columns, which costs
more than parsing it; a fix asks about one call of a training script. A statement's code (its
comment and blank lines first) starts at column 0 of a line the standard ``ast`` tells, so
rendering that statement alone, with the indentation of the blocks around it, gives its nodes the
positions the whole module's rendering gives them. Each rendering must reproduce the file's text at
that line. A statement that does not, a block whose statements ``ast`` does not pair with LibCST's,
a node asked about outside the statements rendered so far, or a file ``ast`` cannot parse, makes
the whole module's positions, as ``PositionProvider`` does; so does a LibCST whose internals
this uses (``CSTNode._codegen``, the provider's ``_computed``) have moved.
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState


class _Unpaired(Exception):
    """``ast``'s statements and LibCST's do not pair up, or a rendering is not the file's text."""


#: The ``ast`` statements each LibCST compound statement is.
_COMPOUND: dict[type, tuple[type, ...]] = {
    cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef),
    cst.ClassDef: (ast.ClassDef,),
    cst.If: (ast.If,),
    cst.For: (ast.For, ast.AsyncFor),
    cst.While: (ast.While,),
    cst.Try: (ast.Try,),
    cst.With: (ast.With, ast.AsyncWith),
    cst.Match: (ast.Match,),
}
if hasattr(ast, "TryStar"):
    _COMPOUND[cst.TryStar] = (ast.TryStar,)
_AST_COMPOUND = tuple(kind for kinds in _COMPOUND.values() for kind in kinds)


@dataclass(frozen=True)
class _Statement:
    """A statement of a block walked so far, with where its code starts."""

    node: cst.BaseStatement
    #: The first ``ast`` statement it is (``a = 1; b = 2`` is two).
    tree: ast.stmt
    #: Its syntax's first line (its first decorator's) and last line.
    first_line: int
    last_line: int
    #: Where its code starts: the first of its comment and blank lines.
    code_line: int
    #: The indentation of the blocks around it, outermost first.
    indents: tuple[str, ...]
    #: The nodes from the module down to the block it is a statement of.
    parents: tuple[cst.CSTNode, ...]

    def holds(self, line: int) -> bool:
        return self.first_line <= line <= self.last_line


class Positions(Mapping[cst.CSTNode, CodeRange]):
    """``PositionProvider``'s mapping, computed a statement at a time (``starting_at``) and for the
    whole module when a node is asked about that no statement rendered so far holds."""

    def __init__(
        self,
        wrapper: MetadataWrapper,
        text: str,
        line_starts: Callable[[], Sequence[int]],
        tree: Callable[[], ast.Module | None],
    ) -> None:
        self._wrapper = wrapper
        self._module = wrapper.module
        self._text = text
        self._line_starts = line_starts
        self._tree = tree
        self._computed: dict[cst.CSTNode, CodeRange] = {}
        self._by_start: dict[tuple[int, int], list[tuple[cst.CSTNode, CodeRange]]] = {}
        self._whole = False
        #: Statements of the blocks walked so far, and those rendered (with their own positions).
        self._known: dict[cst.CSTNode, _Statement] = {}
        self._rendered: dict[cst.CSTNode, tuple[_Statement, dict[cst.CSTNode, CodeRange]]] = {}
        self._top: list[_Statement] | None = None
        # The language server's fix and request threads may share a module.
        self._lock = threading.RLock()

    # -- Mapping ------------------------------------------------------------------------------

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        found = self._computed.get(node)
        if found is None:
            with self._lock:
                self._fill_for(node)
            found = self._computed[node]  # KeyError: not a node of this module
        return found

    def __iter__(self) -> Iterator[cst.CSTNode]:
        self.whole()
        return iter(self._computed)

    def __len__(self) -> int:
        self.whole()
        return len(self._computed)

    # -- what fixes ask -----------------------------------------------------------------------

    def starting_at(self, line: int, column: int) -> list[tuple[cst.CSTNode, CodeRange]]:
        """The nodes that start at ``line`` (1-based) and ``column`` (0-based), with their spans."""
        with self._lock:
            if not self._whole:
                self._cover(line)
            return list(self._by_start.get((line, column), ()))

    def holder(self, node: cst.CSTNode) -> tuple[cst.CSTNode, tuple[cst.CSTNode, ...]] | None:
        """The rendered statement holding ``node`` and that statement's parents (from the module
        down); None when none holds it."""
        with self._lock:  # another thread may be rendering a statement
            for statement, positions in self._rendered.values():
                if node in positions:
                    return statement.node, statement.parents
        return None

    def code_line(self, statement: cst.CSTNode) -> int | None:
        """Where ``statement``'s code starts (its comment and blank lines included), as ``ast``
        tells, when a block walked so far holds it; None otherwise. Unchecked: the caller checks
        the text there."""
        known = self._known.get(statement)
        return None if known is None else known.code_line

    @property
    def covers_module(self) -> bool:
        """Whether every node's position is computed (``whole``)."""
        return self._whole

    def whole(self) -> None:
        """Every node's position (``PositionProvider`` over the module)."""
        with self._lock:
            if self._whole:
                return
            self._computed.update(self._wrapper.resolve(PositionProvider))
            self._by_start.clear()
            for node, span in self._computed.items():
                self._by_start.setdefault((span.start.line, span.start.column), []).append((node, span))
            self._whole = True

    # -- inside -------------------------------------------------------------------------------

    def _fill_for(self, node: cst.CSTNode) -> None:
        """Render the statement ``node`` is, or is a decorator or small statement of, when a block
        walked so far holds it; else every node."""
        if self._whole:
            return
        statement = self._known.get(node)
        if statement is None:
            for known in self._known.values():
                if node in getattr(known.node, "decorators", ()) or (
                    isinstance(known.node, cst.SimpleStatementLine) and node in known.node.body
                ):
                    statement = known
                    break
        if statement is None or node is self._module:
            self.whole()
            return
        try:
            self._render(statement)
        except _Unpaired:
            self.whole()

    def _cover(self, line: int) -> None:
        """Render the innermost statement holding ``line`` (every node, when that cannot be found)."""
        try:
            statements = self._top_statements()
            while True:
                holding = next((s for s in statements if s.holds(line)), None)
                if holding is None:
                    raise _Unpaired
                inner = self._inner(holding, line)
                if inner is None:
                    self._render(holding)
                    return
                statements = inner
        except (_Unpaired, RecursionError):
            self.whole()

    def _top_statements(self) -> list[_Statement]:
        if self._top is None:
            tree = self._tree()
            if tree is None:
                raise _Unpaired
            self._top = self._block(self._module.body, tree.body, (), (self._module,))
        return self._top

    def _inner(self, statement: _Statement, line: int) -> list[_Statement] | None:
        """The statements of the block of ``statement`` that holds ``line`` in one of them."""
        node, tree = statement.node, statement.tree
        if not isinstance(node, cst.BaseCompoundStatement):
            return None
        for block, trees in _bodies(node, tree):
            if not any(_first_line(t) <= line <= (t.end_lineno or t.lineno) for t in trees):
                continue
            indents = [*statement.indents, self._indent(block.indent)]
            if isinstance(node, cst.Match):  # its cases are indented within it
                indents.insert(-1, self._indent(node.indent))
            parents = (*statement.parents, node, *_path(node, block), block)
            return self._block(block.body, trees, tuple(indents), parents)
        return None

    def _indent(self, indent: str | None) -> str:
        return self._module.default_indent if indent is None else indent

    def _block(
        self,
        body: Sequence[cst.BaseStatement],
        trees: Sequence[ast.stmt],
        indents: tuple[str, ...],
        parents: tuple[cst.CSTNode, ...],
    ) -> list[_Statement]:
        """``body``'s statements paired with ``ast``'s ``trees``, each with where its code starts."""
        found: list[_Statement] = []
        at = 0
        for node in body:
            if isinstance(node, cst.SimpleStatementLine):
                mine = tuple(trees[at : at + len(node.body)])
                if len(mine) != len(node.body) or any(isinstance(t, _AST_COMPOUND) for t in mine):
                    raise _Unpaired
            else:
                mine = tuple(trees[at : at + 1])
                if not mine or not isinstance(mine[0], _COMPOUND.get(type(node), ())):
                    raise _Unpaired
            at += len(mine)
            first = min(_first_line(t) for t in mine)
            leading = len(getattr(node, "leading_lines", ()))
            decorators = getattr(node, "decorators", ())
            if decorators:
                leading += len(decorators[0].leading_lines)
            last = max(t.end_lineno or t.lineno for t in mine)
            found.append(_Statement(node, mine[0], first, last, first - leading, indents, parents))
        if at != len(trees):
            raise _Unpaired
        for statement in found:
            self._known[statement.node] = statement
        return found

    def _render(self, statement: _Statement) -> None:
        """Render ``statement`` where its code starts and keep its nodes' positions."""
        if statement.node in self._rendered:
            return
        starts = self._line_starts()
        if not 1 <= statement.code_line < len(starts):
            raise _Unpaired
        provider = PositionProvider()
        try:  # LibCST's own rendering with positions, begun at a line of our choosing
            state = PositionProvidingCodegenState(
                default_indent=self._module.default_indent,
                default_newline=self._module.default_newline,
                provider=provider,
                indent_tokens=list(statement.indents),
                line=statement.code_line,
                column=0,
            )
            statement.node._codegen(state)
            code = "".join(state.tokens)
            positions: dict[cst.CSTNode, CodeRange] = provider._computed  # type: ignore[assignment]
        except (AttributeError, TypeError) as error:  # a LibCST whose internals moved: the whole module
            raise _Unpaired from error
        offset = starts[statement.code_line - 1]
        if self._text[offset : offset + len(code)] != code:
            raise _Unpaired
        self._rendered[statement.node] = (statement, positions)
        for node, span in positions.items():
            if node not in self._computed:
                self._computed[node] = span
                self._by_start.setdefault((span.start.line, span.start.column), []).append((node, span))


def _first_line(tree: ast.stmt) -> int:
    """A statement's first line: its first decorator's, if it has one."""
    decorators = getattr(tree, "decorator_list", ())
    return min([tree.lineno, *(d.lineno for d in decorators)])


def _bodies(node: cst.BaseCompoundStatement, tree: ast.stmt) -> Iterator[tuple[cst.IndentedBlock, list[ast.stmt]]]:
    """The indented blocks of ``node``, each with the ``ast`` statements it holds."""
    pairs: list[tuple[cst.BaseSuite, list[ast.stmt]]] = []
    if isinstance(node, cst.If) and isinstance(tree, ast.If):
        pairs.append((node.body, tree.body))
        if isinstance(node.orelse, cst.If):  # elif
            if len(tree.orelse) != 1 or not isinstance(tree.orelse[0], ast.If):
                raise _Unpaired
            yield from _bodies(node.orelse, tree.orelse[0])
        elif isinstance(node.orelse, cst.Else):
            pairs.append((node.orelse.body, tree.orelse))
    elif isinstance(node, (cst.For, cst.While)) and isinstance(tree, (ast.For, ast.AsyncFor, ast.While)):
        pairs.append((node.body, tree.body))
        if node.orelse is not None:
            pairs.append((node.orelse.body, tree.orelse))
    elif isinstance(node, (cst.Try, *_TRY_STAR)) and isinstance(tree, (ast.Try, *_AST_TRY_STAR)):
        attempt: Any = node  # ``try`` or ``try`` with ``except*``: the same fields
        tried: Any = tree
        if len(attempt.handlers) != len(tried.handlers):
            raise _Unpaired
        pairs.append((attempt.body, tried.body))
        pairs += [(handler.body, handler_tree.body) for handler, handler_tree in zip(attempt.handlers, tried.handlers)]
        if attempt.orelse is not None:
            pairs.append((attempt.orelse.body, tried.orelse))
        if attempt.finalbody is not None:
            pairs.append((attempt.finalbody.body, tried.finalbody))
    elif isinstance(node, cst.Match) and isinstance(tree, ast.Match):
        if len(node.cases) != len(tree.cases):
            raise _Unpaired
        pairs += [(case.body, case_tree.body) for case, case_tree in zip(node.cases, tree.cases)]
    elif isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.With)):
        pairs.append((node.body, tree.body))  # type: ignore[attr-defined]
    for block, trees in pairs:
        if isinstance(block, cst.IndentedBlock):
            yield block, trees


_TRY_STAR: tuple[type, ...] = (cst.TryStar,) if hasattr(ast, "TryStar") else ()
_AST_TRY_STAR: tuple[type, ...] = (ast.TryStar,) if hasattr(ast, "TryStar") else ()


def _path(root: cst.CSTNode, target: cst.CSTNode) -> tuple[cst.CSTNode, ...]:
    """The nodes strictly between ``root`` and its descendant ``target`` (an ``else`` or ``except``
    clause, an ``elif``): searched through statements and clauses, not expressions."""
    stack: list[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]] = [(root, ())]
    while stack:
        node, above = stack.pop()
        for child in node.children:
            if child is target:
                return above[1:] + ((node,) if node is not root else ())
            if not isinstance(child, cst.BaseExpression):
                stack.append((child, (*above, node)))
    raise _Unpaired
