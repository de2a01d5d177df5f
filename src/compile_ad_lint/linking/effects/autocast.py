"""Autocast and the functorch config (``knowledge.torch_api``): ``torch.autocast`` and its device
spellings as context managers with their state, ``torch._functorch.config.patch(...)`` (a context
that sets ``backward_pass_autocast``, whose every written value is checked), null contexts and
exit stacks (what ``enter_context`` enters: ``Calls.enter_into_stack``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from ...core.locations import Location
from ...knowledge import torch_api as api
from ...knowledge.effects import Effect
from ...summary import model as ir
from ..arguments import Args, Values, keyword_arg, positional, spread_keyword, written_argument
from ..contexts import AutocastContext, AutocastState, ConfigPatch, ConfigState, ExitStackContext, NullContext
from ..frames import Frame
from ..stores import flag_key
from ..values import ConstVal, External
from .registry import register

if TYPE_CHECKING:
    from ..engine_context import EngineContext

_MISSING = object()


def constant_string(values: Values | None) -> str | None:
    strings = {v.value for v in values or () if isinstance(v, ConstVal) and isinstance(v.value, str)}
    return strings.pop() if len(strings) == 1 else None


def symbol_dtype(values: Values) -> str | None:
    names = {api.dtype_name(v.name) for v in values if isinstance(v, External)}
    names |= {api.dtype_name(v.value) for v in values if isinstance(v, ConstVal) and isinstance(v.value, str)}
    return names.pop() if len(names) == 1 else None


def autocast_state(name: str, args: Args, site: Location, frame: Frame | None = None) -> AutocastState:
    spelling = api.AUTOCAST[name]
    device = spelling.device
    if spelling.device_argument is not None:
        keyword, position = spelling.device_argument
        device = constant_string(positional(args, position) or _keyword(args, keyword))
    keyword, position = spelling.dtype_argument
    dtype_values = _keyword(args, keyword) or positional(args, position)
    dtype = (
        symbol_dtype(dtype_values)
        if dtype_values
        else (spelling.default_dtype or api.AUTOCAST_DEFAULT_DTYPE.get(device or ""))
    )
    keyword, enabled_position = spelling.enabled_argument
    enabled_values = _keyword(args, keyword) or (
        positional(args, enabled_position) if enabled_position is not None else None
    )
    enabled = {v.value for v in enabled_values if isinstance(v, ConstVal)} if enabled_values else {True}
    # ``enabled=<flag>`` (or the flag in its position): on exactly when the flag is; known inside
    # an ``if <flag>:`` arm.
    written = written_argument(frame.call_args if frame else (), keyword, enabled_position)
    known = all(isinstance(v, ConstVal) for v in enabled_values or ()) and len({bool(v) for v in enabled}) <= 1
    condition = enabled_test(written) if enabled_values and not known else None
    if condition is not None and frame is not None and condition in frame.assumptions:
        enabled, condition = {frame.assumptions[condition]}, None
    active = enabled != {False}  # "may be autocast" counts as autocast
    return AutocastState(
        active, device, dtype if active else None, site, f"`{name}(...)`", condition if active else None
    )


def _keyword(args: Args, name: str) -> Values | None:
    """Keyword ``name`` as passed, or through ``**kwargs`` (``torch.autocast(**autocast_kwargs)``)."""
    return keyword_arg(args, name) or spread_keyword(args, name)


def enabled_test(expr: ir.Expr | None) -> str | None:
    """An ``enabled=`` argument as written, when it is a flag (``args.amp``, ``self.use_amp``), its
    negation (``not args.no_amp``) or a flag compared with a literal (``args.amp != 'none'``,
    DenoisingZoo's ``settings.autocast_dtype is not None``, VAR's ``args.fp16 > 0``): what a finding
    needing it names."""
    key = flag_key(expr)
    if key is not None or not isinstance(expr, ir.Combine):
        return key
    if expr.op == "not" and len(expr.parts) == 1:
        negated = flag_key(expr.parts[0])
        return f"not {negated}" if negated is not None else None
    if expr.op not in ("==", "!=", "is", "is not", *ir.ORDERINGS) or len(expr.parts) != 2:
        return None
    flag, literal = expr.parts
    name = flag_key(flag)
    if name is None or not isinstance(literal, ir.Const):
        return None
    value = literal.value
    if expr.op in ir.ORDERINGS:  # ``args.fp16 > 0``: a level compared with a number
        literal_kind = isinstance(value, (int, float)) and not isinstance(value, bool)
    else:
        literal_kind = value is None or (expr.op in ("==", "!=") and isinstance(value, (str, int, bool)))
    return f"{name} {expr.op} {value!r}" if literal_kind else None


@register(Effect.AUTOCAST)
def autocast(engine: EngineContext, row: object, name: str, args: Args, site: Location, frame: Frame) -> Values:
    return frozenset([AutocastContext(autocast_state(name, args, site, frame))])


def config_patch_state(
    engine: EngineContext, row: api.ConfigPatch, args: Args, site: Location, frame: Frame
) -> ConfigState | None:
    values = keyword_arg(args, row.key)
    first = positional(args, 0)
    if values is None and first:
        if any(isinstance(v, ConstVal) and v.value == row.key for v in first):
            values = positional(args, 1)
        else:
            picked = {
                v.value.get(row.key, _MISSING)
                for v in first
                if isinstance(v, ConstVal) and isinstance(v.value, ir.DictLiteral)
            }
            picked.discard(_MISSING)
            # A dict literal's values are literals themselves (``DictLiteral.get`` is typed loosely).
            values = frozenset(ConstVal(cast(ir.LiteralValue, p)) for p in picked) or None
    if values is None:
        return None
    engine.record_config_writes(values, site, "config.patch")
    return engine.config_state(values, site, "config.patch")


@register(Effect.CONFIG_PATCH)
def config_patch(
    engine: EngineContext, row: api.ConfigPatch, name: str, args: Args, site: Location, frame: Frame
) -> Values:
    return frozenset([ConfigPatch(config_patch_state(engine, row, args, site, frame))])


@register(Effect.NULL_CONTEXT)
def null_context(engine: EngineContext, row: object, name: str, args: Args, site: Location, frame: Frame) -> Values:
    return frozenset([NullContext()])


@register(Effect.EXIT_STACK)
def exit_stack(engine: EngineContext, row: object, name: str, args: Args, site: Location, frame: Frame) -> Values:
    return frozenset([ExitStackContext(site)])
