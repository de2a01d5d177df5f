"""Comparisons of literal values, decided as Python would: ``if optimizer_idx == 0:`` with the
literal ``1`` bound takes the other arm (a loss module's generator and discriminator paths, each
called with its own index), ``if x is None:`` with ``None`` bound takes its own.

Only literals (``ConstVal`` of None, bool, int, float, str, or a tuple/list of those for ``in``;
numbers or strings for an ordering) decide; anything else is data derived from the parts, as before.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from itertools import product

from ..summary.model import ListLiteral
from .arguments import Values
from .values import ConstVal

#: The most combinations of the parts' literals compared (beyond: not decided).
_MOST_COMBINATIONS = 16
_SCALARS = (type(None), bool, int, float, str)
#: The orderings ``summary.model.ORDERINGS`` names, as Python applies them.
_ORDERED = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def decided(op: str, parts: Sequence[Values]) -> Values | None:
    """The literal result of ``op`` on ``parts``, one value per outcome; None when not decided."""
    if not parts or any(not values for values in parts):
        return None
    if _combinations(parts) > _MOST_COMBINATIONS:
        return None
    literals = []
    for values in parts:
        found = []
        for value in values:
            if not isinstance(value, ConstVal) or not _comparable(value.value):
                return None
            found.append(value.value)
        literals.append(found)
    outcomes = set()
    for combination in product(*literals):
        outcome = _apply(op, combination)
        if outcome is None:
            return None
        outcomes.add(outcome)
    return frozenset(ConstVal(outcome) for outcome in outcomes)


def _combinations(parts: Sequence[Values]) -> int:
    count = 1
    for values in parts:
        count *= len(values)
    return count


def _comparable(value: object) -> bool:
    if isinstance(value, ListLiteral):
        value = value.items
    if isinstance(value, tuple):
        return all(isinstance(item, _SCALARS) for item in value)
    return isinstance(value, _SCALARS)


def _apply(op: str, operands: tuple) -> bool | None:
    if op == "not":
        return not operands[0] if len(operands) == 1 else None
    if len(operands) != 2:
        return None
    left, right = (o.items if isinstance(o, ListLiteral) else o for o in operands)
    if op == "==":
        return bool(left == right)
    if op == "!=":
        return bool(left != right)
    if op == "is":  # literals: identity is equality of value and type (``x is None``, ``flag is True``)
        return type(left) is type(right) and left == right
    if op == "is not":
        return not (type(left) is type(right) and left == right)
    if op in _ORDERED:  # numbers with numbers, strings with strings, as Python compares them
        numbers = all(isinstance(o, (int, float)) for o in (left, right))
        if not numbers and not all(isinstance(o, str) for o in (left, right)):
            return None
        return bool(_ORDERED[op](left, right))
    if op in ("in", "not in"):
        if not isinstance(right, (tuple, str)) or (isinstance(right, str) and not isinstance(left, str)):
            return None
        inside = left in right
        return inside if op == "in" else not inside
    return None
