"""A call's arguments as the interpreter evaluates them, and how rules of the call read them.

``Args`` keeps the call's order: ``(None, values)`` for a positional argument, ``("*", values)`` for
a starred one (whatever it spreads may be any later position), ``(name, values)`` for a keyword.
The interpreter and ``Reach`` both read arguments through these helpers.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ..summary import model as ir
from ..summary.model import DictLiteral
from .values import ConstVal, Data, derived_from_sets

#: What an expression may evaluate to: a frozenset of abstract values (``values.Value``).
Values = frozenset
Args = tuple[tuple[str | None, Values], ...]


def positional(args: Args, index: int) -> Values:
    """The values of positional argument ``index`` (a starred argument's when there are fewer)."""
    plain = [values for keyword, values in args if keyword is None]
    if index < len(plain):
        return plain[index]
    star = [values for keyword, values in args if keyword == "*"]
    return star[0] if star else frozenset()


def keyword_arg(args: Args, name: str) -> Values | None:
    """The values of keyword argument ``name``; None when the call does not pass it."""
    for keyword, values in args:
        if keyword == name:
            return values
    return None


def spread_keyword(args: Args, name: str) -> Values | None:
    """What ``**mapping`` arguments may pass as ``name``: a literal dict's entry, or unknown data when a
    mapping is not a literal (``Fabric(**fabric_kwargs)`` after ``fabric_kwargs.update(precision=...)``);
    None when no mapping is spread or none of the literal ones has the key."""
    found: set = set()
    for keyword, values in args:
        if keyword != "**":
            continue
        for value in values:
            if isinstance(value, ConstVal) and isinstance(value.value, DictLiteral):
                entry = value.value.get(name, _ABSENT)
                if entry is not _ABSENT:
                    found.add(ConstVal(entry))  # type: ignore[arg-type]  # a literal dict holds literals
            else:
                found.add(Data())
    return frozenset(found) if found else None


_ABSENT = object()


def argument_values(args: Args) -> Iterator[object]:
    """Every value any argument may hold."""
    for _, values in args:
        yield from values


def argument_data(args: Args) -> Data:
    """The data a computation on every argument yields (``values.derived``)."""
    return derived_from_sets(values for _, values in args)


def fullgraph_of(args: Args, keyword: str) -> bool | None:
    """``fullgraph=<constant>`` (or ``nopython=``) as written: False when absent, None when not a constant."""
    values = keyword_arg(args, keyword)
    if values is None:
        return False
    if not values or not all(isinstance(v, ConstVal) for v in values):
        return None
    constants = {bool(v.value) for v in values}
    return constants.pop() if len(constants) == 1 else None


def written_argument(arguments: Sequence[ir.Arg], keyword: str, position: int | None) -> ir.Expr | None:
    """The expression written as ``keyword=`` or, when it has one, in ``position`` (before any star)."""
    for argument in arguments:
        if argument.keyword == keyword:
            return argument.value
    if position is None:
        return None
    for index, argument in enumerate(arguments):
        if argument.keyword is not None:
            return None  # keywords and stars come after the positions
        if index == position:
            return argument.value
    return None
