"""Turn one top-level block of a module into a ``BlockSummary``, from CPython's ``ast``.

Import statements become assignments of ``Import`` expressions, wherever they stand (module level,
inside functions, under ``try``/``if``), and every other name becomes a ``Ref``. The linker resolves
``Ref``s by interpreting assignments in order, with Python's scoping: so ``re.compile``, a local
``compile`` or a local variable named ``torch`` never look like ``torch.compile``, while aliases
(``jit = torch.compile``, ``from torch import compile as jit``) do.

Why ``ast`` and not LibCST: the summary needs expressions and positions, not formatting, and
LibCST with positions cost most of a cold run (docs/performance.md, "summaries"); the outline
already uses ``ast``. LibCST stays where formatting must survive (fixes). Positions are the same as LibCST's: 1-based
lines, columns in characters (``ast`` counts UTF-8 bytes; ``_Positions`` converts), parentheses
around an expression excluded, a definition's span on its name.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterable, Sequence

from .. import pyast
from ..core.text import LINE_END
from ..suppression import suppression_comments
from .model import (
    COMPREHENSION_MARK,
    Arg,
    Assign,
    Attr,
    AttrTarget,
    BlockSummary,
    Branch,
    Call,
    Choice,
    ClassSummary,
    Combine,
    Const,
    Define,
    DictLiteral,
    Elements,
    Evaluate,
    Expr,
    FunctionRef,
    FunctionSummary,
    Import,
    Item,
    ListLiteral,
    LiteralValue,
    MultiTarget,
    NameTarget,
    OtherTarget,
    ParseFailure,
    Ref,
    Return,
    Span,
    Stmt,
    Suppression,
    Symbol,
    Target,
    With,
    WithItem,
)
from .outline import TRY_STATEMENTS, resolve_relative


def find_suppressions(source: bytes) -> tuple[Suppression, ...]:
    """The suppression comments of a file's bytes (comments only: not text in a string)."""
    return tuple(Suppression(found.line, found.codes) for found in suppression_comments(source))


def summarize_block(text: str, module: str, is_package: bool, first_line: int = 1) -> BlockSummary:
    """Summarize ``text`` (top-level statements starting at line ``first_line`` of the module).

    A parse failure becomes a summary carrying the failure, with CPython's message and position.
    """
    try:
        tree = pyast.parse(text)
    except SyntaxError as error:
        return _failed(f"syntax error: {error.msg}", (error.lineno or 1) + first_line - 1, error.offset or 1)
    except (RecursionError, MemoryError):
        return _failed("cannot parse: nesting too deep for the parser", first_line, from_recursion_limit=True)
    except ValueError as error:  # NUL bytes
        return _failed(f"cannot parse: {error}", first_line)
    return _summarized(tree.body, _Positions(position_lines(text), first_line - 1), module, is_package, first_line)


def summarize_statements(
    statements: Sequence[ast.stmt], lines: list[str], module: str, is_package: bool, first_line: int
) -> BlockSummary:
    """Summarize top-level statements of a module parsed whole (``lines``: ``position_lines`` of its
    text): the summary ``summarize_block`` makes of their text, without parsing it again."""
    return _summarized(statements, _Positions(lines, 0), module, is_package, first_line)


def _summarized(
    statements: Sequence[ast.stmt], positions: _Positions, module: str, is_package: bool, first_line: int
) -> BlockSummary:
    try:
        return _Summarizer(positions, module, is_package).summarize(statements)
    except RecursionError:
        return _failed("cannot analyze: nesting too deep", first_line, from_recursion_limit=True)


def position_lines(text: str) -> list[str]:
    """Lines as ``ast`` numbers them (by \n, \r\n and \r), without their ends, for its positions."""
    return LINE_END.split(text) if "\r" in text else text.split("\n")  # split() is faster: most files use \n


def _failed(message: str, line: int = 1, column: int = 1, *, from_recursion_limit: bool = False) -> BlockSummary:
    return BlockSummary((), (), (), failure=ParseFailure(message, max(line, 1), max(column, 1), from_recursion_limit))


class _Positions:
    """``ast``'s (line, UTF-8 byte offset) pairs as 1-based character columns of the parsed text
    (``lines``), its line numbers ``line_offset`` lines into the module."""

    def __init__(self, lines: list[str], line_offset: int) -> None:
        self.lines = lines
        self.offset = line_offset

    def column(self, line: int, byte_offset: int) -> int:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        if text.isascii():
            return byte_offset + 1
        return len(text.encode("utf-8", "surrogatepass")[:byte_offset].decode("utf-8", "replace")) + 1

    def span(self, node: ast.AST) -> Span:
        line, end_line = node.lineno, node.end_lineno or node.lineno  # type: ignore[attr-defined]
        column = self.column(line, node.col_offset)  # type: ignore[attr-defined]
        end_column = self.column(end_line, node.end_col_offset if node.end_col_offset is not None else node.col_offset)  # type: ignore[attr-defined]
        if isinstance(node, ast.Tuple):
            line, column, end_line, end_column = self._inside_parentheses(line, column, end_line, end_column)
        return Span(line + self.offset, column, end_line + self.offset, end_column)

    def parenthesized(self, node: ast.Tuple) -> bool:
        line, end_line = node.lineno, node.end_lineno or node.lineno
        raw = (
            line,
            self.column(line, node.col_offset),
            end_line,
            self.column(end_line, node.end_col_offset or node.col_offset),
        )
        return self._inside_parentheses(*raw) != raw

    def _inside_parentheses(self, line: int, column: int, end_line: int, end_column: int) -> tuple[int, int, int, int]:
        """A parenthesized tuple's span without its parentheses (``ast`` includes them, LibCST not).

        The span runs from the first token after ``(`` to the last before ``)``, comments excluded;
        ``(a), (b)`` starts and ends with parentheses that are not the tuple's: the tokens tell.
        """
        unchanged = (line, column, end_line, end_column)
        segment = [self.lines[number - 1] for number in range(line, end_line + 1)]
        segment[-1] = segment[-1][: end_column - 1]
        segment[0] = segment[0][column - 1 :]
        if not (segment[0].startswith("(") and segment[-1].endswith(")")):
            return unchanged
        try:
            tokens = [
                t for t in tokenize.generate_tokens(io.StringIO("\n".join(segment)).readline) if t.type not in _TRIVIA
            ]
        except (tokenize.TokenError, SyntaxError):
            return unchanged
        depth = 0
        for token in tokens[:-1]:
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
            elif token.type == tokenize.OP and token.string in ")]}":
                depth -= 1
            if depth == 0:
                return unchanged  # the first parenthesis closed before the end: not the tuple's
        if len(tokens) < 2:
            return unchanged
        inner = tokens[1:-1] or [tokens[-1]]  # ``()``: an empty span where the ``)`` stands
        first, last = inner[0].start, (inner[-1].end if len(tokens) > 2 else tokens[-1].start)

        def absolute(row: int, col: int) -> tuple[int, int]:
            return line + row - 1, col + (column if row == 1 else 1)

        return (*absolute(*first), *absolute(*last))

    def name_span(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> Span:
        """The span of the defined name (``def`` and ``class`` nodes start at their keyword)."""
        text = self.lines[node.lineno - 1]
        start = len(text.encode("utf-8", "surrogatepass")[: node.col_offset].decode("utf-8", "replace"))
        match = _DEFINITION_NAME.match(text, start)
        column = match.start("name") if match else start
        return Span(node.lineno + self.offset, column + 1, node.lineno + self.offset, column + 1 + len(node.name))


#: Tokens that are not part of an expression's extent.
_TRIVIA = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT)


#: ``ast`` expression nodes whose parts the summaries take as their parent's own parts (LibCST's
#: tree has no expression node there; keeping that shape keeps summaries and cache keys stable).
_NOT_EXPRESSIONS_IN_LIBCST = (ast.FormattedValue, ast.Slice)

#: ``def name``, ``async def name``, ``class name`` at a definition's position.
_DEFINITION_NAME = re.compile(r"(?:async\s+)?(?:def|class)\s+(?P<name>\w+)")


class _Summarizer:
    def __init__(self, positions: _Positions, module: str, is_package: bool) -> None:
        self.module = module
        self.is_package = is_package
        self.positions = positions
        self.span = self.positions.span
        self.functions: list[FunctionSummary] = []
        self.classes: list[ClassSummary] = []
        self.star_imports: list[str] = []
        #: The bindings of the assignment expressions (``(loss := model(x))``) in the statement
        #: being summarized, made statements of their own before it (``block``).
        self._bindings: list[Stmt] = []
        #: The comprehension variables in scope, by name, under the names their bindings have
        #: (``comprehension``): a comprehension's variables do not leak into the function.
        self._renamed: dict[str, str] = {}

    # -- entry ------------------------------------------------------------------------------

    def summarize(self, statements: Sequence[ast.stmt]) -> BlockSummary:
        body = self.block(statements, scope="", owner_class=None, module_level=True)
        return BlockSummary(body, tuple(self.functions), tuple(self.classes), tuple(self.star_imports))

    # -- statements -------------------------------------------------------------------------

    def block(
        self, statements: Sequence[ast.stmt], scope: str, owner_class: str | None = None, module_level: bool = False
    ) -> tuple[Stmt, ...]:
        out: list[Stmt] = []
        for statement in statements:
            outer, self._bindings = self._bindings, []
            summarized = list(self.statement(statement, scope, owner_class, module_level))
            out.extend(self._bindings)  # what ``:=`` bound, before the statement that uses it
            out.extend(summarized)
            self._bindings = outer
        return tuple(out)

    def statement(self, node: ast.stmt, scope: str, owner_class: str | None, module_level: bool) -> Iterable[Stmt]:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield self.function_def(node, scope, owner_class)
        elif isinstance(node, ast.ClassDef):
            yield self.class_def(node, scope)
        elif isinstance(node, ast.If):
            # ``if not <flag>:`` is ``if <flag>:`` with its arms swapped: each arm then knows the
            # flag (``if not use_amp: loss.backward()`` runs where autocast is off).
            condition, negated = _without_not(node.test)
            test = self.expr(condition, scope)
            yield Evaluate(test)
            orelse: tuple[Stmt, ...] = ()
            if node.orelse:  # ``elif`` and ``else:`` alike
                orelse = self.block(node.orelse, scope, owner_class)
            body = self.block(node.body, scope, owner_class)
            yield Branch((orelse, body) if negated else (body, orelse), condition=test, test=_test_text(condition))
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            iterable = self.expr(node.iter, scope)
            loop_var = Assign((self.target(node.target, scope),), Item(iterable), self.span(node.target))
            yield Branch(((loop_var, *self.block(node.body, scope, owner_class)), ()), loop=True)
            if node.orelse:
                yield Branch((self.block(node.orelse, scope, owner_class), ()))
        elif isinstance(node, ast.While):
            yield Evaluate(self.expr(node.test, scope))
            yield Branch((self.block(node.body, scope, owner_class), ()), loop=True)
            if node.orelse:
                yield Branch((self.block(node.orelse, scope, owner_class), ()))
        elif isinstance(node, TRY_STATEMENTS):
            main = (*self.block(node.body, scope, owner_class), *self.block(node.orelse, scope, owner_class))
            arms = [main] + [self.block(h.body, scope, owner_class) for h in node.handlers]
            yield Branch(tuple(arms))
            if node.finalbody:
                yield from self.block(node.finalbody, scope, owner_class)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            items = tuple(
                WithItem(
                    self.expr(item.context_expr, scope),
                    self.target(item.optional_vars, scope) if item.optional_vars is not None else None,
                )
                for item in node.items
            )
            yield With(items, self.block(node.body, scope, owner_class), self.span(node))
        elif isinstance(node, ast.Match):
            yield Evaluate(self.expr(node.subject, scope))
            yield Branch(tuple(self.block(case.body, scope, owner_class) for case in node.cases) + ((),))
        else:
            yield from self.small_statement(node, scope, module_level)

    def small_statement(self, node: ast.stmt, scope: str, module_level: bool) -> Iterable[Stmt]:
        if isinstance(node, ast.Assign):
            targets = tuple(self.target(t, scope) for t in node.targets)
            yield Assign(targets, self.expr(node.value, scope), self.span(node))
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                yield Assign((self.target(node.target, scope),), self.expr(node.value, scope), self.span(node))
        elif isinstance(node, ast.AugAssign):
            current = self.expr(node.target, scope)
            yield Assign(
                (self.target(node.target, scope),), Combine((current, self.expr(node.value, scope))), self.span(node)
            )
        elif isinstance(node, ast.Expr) and isinstance(node.value, (ast.Yield, ast.YieldFrom)):
            value = node.value.value
            yield Evaluate(self.expr(value, scope) if value is not None else Const(None), self.span(node), yields=True)
        elif isinstance(node, ast.Expr):
            yield Evaluate(self.expr(node.value, scope), self.span(node))
        elif isinstance(node, ast.Return):
            yield Return(self.expr(node.value, scope) if node.value is not None else None, self.span(node))
        elif isinstance(node, ast.Raise) and node.exc is not None:
            yield Evaluate(self.expr(node.exc, scope), self.span(node))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            yield from self.import_bindings(node, module_level)

    def import_bindings(self, node: ast.Import | ast.ImportFrom, module_level: bool) -> Iterable[Stmt]:
        """``import a.b as c`` binds ``c`` to module ``a.b``; ``import a.b`` binds ``a``; and so on."""
        span = self.span(node)
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname is not None:
                    yield Assign((NameTarget(alias.asname),), Import(alias.name), span)
                else:
                    head = alias.name.split(".")[0]
                    yield Assign((NameTarget(head),), Import(head), span)
            return
        base = "." * node.level + (node.module or "")
        base = resolve_relative(base, self.module, self.is_package) if node.level else base
        if any(alias.name == "*" for alias in node.names):
            if module_level:
                self.star_imports.append(base)
            return
        for alias in node.names:
            local = alias.asname if alias.asname is not None else alias.name
            yield Assign((NameTarget(local),), Import(f"{base}.{alias.name}" if base else alias.name), span)

    def function_def(self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: str, owner_class: str | None) -> Define:
        qualname = f"{scope}{node.name}"
        decorators = tuple(self.expr(d, scope) for d in node.decorator_list)
        accessor = owner_class is not None and any(
            isinstance(d, Attr) and d.attr in ("setter", "deleter") and d.base == Ref(node.name) for d in decorators
        )
        if accessor:  # the getter keeps the name: a function is looked up by its qualified name
            qualname = f"{qualname}.<accessor>"
        self.functions.append(
            FunctionSummary(
                name=node.name,
                qualname=qualname,
                params=_parameter_names(node.args),
                decorators=decorators,
                body=self.block(node.body, f"{qualname}.<locals>."),
                span=self.positions.name_span(node),
                owner_class=owner_class,
                is_staticmethod=any(isinstance(d, Ref) and d.name == "staticmethod" for d in decorators),
                is_classmethod=any(isinstance(d, Ref) and d.name == "classmethod" for d in decorators),
                lines=(node.lineno + self.positions.offset, (node.end_lineno or node.lineno) + self.positions.offset),
                is_property=owner_class is not None and any(_names_property(d) for d in decorators),
                is_property_accessor=accessor,
                defaults=_literal_defaults(node.args),
                keyword_only=tuple(p.arg for p in node.args.kwonlyargs),
            )
        )
        return Define(node.name, qualname, is_class=False)

    def class_def(self, node: ast.ClassDef, scope: str) -> Define:
        qualname = f"{scope}{node.name}"
        body = self.block(node.body, f"{qualname}.", owner_class=qualname)
        methods = tuple((s.name, s.qualname) for s in body if isinstance(s, Define) and not s.is_class)
        self.classes.append(
            ClassSummary(
                name=node.name,
                qualname=qualname,
                bases=tuple(self.expr(base, scope) for base in node.bases),
                decorators=tuple(self.expr(d, scope) for d in node.decorator_list),
                methods=methods,
                body=body,
                span=self.positions.name_span(node),
                fields=_scalar_fields(node),
            )
        )
        return Define(node.name, qualname, is_class=True)

    # -- targets and expressions ------------------------------------------------------------

    def target(self, node: ast.expr, scope: str) -> Target:
        if isinstance(node, ast.Name):
            return NameTarget(self._renamed.get(node.id, node.id))
        if isinstance(node, ast.Attribute):
            return AttrTarget(self.expr(node.value, scope), node.attr)
        if isinstance(node, (ast.Tuple, ast.List)):
            # Unpacking spreads the whole value over each element: ``logits, loss = model(x)``.
            return MultiTarget(tuple(self.target(element, scope) for element in node.elts))
        if isinstance(node, ast.Starred):
            return self.target(node.value, scope)
        return OtherTarget(tuple(self.children(node, scope)))

    def children(self, node: ast.AST, scope: str) -> Iterable[Expr]:
        """The expressions inside ``node``, in source order (operands, slices, comprehension parts)."""
        children = _source_ordered_children(node)
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Tuple)
            and not self.positions.parenthesized(node.slice)
        ):
            children = [node.value, *node.slice.elts]  # ``a[i, j]``: two indices, as LibCST has them
        for child in children:
            if isinstance(child, ast.expr) and not isinstance(child, _NOT_EXPRESSIONS_IN_LIBCST):
                yield self.expr(child, scope)
            elif not isinstance(child, (ast.stmt, ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)):
                yield from self.children(child, scope)

    def expr(self, node: ast.expr, scope: str) -> Expr:
        if isinstance(node, ast.Name):
            return Ref(self._renamed.get(node.id, node.id))
        if isinstance(node, ast.Attribute):
            return Attr(self.expr(node.value, scope), node.attr)
        if isinstance(node, ast.Call):
            written: list[ast.expr | ast.keyword] = [*node.args, *node.keywords]
            arguments = sorted(written, key=lambda a: (a.lineno, a.col_offset))
            args = tuple(
                Arg(self.expr(a.value, scope), "*")
                if isinstance(a, ast.Starred)
                else Arg(self.expr(a.value, scope), a.arg if a.arg is not None else "**")
                if isinstance(a, ast.keyword)
                else Arg(self.expr(a, scope))
                for a in arguments
            )
            return Call(self.expr(node.func, scope), args, self.span(node))
        if isinstance(node, ast.Constant):
            return self.literal(node)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
            return self.container(node, scope)
        if isinstance(node, ast.IfExp):
            condition, negated = _without_not(node.test)
            test = self.expr(condition, scope)
            options = (self.expr(node.body, scope), self.expr(node.orelse, scope))
            return Choice(options[::-1] if negated else options, test, _test_text(condition))
        if isinstance(node, ast.BoolOp):
            return _boolean_choice([self.expr(value, scope) for value in node.values])
        if isinstance(node, ast.Lambda):
            return self.lambda_function(node, scope)
        if isinstance(node, (ast.Await, ast.Starred)):
            return self.expr(node.value, scope)
        if isinstance(node, ast.NamedExpr):
            # ``(loss := model(x))`` binds ``loss`` as ``loss = model(x)`` does, then is ``loss``.
            value = self.expr(node.value, scope)
            self._bindings.append(Assign((NameTarget(node.target.id),), value, self.span(node)))
            return Ref(node.target.id)
        if isinstance(node, ast.Subscript):
            index = node.slice.value if isinstance(node.slice, ast.Constant) else None
            if isinstance(index, str) or (isinstance(index, int) and not isinstance(index, bool) and index >= 0):
                return Item(self.expr(node.value, scope), index)
            return Item(self.expr(node.value, scope))
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            return self.comprehension(node, scope)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARISONS:
            return Combine(tuple(self.children(node, scope)), _COMPARISONS[type(node.ops[0])])
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return Combine(tuple(self.children(node, scope)), "not")
        return Combine(tuple(self.children(node, scope)))

    def comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp, scope: str) -> Expr:
        """``[f(c) for c in xs if ok(c)]``: each ``for`` binds its variables to the elements of its
        iterable, in bindings made before the statement (as ``:=``'s are), under names of this
        comprehension's own (``c@12:8``: they do not leak), then the element is evaluated with
        them. Without the bindings ``c`` was unknown: a loss summed over the chunks of a compiled
        output (``torch.cat([ce(c) for c in logits.split(n)])``) had lost where it came from."""
        outer = self._renamed
        renamed = dict(outer)
        where = self.span(node)  # the module's line and column, whichever parse made the tree
        try:
            for generator in node.generators:
                iterable = self.expr(generator.iter, scope)  # the first one in the enclosing scope
                for name in _bound_names(generator.target):
                    renamed[name] = f"{name}{COMPREHENSION_MARK}{where.line}:{where.column}"
                self._renamed = renamed
                target = self.target(generator.target, scope)
                self._bindings.append(Assign((target,), Item(iterable), self.span(generator.target)))
                self._bindings.extend(Evaluate(self.expr(test, scope)) for test in generator.ifs)
            element = node.value if isinstance(node, ast.DictComp) else node.elt
            return Elements((self.expr(element, scope),))
        finally:
            self._renamed = outer

    def literal(self, node: ast.Constant) -> Expr:
        try:
            return Const(self.literal_value(node), self.span(node))
        except _NotLiteral:
            return Combine(())

    def container(self, node: ast.List | ast.Tuple | ast.Set | ast.Dict, scope: str) -> Expr:
        try:
            return Const(self.literal_value(node), self.span(node))
        except _NotLiteral:
            pass
        # Dict displays keep their values (``**mapping`` entries their mapping); keys do not matter here.
        elements = node.values if isinstance(node, ast.Dict) else node.elts
        parts = tuple(self.expr(element, scope) for element in elements)
        if isinstance(node, ast.Dict) and all(
            isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys
        ):
            return Elements(parts, tuple(k.value for k in node.keys))  # type: ignore[union-attr]
        return Elements(parts)

    def literal_value(self, node: ast.expr) -> LiteralValue:
        """The hashable Python value of a literal, with imported names kept as ``Symbol``s."""
        if isinstance(node, ast.Constant):
            if node.value is Ellipsis:
                raise _NotLiteral
            return node.value
        if isinstance(node, ast.Attribute) and _dotted(node):
            return Symbol(_dotted(node))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            value = self.literal_value(node.operand)
            if isinstance(value, (int, float, complex)) and not isinstance(value, bool):
                return -value
        if isinstance(node, (ast.List, ast.Set, ast.Tuple)):
            if any(isinstance(e, ast.Starred) for e in node.elts):
                raise _NotLiteral
            items = tuple(self.literal_value(e) for e in node.elts)
            return items if isinstance(node, ast.Tuple) else ListLiteral(items)
        if isinstance(node, ast.Dict):
            pairs = []
            for key, item in zip(node.keys, node.values):
                if key is None:  # ``**mapping``
                    raise _NotLiteral
                pairs.append((self.literal_value(key), self.literal_value(item)))
            return DictLiteral(tuple(pairs))
        raise _NotLiteral

    def lambda_function(self, node: ast.Lambda, scope: str) -> FunctionRef:
        span = self.span(node)
        qualname = f"{scope}<lambda:{span.line}:{span.column}>"
        self.functions.append(
            FunctionSummary(
                name="<lambda>",
                qualname=qualname,
                params=_parameter_names(node.args),
                decorators=(),
                body=(Return(self.expr(node.body, f"{qualname}.<locals>.")),),
                span=span,
                lines=(span.line, span.end_line),
                keyword_only=tuple(p.arg for p in node.args.kwonlyargs),
            )
        )
        return FunctionRef(qualname)


class _NotLiteral(Exception):
    pass


#: Decorators that make a method an attribute computed when read (``functools.cached_property``
#: computes it at the first read only: each read here stands for what the first one gives).
_PROPERTY_DECORATORS = frozenset({"property", "cached_property"})


def _names_property(decorator: Expr) -> bool:
    """``@property``, ``@cached_property``, ``@functools.cached_property``."""
    if isinstance(decorator, Ref):
        return decorator.name in _PROPERTY_DECORATORS
    return (
        isinstance(decorator, Attr)
        and decorator.attr == "cached_property"
        and isinstance(decorator.base, Ref)
        and decorator.base.name == "functools"
    )


def _parameter_names(params: ast.arguments) -> tuple[str, ...]:
    names = [p.arg for p in (*params.posonlyargs, *params.args)]
    if params.vararg is not None:
        names.append("*" + params.vararg.arg)
    names.extend(p.arg for p in params.kwonlyargs)
    if params.kwarg is not None:
        names.append("**" + params.kwarg.arg)
    return tuple(names)


#: The literals a parameter's default is taken as (a name, a call or a container is not).
_SCALARS = (type(None), bool, int, float, str)


def _literal_defaults(params: ast.arguments) -> tuple[tuple[str, LiteralValue], ...]:
    """Each parameter whose default is a scalar literal, with it (``enabled=False``)."""
    positional = [*params.posonlyargs, *params.args]
    pairs = [
        *zip(positional[len(positional) - len(params.defaults) :], params.defaults),
        *((p, d) for p, d in zip(params.kwonlyargs, params.kw_defaults) if d is not None),
    ]
    return tuple(
        (param.arg, default.value)
        for param, default in pairs
        if isinstance(default, ast.Constant) and isinstance(default.value, _SCALARS)
    )


def _dotted(node: ast.expr) -> str:
    """``a.b.c`` for a chain of names, else the empty string."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


#: Comparisons the interpreter decides on literals (``linking/constants.py``).
_COMPARISONS: dict[type, str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
}

#: Annotation names of scalar fields (``typing.Optional[bool]`` and ``bool | None`` included).
_SCALAR_ANNOTATIONS = frozenset({"bool", "int", "float", "str", "None", "Optional", "Literal", "Union"})


def _scalar_fields(node: ast.ClassDef) -> tuple[str, ...]:
    """The fields of a class body that may be configuration: a scalar annotation, or a literal default."""
    names = []
    for statement in node.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            if _scalar_annotation(statement.annotation) or _literal_default(statement.value):
                names.append(statement.target.id)
        elif isinstance(statement, ast.Assign) and _literal_default(statement.value):
            names.extend(t.id for t in statement.targets if isinstance(t, ast.Name))
    return tuple(names)


def _scalar_annotation(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id in _SCALAR_ANNOTATIONS
    if isinstance(node, ast.Attribute):
        return node.attr in _SCALAR_ANNOTATIONS
    if isinstance(node, ast.Constant):
        return not isinstance(node.value, str) or node.value in _SCALAR_ANNOTATIONS
    if isinstance(node, ast.Subscript):
        head = node.value.attr if isinstance(node.value, ast.Attribute) else getattr(node.value, "id", "")
        return head == "Literal" or (_scalar_annotation(node.value) and _scalar_annotation(node.slice))
    if isinstance(node, ast.Tuple):
        return all(_scalar_annotation(e) for e in node.elts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _scalar_annotation(node.left) and _scalar_annotation(node.right)
    return False


def _literal_default(node: ast.expr | None) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and node.value is not None


#: Longest ``if`` test kept as written (a finding names it); longer ones are cut.
_MAX_TEST_TEXT = 80


def _bound_names(target: ast.expr) -> Iterable[str]:
    """The names a ``for`` target binds (``k, (a, b)``, ``*rest``; not ``obj`` of ``obj.attr``)."""
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _bound_names(element)
    elif isinstance(target, ast.Starred):
        yield from _bound_names(target.value)


def _without_not(test: ast.expr) -> tuple[ast.expr, bool]:
    """``if not <flag>:`` is ``if <flag>:`` with its arms swapped (and ``b if not c else a`` is
    ``a if c else b``): the test without its ``not``, and whether it had one."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand, True
    return test, False


def _test_text(node: ast.expr) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= _MAX_TEST_TEXT else text[: _MAX_TEST_TEXT - 3] + "..."


def _boolean_choice(options: list[Expr]) -> Expr:
    """``a or b or c`` as left-nested two-way choices, ``((a or b) or c)``, as written."""
    result = options[0]
    for option in options[1:]:
        result = Choice((result, option))
    return result


def _source_ordered_children(node: ast.AST) -> list[ast.AST]:
    """``ast.iter_child_nodes`` in source order: dict keys and values interleave, as written."""
    if isinstance(node, ast.Dict):
        return [child for pair in zip(node.keys, node.values) for child in pair if child is not None]
    if isinstance(node, ast.JoinedStr):
        return [child for child in node.values if not isinstance(child, ast.Constant)]
    if isinstance(node, ast.FormattedValue):
        children: list[ast.AST] = [node.value]
        return children + ([node.format_spec] if node.format_spec is not None else [])
    return list(ast.iter_child_nodes(node))
