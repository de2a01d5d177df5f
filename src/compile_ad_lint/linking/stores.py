"""What reach and its effects share: the store rules of heap cells, assignment targets and the
containers a loop reads, what compiling a value compiles, flags as written, literal arguments."""

from __future__ import annotations

from collections.abc import Iterable

from ..summary import model as ir
from .arguments import Args, keyword_arg, positional
from .values import (
    Collection,
    Compiled,
    ConstVal,
    Data,
    Value,
    Wrapper,
    normalize,
)

#: Most modules whose import side effects (registrations) are run for one analysis.
MAX_SIDE_EFFECT_MODULES = 64


def argument_or_none(args: Args, keyword: str, index: int | None) -> frozenset | None:
    """The argument given by ``keyword`` or at ``index``; None when not given."""
    found = keyword_arg(args, keyword)
    if found is None and index is not None:
        found = positional(args, index) or None
    return found


def constants_of(values: Iterable[object] | None) -> set | None:
    """The literal values among ``values``, or None when one of them is not a literal."""
    if values is None:
        return None
    constants = [v for v in values if isinstance(v, ConstVal)]
    if not constants or len(constants) != len(list(values)):
        return None
    return {v.value for v in constants}


def compile_target(value: Value) -> Value | None:
    """What compiling ``value`` compiles: a compiled module's original, through plain wrappers
    (``torch.compile(DDP(torch.compile(m)))`` compiles ``m``). Without this, code walked again (a
    method that compiles ``self.model``, a loop re-compiling ``model.layers``) would nest compiled
    values one level per walk. Wrappers that change what runs (autocast, frozen) are kept."""
    while True:
        if isinstance(value, Compiled):
            if value.target is None:
                return None
            value = value.target
        elif isinstance(value, Wrapper) and value.autocast is None and not value.frozen and len(value.inner) == 1:
            value = next(iter(value.inner))
        else:
            break
    return None if isinstance(value, Data) else value


def joined_store(current: frozenset, added: frozenset) -> frozenset:
    """``current`` plus ``added``, normalized (data weaker than the known data adds nothing)."""
    return normalize(current | added)


def merged_store(current: frozenset, added: frozenset) -> frozenset:
    """``current`` plus ``added``, the stored elements of a container kept in one collection
    (one per store would nest and grow with every loop iteration)."""
    stores = [v for v in added if isinstance(v, Collection) and not v.sequential and not v.positions]
    if not stores:
        return normalize(current | added)
    old = [
        v
        for v in current
        if isinstance(v, Collection) and not v.sequential and not v.positions and (v.items or v.by_name)
    ]
    items = frozenset().union(*(c.items for c in old + stores))
    kept = frozenset(v for v in current if v not in old) | frozenset(v for v in added if v not in stores)
    by_name = any(c.by_name for c in old + stores)  # an ``nn.ModuleDict`` stays one when items are added
    return normalize(kept | {Collection(normalize(items), by_name=by_name)})


def flag_key(expr: ir.Expr | None) -> str | None:
    """``mixed_precision``, ``self.use_amp``, ``args.amp``: a flag as written, for path sensitivity."""
    if isinstance(expr, ir.Ref):
        return ir.written_name(expr.name)
    if isinstance(expr, ir.Attr):
        base = flag_key(expr.base)
        return f"{base}.{expr.attr}" if base else None
    return None


def target_of(expr: ir.Expr) -> ir.Target | None:
    """The assignment target that rebinds what ``expr`` names (a name or an attribute)."""
    if isinstance(expr, ir.Ref):
        return ir.NameTarget(expr.name)
    if isinstance(expr, ir.Attr):
        return ir.AttrTarget(expr.base, expr.attr)
    return None


def container_of(expr: ir.Expr) -> ir.Expr:
    """``model.layers`` for ``model.layers.values()``, ``enumerate(model.layers)``, ``model.layers.named_children()``."""
    while isinstance(expr, ir.Call):
        func = expr.func
        if (
            isinstance(func, ir.Attr)
            and func.attr in ("values", "items", "keys", "children", "named_children")
            and not expr.args
        ):
            expr = func.base
        elif (
            isinstance(func, ir.Ref)
            and func.name in ("enumerate", "reversed", "list", "tuple", "iter", "sorted", "zip")
            and expr.args
        ):
            expr = expr.args[0].value
        else:
            break
    return expr
