"""What a fix changes, as data: rules build plans from the interpreter's facts, without the source.

``fixes.resolve`` carries a plan out on the files' text with LibCST (``fixes/transform.py``) and
records the result as edits. Every plan class here is a *kind* of fix; ``PLAN_KINDS`` lists them,
and the runtime tests (``tests/runtime/test_fixes_runtime.py``) run code fixed by each kind and check that
the hazard is gone, so a kind that is not verified there cannot be offered unnoticed.

Positions are ``Location``s as the analyzer reports them (1-based, end exclusive, characters).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Union, get_args

from .locations import Location

#: A ``backward_pass_autocast`` value a fix writes: ``"off"``, ``"same_as_forward"``, or the list
#: of autocast kwargs as ``(device_type, dtype)`` pairs, the dtype as the name of a ``torch``
#: attribute (``("cpu", "bfloat16")`` is ``{"device_type": "cpu", "dtype": torch.bfloat16}``).
ConfigLiteral = Union[str, tuple[tuple[str, str], ...]]


@dataclass(frozen=True)
class WrapInConfigPatch:
    """CAL002, safe: wrap the statements holding ``calls`` (compiled calls, in one file or several) in
    ``with torch._functorch.config.patch(backward_pass_autocast=<value>):``.

    Calls of one function body share one ``with`` over the smallest run of statements that holds
    them, unless that run would also hold one of ``avoid`` (compiled calls of the file whose
    backward context the config must keep); then each statement gets its own.
    """

    calls: tuple[Location, ...]
    value: ConfigLiteral
    avoid: tuple[Location, ...] = ()


@dataclass(frozen=True)
class SetConfigAtModuleLevel:
    """CAL002, unsafe (it changes every compiled call traced after the import, in every module):
    ``torch._functorch.config.backward_pass_autocast = <value>`` once, after the imports of ``path``."""

    path: str
    value: ConfigLiteral


@dataclass(frozen=True)
class ReplaceConfigValue:
    """CAL003: the ``backward_pass_autocast`` value written at ``site`` (an assignment or a
    ``config.patch(...)`` call). ``replacement`` None: make the dict (or the tuple of dicts) a list,
    safe; a string: that valid value instead of a misspelled one, unsafe."""

    site: Location
    replacement: str | None = None


@dataclass(frozen=True)
class CallUncompiled:
    """CAL001, unsafe (the region runs eagerly): call the uncompiled callable at ``call`` inside the
    forward-AD region: ``model._orig_mod(...)`` for a compiled module (``module``), ``f.__wrapped__(...)``
    for a compiled function, ``g(...)`` for ``torch.compile(g)(...)`` written in the region.

    ``compile_site`` is where the compiled callable was made; the plan is carried out only when that
    statement binds the name called (``f = torch.compile(g)``, ``@torch.compile def f``), so a wrapper
    around the compiled object (``DDP(...)``) never gets an attribute it does not have.
    """

    call: Location
    compile_site: Location
    module: bool


class BackendEdit(enum.Enum):
    """Where a compile call takes its backend, so that a fix can give it another one."""

    KEYWORD = "keyword"  # ``torch.compile(f, backend=...)``, ``partial(torch.compile, backend=...)``, ``m.compile(backend=...)``
    POSITIONAL = "positional"  # ``torch._dynamo.optimize("inductor")``: positional argument 0
    BARE_DECORATOR = "bare-decorator"  # ``@torch.compile`` becomes ``@torch.compile(backend=...)``


@dataclass(frozen=True)
class CompileSite:
    """Where a callable was compiled, and how findings name the compile (``torch.compile``,
    ``@torch.compile``, ``torch._dynamo.optimize``, ``functools.partial(torch.compile)``,
    ``nn.Module.compile()``); ``edit`` says where its backend is edited (None: no fix knows how)."""

    site: Location
    spelling: str
    edit: BackendEdit | None


@dataclass(frozen=True)
class CompileWithBackend:
    """CAL001, unsafe (it gives up inductor's speed everywhere the callables run): compile with
    ``backend=<backend>`` at each of ``sites``, every place a callable the call may reach was
    compiled (a call that may reach any of 14 models' compiled blocks keeps its finding until all
    14 are eager), each edited as its ``edit`` says. ``mode=``/``options=`` are inductor's and are
    dropped."""

    sites: tuple[CompileSite, ...]
    backend: str = "eager"


@dataclass(frozen=True)
class ReverseModeJacobian:
    """CAL001, unsafe (reverse mode costs one backward per output element): the
    ``jacobian(..., strategy="forward-mode")`` call at ``call`` gets ``strategy="reverse-mode"`` and
    loses ``vectorize=True`` (vectorized reverse mode fails on compiled callables; plain reverse
    mode differentiates them correctly)."""

    call: Location


FixPlan = Union[
    WrapInConfigPatch,
    SetConfigAtModuleLevel,
    ReplaceConfigValue,
    CallUncompiled,
    CompileWithBackend,
    ReverseModeJacobian,
]

#: The plan classes, in ``FixPlan``'s order.
PLAN_KINDS: tuple[type, ...] = get_args(FixPlan)


def string_literal(value: str) -> str:
    """A double-quoted Python literal for ``value``, escaping what ``repr`` escapes."""
    escaped = []
    for char in value:
        if char in '\\"':
            escaped.append("\\" + char)
        elif char.isprintable():
            escaped.append(char)
        else:
            escaped.append(repr(char)[1:-1])
    return '"' + "".join(escaped) + '"'


def config_source(value: ConfigLiteral) -> str:
    """The value as Python source: ``"off"``, ``[{"device_type": "cpu", "dtype": torch.bfloat16}]``."""
    if isinstance(value, str):
        return string_literal(value)
    return (
        "["
        + ", ".join(f'{{"device_type": {string_literal(device)}, "dtype": torch.{dtype}}}' for device, dtype in value)
        + "]"
    )


def paths_of(plan: FixPlan) -> tuple[str, ...]:
    """The files a plan edits (as findings show them)."""
    if isinstance(plan, WrapInConfigPatch):
        return tuple(sorted({call.path for call in plan.calls}))
    if isinstance(plan, SetConfigAtModuleLevel):
        return (plan.path,)
    if isinstance(plan, ReplaceConfigValue):
        return (plan.site.path,)
    if isinstance(plan, CallUncompiled):
        return (plan.call.path,)
    if isinstance(plan, CompileWithBackend):
        return tuple(sorted({compiled.site.path for compiled in plan.sites}))
    return (plan.call.path,)
