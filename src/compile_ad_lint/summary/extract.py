"""Turn one module's source into a ``ModuleSummary`` with LibCST.

Import statements become assignments of ``Import`` expressions, wherever they stand (module level,
inside functions, under ``try``/``if``), and every other name becomes a ``Ref``. The linker resolves
``Ref``s by interpreting assignments in order, with Python's scoping: so ``re.compile``, a local
``compile`` or a local variable named ``torch`` never look like ``torch.compile``, while aliases
(``jit = torch.compile``, ``from torch import compile as jit``) do.

LibCST's ``ScopeProvider``/``QualifiedNameProvider`` would answer the same question but cost about
3.5 times the parse itself on large modules (measured on torch's sources); the interpreter needs an
environment anyway, so it does the scoping and only ``PositionProvider`` metadata is computed here.
"""

from __future__ import annotations

import ast
import re
from typing import Iterable, Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .model import (
    Arg,
    Assign,
    AttrTarget,
    Attr,
    Branch,
    Call,
    Choice,
    ClassSummary,
    Combine,
    Const,
    Define,
    DictLiteral,
    ListLiteral,
    Symbol,
    Elements,
    Evaluate,
    Item,
    Expr,
    FunctionRef,
    FunctionSummary,
    BlockSummary,
    MultiTarget,
    NameTarget,
    OtherTarget,
    ParseFailure,
    Import,
    Ref,
    Return,
    Span,
    Stmt,
    Suppression,
    Target,
    With,
    WithItem,
)

_NOQA = re.compile(rb"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_IGNORE = re.compile(rb"#\s*compile-ad-lint:\s*ignore(?:\[(?P<codes>[A-Z0-9,\s]*)\])?", re.IGNORECASE)
_CONSTANT_NAMES = {"True": True, "False": False, "None": None}


def resolve_relative(name: str, module: str, is_package: bool) -> str:
    """Make an import name like ``..pkg.x`` absolute, seen from ``module``."""
    dots = len(name) - len(name.lstrip("."))
    if not dots:
        return name
    package = module.split(".") if is_package else module.split(".")[:-1]
    if dots > 1:
        package = package[: len(package) - (dots - 1)]
    rest = name[dots:]
    return ".".join([*package, rest] if rest else package)


def find_suppressions(source: bytes) -> tuple[Suppression, ...]:
    found = []
    for number, line in enumerate(source.splitlines(), start=1):
        if b"#" not in line:
            continue
        for pattern in (_NOQA, _IGNORE):
            match = pattern.search(line)
            if match:
                codes = match.group("codes") or b""
                found.append(
                    Suppression(number, frozenset(c.upper() for c in re.findall(r"[A-Za-z]+[0-9]+", codes.decode())))
                )
    return tuple(found)


def summarize_block(text: str, module: str, is_package: bool, first_line: int = 1) -> BlockSummary:
    """Summarize ``text`` (top-level statements starting at line ``first_line`` of the module).

    A parse failure becomes a summary carrying the failure, with CPython's message and position
    where CPython has one.
    """
    try:
        tree = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        return _syntax_failure(text, error, first_line)
    except RecursionError:
        return _failed("cannot parse: nesting too deep for the parser", first_line, from_recursion_limit=True)
    try:
        return _Summarizer(tree, module, is_package, first_line - 1).summarize()
    except RecursionError:
        return _failed("cannot analyze: nesting too deep", first_line, from_recursion_limit=True)


def _syntax_failure(text: str, error: cst.ParserSyntaxError, first_line: int) -> BlockSummary:
    offset = first_line - 1
    try:
        ast.parse(text)
    except SyntaxError as python_error:
        return _failed(f"syntax error: {python_error.msg}", (python_error.lineno or 1) + offset, python_error.offset or 1)
    except (ValueError, RecursionError, MemoryError):
        pass
    else:
        reason = f"syntax not supported by the LibCST parser (newer than it knows?): {error.message}"
        return _failed(reason, error.raw_line + offset, error.raw_column + 1)
    return _failed(f"syntax error: {error.message}", error.raw_line + offset, error.raw_column + 1)


def _failed(message: str, line: int = 1, column: int = 1, *, from_recursion_limit: bool = False) -> BlockSummary:
    return BlockSummary((), (), (), failure=ParseFailure(message, max(line, 1), max(column, 1), from_recursion_limit))


class _Summarizer:
    def __init__(self, tree: cst.Module, module: str, is_package: bool, line_offset: int) -> None:
        self.module = module
        self.line_offset = line_offset
        self.is_package = is_package
        wrapper = MetadataWrapper(tree, unsafe_skip_copy=True)
        self.tree = wrapper.module
        self.positions = wrapper.resolve(PositionProvider)
        self.functions: list[FunctionSummary] = []
        self.classes: list[ClassSummary] = []
        self.star_imports: list[str] = []

    # -- entry ------------------------------------------------------------------------------

    def summarize(self) -> BlockSummary:
        body = self.block(self.tree.body, scope="", owner_class=None, module_level=True)
        return BlockSummary(body, tuple(self.functions), tuple(self.classes), tuple(self.star_imports))

    # -- helpers ----------------------------------------------------------------------------

    def span(self, node: cst.CSTNode) -> Span:
        code_range = self.positions[node]
        offset = self.line_offset
        return Span(code_range.start.line + offset, code_range.start.column + 1, code_range.end.line + offset, code_range.end.column + 1)

    # -- statements -------------------------------------------------------------------------

    def block(self, statements: Sequence[cst.CSTNode], scope: str, owner_class: str | None, module_level=False) -> tuple[Stmt, ...]:
        out: list[Stmt] = []
        for statement in statements:
            out.extend(self.statement(statement, scope, owner_class, module_level))
        return tuple(out)

    def body_of(self, node: cst.BaseSuite, scope: str, owner_class: str | None = None) -> tuple[Stmt, ...]:
        if isinstance(node, cst.IndentedBlock):
            return self.block(node.body, scope, owner_class)
        if isinstance(node, cst.SimpleStatementSuite):
            return self.block(node.body, scope, owner_class)
        return ()

    def statement(self, node: cst.CSTNode, scope: str, owner_class: str | None, module_level: bool) -> Iterable[Stmt]:
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                yield from self.small_statement(small, scope, module_level)
        elif isinstance(node, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Expr, cst.Return, cst.Import, cst.ImportFrom, cst.Raise, cst.Del, cst.Assert)):
            yield from self.small_statement(node, scope, module_level)
        elif isinstance(node, cst.FunctionDef):
            yield self.function_def(node, scope, owner_class)
        elif isinstance(node, cst.ClassDef):
            yield self.class_def(node, scope)
        elif isinstance(node, cst.If):
            test = self.expr(node.test, scope)
            yield Evaluate(test)
            orelse: tuple[Stmt, ...] = ()
            if isinstance(node.orelse, cst.If):
                orelse = tuple(self.statement(node.orelse, scope, owner_class, module_level))
            elif isinstance(node.orelse, cst.Else):
                orelse = self.body_of(node.orelse.body, scope, owner_class)
            yield Branch((self.body_of(node.body, scope, owner_class), orelse), condition=test)
        elif isinstance(node, cst.For):
            iterable = self.expr(node.iter, scope)
            loop_var = Assign((self.target(node.target, scope),), Item(iterable), self.span(node.target))
            body = (loop_var, *self.body_of(node.body, scope, owner_class))
            yield Branch((body, ()))
            if node.orelse is not None:
                yield Branch((self.body_of(node.orelse.body, scope, owner_class), ()))
        elif isinstance(node, cst.While):
            yield Evaluate(self.expr(node.test, scope))
            yield Branch((self.body_of(node.body, scope, owner_class), ()))
            if node.orelse is not None:
                yield Branch((self.body_of(node.orelse.body, scope, owner_class), ()))
        elif isinstance(node, (cst.Try, cst.TryStar)):
            main = self.body_of(node.body, scope, owner_class)
            if node.orelse is not None:
                main = (*main, *self.body_of(node.orelse.body, scope, owner_class))
            arms = [main] + [self.body_of(h.body, scope, owner_class) for h in node.handlers]
            yield Branch(tuple(arms))
            if node.finalbody is not None:
                yield from self.body_of(node.finalbody.body, scope, owner_class)
        elif isinstance(node, cst.With):
            items = tuple(
                WithItem(self.expr(item.item, scope), self.target(item.asname.name, scope) if item.asname else None)
                for item in node.items
            )
            yield With(items, self.body_of(node.body, scope, owner_class), self.span(node))
        elif isinstance(node, cst.Match):
            yield Evaluate(self.expr(node.subject, scope))
            yield Branch(tuple(self.body_of(case.body, scope, owner_class) for case in node.cases) + ((),))

    def small_statement(self, node: cst.CSTNode, scope: str, module_level: bool) -> Iterable[Stmt]:
        if isinstance(node, cst.Assign):
            targets = tuple(self.target(t.target, scope) for t in node.targets)
            yield Assign(targets, self.expr(node.value, scope), self.span(node))
        elif isinstance(node, cst.AnnAssign):
            if node.value is not None:
                yield Assign((self.target(node.target, scope),), self.expr(node.value, scope), self.span(node))
        elif isinstance(node, cst.AugAssign):
            current = self.expr(node.target, scope)
            yield Assign((self.target(node.target, scope),), Combine((current, self.expr(node.value, scope))), self.span(node))
        elif isinstance(node, cst.Expr):
            yield Evaluate(self.expr(node.value, scope))
        elif isinstance(node, cst.Return):
            yield Return(self.expr(node.value, scope) if node.value is not None else None)
        elif isinstance(node, cst.Raise) and node.exc is not None:
            yield Evaluate(self.expr(node.exc, scope))
        elif isinstance(node, (cst.Import, cst.ImportFrom)):
            yield from self.import_bindings(node, module_level)

    def import_bindings(self, node: cst.Import | cst.ImportFrom, module_level: bool) -> Iterable[Stmt]:
        """``import a.b as c`` binds ``c`` to module ``a.b``; ``import a.b`` binds ``a``; and so on."""
        span = self.span(node)
        if isinstance(node, cst.Import):
            for alias in node.names:
                dotted = _dotted(alias.name)
                if alias.asname is not None:
                    yield Assign((NameTarget(_dotted(alias.asname.name)),), Import(dotted), span)
                else:
                    head = dotted.split(".")[0]
                    yield Assign((NameTarget(head),), Import(head), span)
            return
        base = "." * len(node.relative) + (_dotted(node.module) if node.module is not None else "")
        base = resolve_relative(base, self.module, self.is_package) if node.relative else base
        if isinstance(node.names, cst.ImportStar):
            if module_level:
                self.star_imports.append(base)
            return
        for alias in node.names:
            name = _dotted(alias.name)
            local = _dotted(alias.asname.name) if alias.asname is not None else name
            yield Assign((NameTarget(local),), Import(f"{base}.{name}" if base else name), span)

    def function_def(self, node: cst.FunctionDef, scope: str, owner_class: str | None) -> Define:
        qualname = f"{scope}{node.name.value}"
        decorators = tuple(self.expr(d.decorator, scope) for d in node.decorators)
        inner_scope = f"{qualname}.<locals>."
        params = _parameter_names(node.params)
        self.functions.append(
            FunctionSummary(
                name=node.name.value,
                qualname=qualname,
                params=params,
                decorators=decorators,
                body=self.body_of(node.body, inner_scope),
                span=self.span(node.name),
                owner_class=owner_class,
                is_staticmethod=any(isinstance(d, Ref) and d.name == "staticmethod" for d in decorators),
            )
        )
        return Define(node.name.value, qualname, is_class=False)

    def class_def(self, node: cst.ClassDef, scope: str) -> Define:
        qualname = f"{scope}{node.name.value}"
        body = self.body_of(node.body, f"{qualname}.", owner_class=qualname)
        methods = tuple((s.name, s.qualname) for s in body if isinstance(s, Define) and not s.is_class)
        self.classes.append(
            ClassSummary(
                name=node.name.value,
                qualname=qualname,
                bases=tuple(self.expr(base.value, scope) for base in node.bases if base.keyword is None),
                decorators=tuple(self.expr(d.decorator, scope) for d in node.decorators),
                methods=methods,
                body=body,
                span=self.span(node.name),
            )
        )
        return Define(node.name.value, qualname, is_class=True)

    # -- targets and expressions ------------------------------------------------------------

    def target(self, node: cst.BaseExpression, scope: str) -> Target:
        if isinstance(node, cst.Name):
            return NameTarget(node.value)
        if isinstance(node, cst.Attribute):
            return AttrTarget(self.expr(node.value, scope), node.attr.value)
        if isinstance(node, (cst.Tuple, cst.List)):
            # Unpacking spreads the whole value over each element: ``logits, loss = model(x)``.
            return MultiTarget(tuple(self.target(element.value, scope) for element in node.elements))
        if isinstance(node, cst.StarredElement):
            return self.target(node.value, scope)
        return OtherTarget(tuple(self.children(node, scope)))

    def children(self, node: cst.CSTNode, scope: str) -> Iterable[Expr]:
        for child in node.children:
            if isinstance(child, cst.BaseExpression):
                yield self.expr(child, scope)
            elif not isinstance(child, (cst.BaseSuite, cst.BaseStatement)):
                yield from self.children(child, scope)

    def expr(self, node: cst.BaseExpression, scope: str) -> Expr:
        if isinstance(node, cst.Name):
            if node.value in _CONSTANT_NAMES:
                return Const(_CONSTANT_NAMES[node.value], self.span(node))
            return Ref(node.value)
        if isinstance(node, cst.Attribute):
            return Attr(self.expr(node.value, scope), node.attr.value)
        if isinstance(node, cst.Call):
            args = tuple(
                Arg(self.expr(a.value, scope), "*" * len(a.star) if a.star else (a.keyword.value if a.keyword else None))
                for a in node.args
            )
            return Call(self.expr(node.func, scope), args, self.span(node))
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float, cst.Imaginary)):
            return self.literal(node)
        if isinstance(node, (cst.List, cst.Tuple, cst.Set, cst.Dict)):
            return self.container(node, scope)
        if isinstance(node, cst.IfExp):
            return Choice((self.expr(node.body, scope), self.expr(node.orelse, scope)))
        if isinstance(node, cst.BooleanOperation):
            return Choice((self.expr(node.left, scope), self.expr(node.right, scope)))
        if isinstance(node, cst.Lambda):
            return self.lambda_function(node, scope)
        if isinstance(node, (cst.Await, cst.StarredElement)):
            inner = node.expression if isinstance(node, cst.Await) else node.value
            return self.expr(inner, scope)
        if isinstance(node, cst.NamedExpr):
            return self.expr(node.value, scope)
        if isinstance(node, cst.Subscript):
            return Item(self.expr(node.value, scope))
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
            return Elements((self.expr(node.elt, scope),))
        if isinstance(node, cst.DictComp):
            return Elements((self.expr(node.value, scope),))
        return Combine(tuple(self.children(node, scope)))

    def literal(self, node: cst.BaseExpression) -> Expr:
        try:
            return Const(self.literal_value(node), self.span(node))
        except _NotLiteral:
            return Combine(())

    def container(self, node: cst.List | cst.Tuple | cst.Set | cst.Dict, scope: str) -> Expr:
        try:
            return Const(self.literal_value(node), self.span(node))
        except _NotLiteral:
            pass
        # Dict displays keep their values (``**mapping`` entries their mapping); keys do not matter here.
        return Elements(tuple(self.expr(element.value, scope) for element in node.elements))

    def literal_value(self, node: cst.BaseExpression) -> object:
        """The hashable Python value of a literal, with imported names kept as ``Symbol``s."""
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float, cst.Imaginary)):
            try:
                value = node.evaluated_value
            except (ValueError, SyntaxError, MemoryError, RecursionError) as error:
                raise _NotLiteral from error
            if value is None or isinstance(value, bytes) and not isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
                raise _NotLiteral  # an f-string part: not a literal
            return value
        if isinstance(node, cst.Name) and node.value in _CONSTANT_NAMES:
            return _CONSTANT_NAMES[node.value]
        if isinstance(node, cst.Attribute) and _dotted(node):
            return Symbol(_dotted(node))
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            value = self.literal_value(node.expression)
            if isinstance(value, (int, float, complex)):
                return -value
        if isinstance(node, (cst.List, cst.Set, cst.Tuple)):
            if not all(isinstance(e, cst.Element) for e in node.elements):
                raise _NotLiteral
            items = tuple(self.literal_value(e.value) for e in node.elements)
            return items if isinstance(node, cst.Tuple) else ListLiteral(items)
        if isinstance(node, cst.Dict):
            if not all(isinstance(e, cst.DictElement) for e in node.elements):
                raise _NotLiteral
            return DictLiteral(tuple((self.literal_value(e.key), self.literal_value(e.value)) for e in node.elements))
        raise _NotLiteral

    def lambda_function(self, node: cst.Lambda, scope: str) -> FunctionRef:
        span = self.span(node)
        qualname = f"{scope}<lambda:{span.line}:{span.column}>"
        self.functions.append(
            FunctionSummary(
                name="<lambda>",
                qualname=qualname,
                params=_parameter_names(node.params),
                decorators=(),
                body=(Return(self.expr(node.body, f"{qualname}.<locals>.")),),
                span=span,
            )
        )
        return FunctionRef(qualname)


class _NotLiteral(Exception):
    pass


def _parameter_names(params: cst.Parameters) -> tuple[str, ...]:
    names = [p.name.value for p in (*params.posonly_params, *params.params)]
    if isinstance(params.star_arg, cst.Param):
        names.append("*" + params.star_arg.name.value)
    names.extend(p.name.value for p in params.kwonly_params)
    if params.star_kwarg is not None:
        names.append("**" + params.star_kwarg.name.value)
    return tuple(names)


def _dotted(node: cst.BaseExpression) -> str:
    """``a.b.c`` for a chain of names, else the empty string."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr.value}" if base else ""
    return ""
