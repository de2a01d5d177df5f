"""Per-module summaries: a small, serializable intermediate form of each module.

A summary keeps only what the rules need: function and class bodies as a tiny
statement/expression language (imports become assignments of ``Import`` expressions), and the
suppression comments. Everything is a frozen dataclass of plain values with precise annotations, so summaries can be
cached on disk as data (``compile_ad_lint.cache.codec`` checks entries against these annotations)
and shared between processes; the linker (``compile_ad_lint.linking``) interprets them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Union

# ---------------------------------------------------------------------------------------------
# Spans


@dataclass(frozen=True)
class Span:
    """1-based line/column range inside the module (end column exclusive)."""

    line: int
    column: int
    end_line: int
    end_column: int


# ---------------------------------------------------------------------------------------------
# Expressions


@dataclass(frozen=True)
class Symbol:
    """A dotted name inside a literal container, as written (``torch.bfloat16`` in a config dict)."""

    name: str


@dataclass(frozen=True)
class ListLiteral:
    items: tuple


@dataclass(frozen=True)
class DictLiteral:
    items: tuple  # ((key, value), ...)

    def get(self, key: object, default: object = None) -> object:
        """The item under ``key``: the last one written, as the dict Python builds keeps it."""
        return next((v for k, v in reversed(self.items) if k == key), default)


#: What a literal in the source can be: a constant, or a container of literals and ``Symbol``s
#: (a tuple display stays a tuple; list and set displays are ``ListLiteral``).
LiteralValue = Union[None, bool, int, float, complex, str, bytes, tuple, Symbol, ListLiteral, DictLiteral]


@dataclass(frozen=True)
class Const:
    """A literal: str, number, bool, None, or a hashable container of literals and ``Symbol``s."""

    value: LiteralValue
    span: Span | None = None


@dataclass(frozen=True)
class Ref:
    """A name bound in the module (local, parameter, global, builtin): resolved by interpretation."""

    name: str


@dataclass(frozen=True)
class Import:
    """What an import statement binds: the module or attribute with this absolute dotted name."""

    name: str


@dataclass(frozen=True)
class Attr:
    base: Expr
    attr: str


@dataclass(frozen=True)
class Arg:
    """A call argument; ``keyword`` is None for positional, ``"*"``/``"**"`` for star arguments."""

    value: Expr
    keyword: str | None = None


@dataclass(frozen=True)
class Call:
    func: Expr
    args: tuple[Arg, ...]
    span: Span


#: The ordering comparisons a ``Combine`` names (``args.fp16 > 0``).
ORDERINGS = ("<", "<=", ">", ">=")


@dataclass(frozen=True)
class Combine:
    """Any other expression: its value derives from all its parts (arithmetic, subscripts, ...)."""

    parts: tuple[Expr, ...]
    #: ``==``, ``!=``, ``is``, ``is not``, ``in``, ``not in`` or an ordering (``ORDERINGS``) of two
    #: parts, or ``not`` of one: known when its parts are (``if optimizer_idx == 0:`` with a literal
    #: argument picks its arm).
    op: str = ""


@dataclass(frozen=True)
class Elements:
    """A list/tuple/set/dict display or comprehension that is not a pure literal."""

    parts: tuple[Expr, ...]
    #: A dict display's keys, one per part, when every key is a string literal (``{"aux": a}``).
    keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class Item:
    """An element of ``base``: ``base[...]``, or the target of ``for ... in base``."""

    base: Expr
    #: ``base[1]``, ``base["aux"]``: a subscript that is a non-negative int or a string literal.
    index: int | str | None = None


#: Between a comprehension variable's name and where its comprehension is (``c@12:8``): the name it
#: is bound under, of that comprehension's own (no Python name holds it).
COMPREHENSION_MARK = "@"


def written_name(name: str) -> str:
    """``name`` as the code writes it (``c`` for a comprehension's ``c@12:8``)."""
    return name.partition(COMPREHENSION_MARK)[0]


@dataclass(frozen=True)
class Choice:
    """``a if c else b`` and ``a or b``: the value is one of the options. For ``a if c else b``,
    ``test`` is ``c`` (without a leading ``not``, which swaps the options) and ``text`` it as
    written: it picks or names the option as an ``if`` on it would."""

    options: tuple[Expr, ...]
    test: Expr | None = None
    text: str = ""


@dataclass(frozen=True)
class FunctionRef:
    """A function or lambda defined in this module, by qualified name."""

    qualname: str


Expr = Union[Const, Ref, Import, Attr, Call, Combine, Elements, Item, Choice, FunctionRef]


# ---------------------------------------------------------------------------------------------
# Statements


@dataclass(frozen=True)
class NameTarget:
    name: str


@dataclass(frozen=True)
class AttrTarget:
    """``base.attr = ...`` (``self.block = ...``, ``torch._functorch.config.x = ...``)."""

    base: Expr
    attr: str


@dataclass(frozen=True)
class OtherTarget:
    """A subscript or other target whose value the analysis does not track; parts still evaluated."""

    parts: tuple[Expr, ...]


@dataclass(frozen=True)
class MultiTarget:
    """Tuple unpacking; each element receives (an over-approximation of) the whole value."""

    targets: tuple[Target, ...]


Target = Union[NameTarget, AttrTarget, OtherTarget, MultiTarget]


@dataclass(frozen=True)
class Assign:
    targets: tuple[Target, ...]
    value: Expr
    span: Span


@dataclass(frozen=True)
class Evaluate:
    """An expression statement (typically a call); ``span`` is the statement's (None for the test of
    an ``if``/``while``, which is part of a compound statement)."""

    expr: Expr
    span: Span | None = None
    #: ``yield <expr>`` (a generator's, or a ``@contextmanager``'s: where the ``with`` body runs).
    yields: bool = False


@dataclass(frozen=True)
class WithItem:
    context: Expr
    target: Target | None


@dataclass(frozen=True)
class With:
    items: tuple[WithItem, ...]
    body: tuple[Stmt, ...]
    span: Span


@dataclass(frozen=True)
class Return:
    value: Expr | None
    span: Span | None = None


@dataclass(frozen=True)
class Branch:
    """Control flow with alternatives (if/else, try/except, loops as body-or-nothing, match).

    For ``if``, ``condition`` chooses between the two arms when it is a known constant that nothing
    can rebind at launch (``linking/analyses/switches.py``); the first arm runs when it is true.
    """

    arms: tuple[tuple[Stmt, ...], ...]
    condition: Expr | None = None
    #: A loop's body (``for``/``while``): it may run several times, so what it does later in one
    #: iteration may come before what it does earlier in the next.
    loop: bool = False
    #: The ``if`` test as written (``args.compile``; without its ``not``, which swaps the arms), for
    #: the findings that hold on one arm of a run-time switch.
    test: str = ""


@dataclass(frozen=True)
class Define:
    """A nested ``def``/``class`` statement binding ``name`` when executed."""

    name: str
    qualname: str
    is_class: bool


Stmt = Union[Assign, Evaluate, With, Return, Branch, Define]


def statements_in(body: Iterable[Stmt]) -> Iterator[Stmt]:
    """Every statement of ``body`` in order, those in ``with`` blocks and in the arms of branches
    (loops, ``try``) included, each compound statement before its own; not those of the functions
    and classes it defines."""
    for statement in body:
        yield statement
        if isinstance(statement, With):
            yield from statements_in(statement.body)
        elif isinstance(statement, Branch):
            for arm in statement.arms:
                yield from statements_in(arm)


# ---------------------------------------------------------------------------------------------
# Definitions and modules


@dataclass(frozen=True)
class Definition:
    """What executing a function's ``def`` statement reads of it: its decorators (applied in
    order), where it is (the site of what they make of it), whether it is a static or a class
    method. A walk that runs a class body depends on these of each method, not on their bodies."""

    decorators: tuple[Expr, ...]
    span: Span
    is_staticmethod: bool
    is_classmethod: bool = False
    #: ``@property`` (or ``cached_property``): reading the attribute on an instance calls it.
    is_property: bool = False
    #: ``@name.setter``/``@name.deleter`` of a property of the same name: the name keeps the getter.
    is_property_accessor: bool = False


@dataclass(frozen=True)
class FunctionSummary:
    name: str
    qualname: str
    params: tuple[str, ...]
    decorators: tuple[Expr, ...]
    body: tuple[Stmt, ...]
    span: Span
    #: Qualified name of the class this function is a method of, if any.
    owner_class: str | None = None
    is_staticmethod: bool = False
    #: ``@classmethod``: its first parameter is a class, so the harvest of instance attributes skips
    #: it (the engine does not bind that parameter: docs/limitations.md).
    is_classmethod: bool = False
    #: First and last line of the definition (from ``def``, decorators excluded; a lambda's own).
    lines: tuple[int, int] | None = None
    is_property: bool = False
    is_property_accessor: bool = False
    #: Parameters' literal defaults (``enabled=False``, ``mask=None``): what a call omitting them binds.
    defaults: tuple[tuple[str, LiteralValue], ...] = ()
    #: Parameters after ``*`` or ``*args``: only a keyword binds them.
    keyword_only: tuple[str, ...] = ()

    @cached_property
    def star(self) -> str | None:
        """The ``*args`` parameter's name, if any (a bare ``*`` has none)."""
        return next((p[1:] for p in self.params if p.startswith("*") and not p.startswith("**")), None)

    @property
    def receiver(self) -> str | None:
        """A method's first parameter (``self``, ``cls``), through which it reaches its instance."""
        return self.params[0] if self.owner_class is not None and self.params else None

    @cached_property
    def definition(self) -> Definition:
        """One object per summary, so that walks recorded against it compare by identity."""
        return Definition(
            self.decorators,
            self.span,
            self.is_staticmethod,
            self.is_classmethod,
            self.is_property,
            self.is_property_accessor,
        )


@dataclass(frozen=True)
class ClassSummary:
    name: str
    qualname: str
    bases: tuple[Expr, ...]
    decorators: tuple[Expr, ...]
    methods: tuple[tuple[str, str], ...]  # (method name, function qualname)
    body: tuple[Stmt, ...]
    span: Span
    #: Names the body declares with a scalar annotation (``compile: bool``, ``mode: str | None``) or
    #: gives a literal default other than None: a config class's fields (``linking/analyses/switches.py``).
    fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class Suppression:
    line: int
    #: Codes named in the comment; empty means every code (a bare noqa comment).
    codes: frozenset[str]


@dataclass(frozen=True)
class ParseFailure:
    message: str
    line: int = 1
    column: int = 1
    #: A recursion limit, not the content, caused it: true of this run's stack only, never cached.
    from_recursion_limit: bool = False


@dataclass(frozen=True)
class BlockSummary:
    """The LibCST summary of one top-level statement (or of a whole file, see ``outline``)."""

    body: tuple[Stmt, ...]
    functions: tuple[FunctionSummary, ...]
    classes: tuple[ClassSummary, ...]
    star_imports: tuple[str, ...] = ()
    failure: ParseFailure | None = None

    @cached_property
    def function_index(self) -> dict[str, FunctionSummary]:
        return {f.qualname: f for f in self.functions}

    @cached_property
    def class_index(self) -> dict[str, ClassSummary]:
        return {c.qualname: c for c in self.classes}
