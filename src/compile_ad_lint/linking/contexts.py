"""Execution contexts as abstract values: the forward-AD ``dual_level``, autocast states and their
context managers, ``backward_pass_autocast`` config states and patches, grad mode, null contexts,
exit stacks."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from ..core.findings import Condition
from ..core.locations import Location
from ..knowledge import torch_api as api
from ..summary.model import DictLiteral, ListLiteral, LiteralValue, Symbol
from .hashing import hashed_once


@dataclass(frozen=True)
class DualLevelContext:
    site: Location


@hashed_once
@dataclass(frozen=True)
class AutocastState:
    """Whether autocast is active; device/dtype are None when not known statically."""

    active: bool
    device: str | None = None
    dtype: str | None = None
    source: Location | None = None
    #: Human description of where the state comes from (``with torch.autocast(...)``, default, ...).
    origin: str = "no autocast"
    #: ``enabled=<flag>`` with a flag not known statically: active exactly when the flag (named as
    #: written, ``mixed_precision``, ``self.use_amp``) is true, so an ``if <flag>:`` arm can tell.
    condition: str | None = None
    #: The environment variable a launcher sets that makes it active (a framework's precision the
    #: code does not set: ``ACCELERATE_MIXED_PRECISION``): a run-time switch findings name.
    launched_by: str = ""
    #: The arms of run-time switches it was made on (``precision_context = torch.autocast(...)`` under
    #: ``if cfg.precision == "bf16":``, entered after the branch): it exists only where they hold.
    switches: tuple[Condition, ...] = ()

    def key(self) -> tuple:
        return (self.active, self.device, self.dtype)

    def describe(self) -> str:
        """``autocast off``, ``autocast on (cuda, bfloat16)``: kept on the state (a CAL002 message
        describes each of a backward's compiled outputs, 632 of them in the generated framework's
        trainer, and the language server builds it again at every edit)."""
        known = self.__dict__.get("_description")
        if known is None:
            details = ", ".join(p for p in (self.device, self.dtype) if p)
            known = "autocast off" if not self.active else f"autocast on ({details})" if details else "autocast on"
            object.__setattr__(self, "_description", known)
        return known

    def differs_from(self, other: AutocastState) -> bool:
        if self.active != other.active:
            return True
        if not self.active:
            return False
        return any(
            a is not None and b is not None and a != b
            for a, b in ((self.device, other.device), (self.dtype, other.dtype))
        )


NO_AUTOCAST = AutocastState(active=False)


def one_of(states: Iterable[AutocastState]) -> AutocastState | None:
    """The state a ``with`` over one of ``states`` enters (None: none): the first in a fixed order
    (active first; ties broken by where each comes from, never by a set's order, which differs
    between processes), with what the others made on the same run-time switches do not share left
    unknown. NVIDIA/physicsnemo's transformer trainer enters ``get_autocast_context(precision)``,
    float16 or bfloat16 by the config: a finding named bfloat16 under the float16 branch's
    condition. States made on other switches' arms stay apart: the first holds on its own arms,
    which a finding names (its darcy trainer's bfloat16 autocast under ``cfg.precision == "bf16"``)."""
    ordered = sorted(states, key=_preference)
    if not ordered:
        return None
    first = ordered[0]
    alike = [s for s in ordered if s.switches == first.switches]
    actives = [s for s in alike if s.active]

    def shared(field: str) -> str | None:
        return getattr(first, field) if all(getattr(s, field) == getattr(first, field) for s in actives) else None

    device, dtype, condition, launched_by = (
        shared("device"),
        shared("dtype"),
        shared("condition"),
        shared("launched_by"),
    )
    if (device, dtype, condition, launched_by) == (first.device, first.dtype, first.condition, first.launched_by):
        return first  # the others differ in nothing it claims
    return AutocastState(
        first.active,
        device,
        dtype,
        first.source,
        f"{first.origin} (one of {len({(s.key(), s.condition) for s in alike})} autocast states it may enter)",
        condition,
        launched_by or "",
        first.switches,
    )


def active_when(state: AutocastState, flag: str) -> AutocastState:
    """``state`` on exactly when ``flag`` is (``enabled=<flag>``, an autocast made or entered on the
    true arm of ``if <flag>:``), unless it is off or already on a flag of its own."""
    if state.active and state.condition is None:
        return replace(state, condition=flag)
    return state


def _preference(state: AutocastState) -> tuple:
    return (
        not state.active,
        state.device or "",
        state.dtype or "",
        state.source.sort_key() if state.source is not None else ("", 0, 0, 0),
        state.origin,
        state.condition or "",
        state.launched_by,
        tuple((c.expression, c.holds, str(c.default)) for c in state.switches),
    )


@dataclass(frozen=True)
class AutocastContext:
    state: AutocastState


@hashed_once
@dataclass(frozen=True)
class ConfigState:
    """The effective ``torch._functorch.config.backward_pass_autocast`` and where it was set.

    ``value`` is ``"same_as_forward"``, ``"off"``, a tuple of ``(device, dtype)`` pairs for the
    list-of-kwargs form, or None when it cannot be known statically.
    """

    value: LiteralValue = "same_as_forward"
    source: Location | None = None
    origin: str = "default"

    def describe(self) -> str:
        if isinstance(self.value, tuple):
            return (
                "backward_pass_autocast=[" + ", ".join(f"{{device_type={d}, dtype={t}}}" for d, t in self.value) + "]"
            )
        return (
            f"backward_pass_autocast={self.value!r}" if self.value is not None else "an unknown backward_pass_autocast"
        )


def config_value(literal: object) -> LiteralValue:
    """A literal ``backward_pass_autocast`` value in the form ``ConfigState`` compares (None if invalid)."""
    if isinstance(literal, str):
        return literal if literal in api.VALID_CONFIG_STRINGS else None
    if isinstance(literal, ListLiteral) and all(isinstance(item, DictLiteral) for item in literal.items):
        pairs = []
        for item in literal.items:
            device = item.get("device_type")
            dtype = item.get("dtype")
            dtype_text = api.dtype_name(
                dtype.name if isinstance(dtype, Symbol) else dtype if isinstance(dtype, str) else None
            )
            pairs.append((device if isinstance(device, str) else None, dtype_text))
        return tuple(pairs)
    return None


DEFAULT_CONFIG = ConfigState()


@dataclass(frozen=True)
class ConfigPatch:
    """``torch._functorch.config.patch(...)``; ``state`` is None when it patches other keys only."""

    state: ConfigState | None


@dataclass(frozen=True)
class NullContext:
    pass


@dataclass(frozen=True)
class ExitStackContext:
    """A ``contextlib.ExitStack()`` made at ``site``, with the contexts ``stack.enter_context(...)``
    entered into it where the stack is known by name: a helper that returns the stack
    (``stack = ExitStack(); stack.enter_context(torch.autocast(...)); return stack``) gives its
    caller's ``with`` what it entered."""

    site: Location
    entered: frozenset = frozenset()


@dataclass(frozen=True)
class GradMode:
    """``torch.no_grad()``, ``torch.inference_mode()``, ``torch.set_grad_enabled(...)``,
    ``torch.enable_grad()``: ``enabled`` is None when it cannot be known statically."""

    enabled: bool | None


#: The context values a ``with`` (or an exit stack's ``enter_context``) changes the context by.
ENTERED_CONTEXTS = (DualLevelContext, AutocastContext, ConfigPatch, GradMode, ExitStackContext)
