"""Abstract values used by the interpreter (its contexts are in ``contexts.py``).

A value stands for what a name may hold at run time: a function of the project, an external
object (``torch.compile``), a compiled callable with its backend, a context manager (autocast,
``dual_level``, ``config.patch``) or plain data. Data carries two facts the rules need: which
compiled calls it derives from, and whether it may be a dual tensor.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields, is_dataclass, replace
from pathlib import Path
from typing import Generic, TypeVar

from ..core.findings import Condition
from ..core.locations import Location, StatementSite
from ..core.plans import BackendEdit
from ..core.torch_versions import Series
from ..knowledge import frameworks as fw
from ..knowledge import torch_api as api
from ..summary.model import LiteralValue
from .contexts import (
    AutocastContext,
    AutocastState,
    ConfigPatch,
    ConfigState,
    DualLevelContext,
    ExitStackContext,
    GradMode,
    NullContext,
)
from .hashing import hashed_once

_T = TypeVar("_T")
_R = TypeVar("_R")

#: Backend recorded for ``torch.compile`` without ``backend=`` (inductor).
DEFAULT_BACKEND = "inductor"
#: Backend recorded when the ``backend=`` argument cannot be evaluated statically.
UNKNOWN_BACKEND = "<unknown>"


def describe_backend(backend: str) -> str:
    """How a message names a backend: ``backend='inductor'``, or "an unknown backend" when the
    argument cannot be evaluated (``UNKNOWN_BACKEND`` is a marker, never a backend's name)."""
    return "an unknown backend" if backend == UNKNOWN_BACKEND else f"backend={backend!r}"


@hashed_once
@dataclass(frozen=True)
class External:
    """Something outside the project, by qualified name (a module, function or class)."""

    name: str


@dataclass(frozen=True)
class OnSwitch:
    """An autocast or compile callable chosen on the arms of run-time switches (``autocast =
    torch.cuda.amp.autocast if use_fp16 else nullcontext``): what calling it gives carries them, as
    the context or compiled value chosen there would (meta-llama/llama-cookbook's train loop)."""

    callable: External
    conditions: tuple[Condition, ...]


@hashed_once
@dataclass(frozen=True)
class ExternalInstance:
    """An instance of an external class, e.g. ``torch.nn.Linear(...)``."""

    cls: str


@dataclass(frozen=True)
class ModuleRef:
    path: Path


@dataclass(frozen=True)
class Imported:
    """What an import bound, resolved only when used, so unused imports are never parsed."""

    name: str
    importer: Path


@hashed_once
@dataclass(frozen=True)
class FunctionVal:
    path: Path
    qualname: str
    bound_self: Value | None = None
    closure: tuple[tuple[str, frozenset], ...] = ()


@hashed_once
@dataclass(frozen=True)
class ClassVal:
    path: Path
    qualname: str


@hashed_once
@dataclass(frozen=True)
class Instance:
    cls: ClassVal


#: Longest tuple/list (a display, or what ``*args`` holds) whose elements are kept position by position.
MAX_POSITIONS = 8


@hashed_once
@dataclass(frozen=True)
class Collection:
    """A list, tuple, dict or ``nn.ModuleList``/``nn.Sequential`` of ``items``.

    A sequential collection (``nn.Sequential``) calls each item when called. ``positions`` keeps
    what each element of a tuple or list display may hold, in order, so that unpacking
    (``encoder, predictor = build()``) gives each name its own element; empty when unknown.
    """

    items: frozenset
    sequential: bool = False
    positions: tuple[frozenset[Value], ...] = ()
    #: Stands for collections nested deeper than ``MAX_NESTING``: ``items`` holds every value inside
    #: them at any depth, and iterating or indexing it yields itself as well (``elements``), so code
    #: that goes down any number of levels still reaches them.
    deeper: bool = False
    #: An ``nn.ModuleDict``: an attribute that is not the container's own is one of its items
    #: (``self.transformer.h``).
    by_name: bool = False

    def __post_init__(self) -> None:
        inner = max(_nesting(self.items), *(_nesting(p) for p in self.positions), 0)
        if inner >= MAX_NESTING:
            object.__setattr__(self, "items", _within_nesting(self.items))
            object.__setattr__(self, "positions", tuple(_within_nesting(p) for p in self.positions))
            inner = max(_nesting(self.items), *(_nesting(p) for p in self.positions), 0)
        self.__dict__["_nesting"] = inner + 1

    @property
    def nesting(self) -> int:
        """How many collections deep this one is (1 for a list of plain values)."""
        return self.__dict__["_nesting"]

    def elements(self) -> frozenset:
        """What iterating or indexing it yields."""
        return self.items | {self} if self.deeper else self.items


#: How deep collections nest (a dict of lists of modules is 2) before the levels below merge into
#: one ``deeper`` collection. Code that wraps what it stored before, run again for each call
#: (``self.skip = [self.skip]`` in diffusers' quantizer constructors, walked once per
#: configuration), otherwise nests without end and runs out of memory.
MAX_NESTING = 4


def _nesting(values: frozenset) -> int:
    return max((v.nesting for v in values if isinstance(v, Collection)), default=0)


def _within_nesting(values: frozenset) -> frozenset:
    """``values`` with each collection at the nesting limit replaced by one ``deeper`` collection of
    everything inside it."""
    deepest = [v for v in values if isinstance(v, Collection) and v.nesting >= MAX_NESTING]
    if not deepest:
        return values
    merged = [Collection(_inside(v), v.sequential, deeper=True, by_name=v.by_name) for v in deepest]
    return frozenset(values.difference(deepest).union(merged))


def _inside(collection: Collection) -> frozenset:
    """Every value in ``collection`` that is not itself a collection, at any depth."""
    found: set = set()
    opened: set[int] = set()  # nested collections share their parts: open each once
    pending = [collection]
    while pending:
        current = pending.pop()
        if id(current) in opened:
            continue
        opened.add(id(current))
        for value in current.items.union(*current.positions):
            if isinstance(value, Collection):
                pending.append(value)
            else:
                found.add(value)
    return normalize(found)


@hashed_once
@dataclass(frozen=True)
class Compiled:
    """A callable produced by ``torch.compile`` (or an equivalent spelling)."""

    target: Value | None
    backend: str
    site: Location
    spelling: str
    #: ``fullgraph=True`` (``nopython=True``): True, False, or None when not a constant.
    fullgraph: bool | None = False
    #: The target's torch series on which this compiles anything (``module.compile()`` in place on a
    #: torch.nn module: only where ``knowledge.behaviour`` says so); None: on every one.
    compiled_on: tuple[Series, ...] | None = None
    #: The run-time switches the compile ran under (``if args.compile:``).
    conditions: tuple[Condition, ...] = ()
    #: Which spelling compiled it (``spelling`` is how findings name it), and where a fix can give
    #: that compile another backend (None: nowhere it knows).
    how: api.CompileHow = api.CompileHow.CALL
    edit: BackendEdit | None = None


@dataclass(frozen=True)
class Compiler:
    """Something that compiles what it is applied to: ``torch.compile(backend=...)``, ``optimize(...)``."""

    backend: str
    site: Location
    spelling: str
    fullgraph: bool | None = False
    how: api.CompileHow = api.CompileHow.CALL
    edit: BackendEdit | None = None


def compiled_by(compiler: Compiler, target: Value | None, conditions: tuple[Condition, ...] = ()) -> Compiled:
    """What ``compiler`` makes of ``target``, applied under the run-time switches ``conditions``."""
    return Compiled(
        target,
        compiler.backend,
        compiler.site,
        compiler.spelling,
        compiler.fullgraph,
        conditions=conditions,
        how=compiler.how,
        edit=compiler.edit,
    )


@dataclass(frozen=True)
class Disabled:
    """``torch.compiler.disable(fn)``: runs eagerly, never traced."""

    target: Value | None


@dataclass(frozen=True)
class Disabler:
    """``torch.compiler.disable(recursive=...)`` used as a decorator factory."""


@hashed_once
@dataclass(frozen=True)
class Wrapper:
    """A module wrapper whose calls run ``inner`` (DDP, ``DataParallel``, FSDP, a framework's
    prepared module), optionally under ``autocast`` (accelerate's ``prepare`` with mixed precision,
    Fabric's ``_FabricModule``), or with every parameter frozen (``requires_grad_(False)``).

    ``module`` (and ``_orig_mod`` of a compiled inner) reach ``inner``; other attributes are
    the inner module's.
    """

    inner: frozenset[Value]
    kind: str
    site: Location | None = None
    autocast: AutocastState | None = None
    frozen: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "inner", _without_wrapping(self.inner, self._wrapping))

    @property
    def _wrapping(self) -> tuple:
        """What this wrapper does to the calls it runs: the same wrapping applied again inside it
        adds nothing."""
        return (self.kind, self.site, self.autocast, self.frozen)

    def forwards(self, name: str) -> bool:
        """Whether attribute ``name`` of this wrapper is the attribute of what it wraps: all but
        ``module`` of a wrapper that runs its module as is (the module itself) and ``forward`` or
        ``__call__`` of a frozen one (its calls run without gradients): ``Reach.wrapper_attribute``
        answers those."""
        if name == api.WRAPPED_MODULE.name:
            return self.frozen
        if name in (api.FORWARD.name, "__call__"):
            return not self.frozen
        return True

    def attribute_holders(self, name: str) -> frozenset:
        """The values attribute ``name`` of this wrapper is looked up on: itself when it does not
        forward the attribute, else what it wraps, with each wrapper inside that forwards it
        replaced the same way, at any depth. Kept on the wrapper per kind of name (``forwards``):
        wrappers of one model hold each other (a trainer's state keeps the model and its DDP and
        FSDP wrappers, each wrapping the others), and following every path through them looked
        each attribute up hundreds of times (composer's tests/models/test_hf_model.py)."""
        forward, module = api.FORWARD.name, api.WRAPPED_MODULE.name
        kind = name if name in (module, forward) else forward if name == "__call__" else ""
        known = self.__dict__.setdefault("_holders", {})
        found = known.get(kind)
        if found is None:
            if not self.forwards(name):
                found = frozenset([self])
            else:
                found = attribute_holders(self.inner, name)
            known[kind] = found
        return found


def attribute_holders(bases: frozenset, name: str) -> frozenset:
    """Each value that attribute ``name`` of ``bases`` is looked up on, once: a wrapper that
    forwards the attribute stands for what it wraps (``Wrapper.attribute_holders``)."""
    wrappers = [value for value in bases if isinstance(value, Wrapper)]
    if not wrappers:
        return bases
    return bases.difference(wrappers).union(*(wrapper.attribute_holders(name) for wrapper in wrappers))


def held_modules(value: object) -> frozenset:
    """The modules ``value`` runs: itself, or what its wrappers and compiled modules hold at any
    depth, each once (kept on each wrapper, for the reason ``Wrapper.attribute_holders`` gives). A
    compiled value of unknown target stands for itself."""
    while isinstance(value, Compiled) and value.target is not None:
        value = value.target
    if not isinstance(value, Wrapper):
        return frozenset([value])
    state = value.__dict__
    known = state.get("_held_modules")
    if known is None:
        known = state["_held_modules"] = frozenset().union(*(held_modules(v) for v in value.inner))
    return known


def _without_wrapping(values: frozenset, wrapping: tuple) -> frozenset:
    """``values`` with every wrapper doing ``wrapping``, at any depth, replaced by what it wraps.

    A module attribute that code wraps again each time it runs (trl's trainers freeze the FSDP
    module that ``prepare`` made of the frozen model, once per configuration walked: FSDP around a
    frozen wrapper around FSDP, 32 deep and growing until the check was killed) would otherwise
    nest without end; with each wrapping at most once on any path, the depth is bounded by the
    wrapping sites in the code."""
    wrappers = [v for v in values if isinstance(v, Wrapper)]
    if not wrappers:
        return values
    result = set(values.difference(wrappers))  # the others keep their stored hashes
    for value in wrappers:
        if value._wrapping == wrapping:
            result |= value.inner  # holds no such wrapping itself: it was made by this function
        else:
            inner = _without_wrapping(value.inner, wrapping)
            result.add(value if inner is value.inner else replace(value, inner=inner))
    return frozenset(result)


@dataclass(frozen=True)
class FrameworkObject:
    """An instance of a framework class from ``frameworks.FRAMEWORK_CLASSES`` (an accelerate
    ``Accelerator``, a Lightning ``Trainer`` or ``Fabric``, Hugging Face ``TrainingArguments``/
    ``Trainer``) with the settings that matter here, read from its constructor call."""

    kind: str
    site: Location
    #: The autocast the framework enters around the model's forward (None: none).
    autocast: AutocastState | None = None
    #: The backend the framework compiles prepared models with (None: it does not compile).
    compile_backend: str | None = None
    #: The environment variable that decides whether it compiles, when the code does not (a
    #: launcher's switch: ``ACCELERATE_DYNAMO_BACKEND``); "" when the code says.
    compile_launched_by: str = ""
    #: The argument that may turn compiling off, when the code passes it a value that is not one
    #: literal and may be the "off" one (``Accelerator(dynamo_backend=backend)`` with ``backend``
    #: "NO" on one path): the condition findings through the compiled model hold under.
    compile_switch: str = ""
    #: It compiles the model's children one by one (accelerate's regional compilation): its
    #: autocast then runs outside the compiled regions.
    compile_regional: bool = False
    #: Values the object holds for later (Hugging Face ``Trainer(model=...)``).
    held: frozenset[Value] = frozenset()
    #: Where the precision setting was written (a related location of findings).
    precision_site: Location | None = None


@dataclass(frozen=True)
class FrameworkCall:
    """A method from ``frameworks.FRAMEWORK_METHODS`` bound to its framework object (or, for a
    method inherited from a framework base class like ``LightningModule.manual_backward``, to
    nothing)."""

    owner: FrameworkObject | None
    name: str
    method: fw.FrameworkMethod


@hashed_once
@dataclass(frozen=True)
class Settings:
    """What the user sets when launching the run (an argparse namespace, an OmegaConf or JSON config,
    the environment: ``knowledge.switches``), and anything read from it: a branch on it may take
    either arm (``linking/analyses/switches.py``). Not a tensor: it carries no compiled history or tangent."""

    kind: str


@hashed_once
@dataclass(frozen=True)
class ConstVal:
    value: LiteralValue
    #: The run-time switch the literal was read from, when a caller passed it on
    #: (``maybe_compile(model, cfg.compile)``; ``""`` for a value computed from one): the code's
    #: default, which the user may change at launch, so a branch on it in the callee takes either arm.
    switch: str | None = None


@hashed_once
@dataclass(frozen=True)
class CompiledOutput:
    """The result of one call of a compiled callable, with the context the call ran in."""

    call_site: Location
    compiled: Compiled
    forward_autocast: AutocastState
    config: ConfigState
    #: The statement and function the compiled call is in (the config flip of confirm mode).
    site: StatementSite | None = None
    #: The run-time switches the compiled call ran under (its compile's are on ``compiled``).
    conditions: tuple[Condition, ...] = ()

    def path_conditions(self) -> frozenset[Condition]:
        """The switches this output exists under: its call's and its compile's."""
        return frozenset(self.conditions) | frozenset(self.compiled.conditions)


#: The compiled outputs alive in the process by their fields, one object for equal ones
#: (``compiled_output``); an output nothing else holds is dropped (keyed by the output itself, the
#: table would hold every output ever made).
_OUTPUTS: weakref.WeakValueDictionary[tuple, CompiledOutput] = weakref.WeakValueDictionary()


def compiled_output(
    call_site: Location,
    compiled: Compiled,
    forward_autocast: AutocastState,
    config: ConfigState,
    site: StatementSite,
    conditions: tuple[Condition, ...] = (),
) -> CompiledOutput:
    """The output of a compiled call, the same object as any equal one alive: data's origins are
    compared and merged all the time (memo keys, heap cells checked against walk summaries, set
    unions), and equal outputs made by other walks were compared field by field each time; the
    same object compares by identity."""
    made_of = (call_site, compiled, forward_autocast, config, site, conditions)
    found = _OUTPUTS.get(made_of)
    if found is None:
        found = _OUTPUTS[made_of] = CompiledOutput(*made_of)
    return found


@hashed_once
@dataclass(frozen=True)
class OutputElement:
    """Output ``index`` of the compiled call at ``call_site``; ``None``: the whole result (or data
    computed from all of it)."""

    call_site: Location
    index: int | None = None


@dataclass(frozen=True)
class Data:
    """Any other value (tensors above all).

    ``from_parameter`` marks values that depend on a parameter no caller has bound yet: when one of
    them decides an anchor, the callers of the function are worth analyzing.
    """

    origins: frozenset[CompiledOutput] = frozenset()
    dual: bool = False
    from_parameter: bool = False
    #: May require grad because it comes from a module call with trainable parameters, a
    #: parameter, or an explicit ``requires_grad``: what makes a frozen compiled module's
    #: backward run (unknown inputs are taken as data that does not require grad).
    requires_grad: bool = False
    #: Which outputs of compiled calls it derives from, element by element where the code indexed or
    #: unpacked a result (CAL005).
    elements: frozenset[OutputElement] = frozenset()
    #: Call sites of compiled calls whose whole result this value is, not yet indexed or computed on.
    exact: frozenset[Location] = frozenset()


Value = (
    External
    | OnSwitch
    | ExternalInstance
    | ModuleRef
    | Imported
    | FunctionVal
    | ClassVal
    | Instance
    | Collection
    | Compiled
    | Compiler
    | Disabled
    | Disabler
    | DualLevelContext
    | AutocastContext
    | ConfigPatch
    | NullContext
    | ExitStackContext
    | GradMode
    | Wrapper
    | FrameworkObject
    | FrameworkCall
    | Settings
    | ConstVal
    | Data
)

#: A value nothing is known about. It may be a dual tensor: only provably plain inputs are safe.
UNKNOWN = Data(dual=True)
#: ``{UNKNOWN}``, the one set every lookup that finds nothing returns.
UNKNOWN_VALUES = frozenset([UNKNOWN])
#: The value of a parameter when the function is analyzed without a caller.
PARAMETER = Data(dual=True, from_parameter=True)
PLAIN = Data()


def normalize(values) -> frozenset:
    """Merge every ``Data`` in ``values`` into one, so value sets stay small.

    Called millions of times on sets of ~60 values (a trainer state holding every model a test
    suite builds), nearly always with one ``Data`` or none: the count is taken over the values'
    types, and the merged set is built with set operations, which reuse the members' stored
    hashes (building it from a list hashed every member again)."""
    if list(map(type, values)).count(Data) <= 1:  # no subclasses of Data: its type tells
        return frozenset(values)
    data = [v for v in values if type(v) is Data]
    merged = derived(data)
    exact = frozenset().union(*(d.exact for d in data))  # alternatives, not a computation: still exact
    if exact:
        merged = replace(merged, exact=exact)
    return frozenset(values).difference(data).union((merged,))


class ExternalNames:
    """The names of attributes of external values (``torch.nn`` -> ``torch.nn.Linear``).

    A name is kept whole while it may still become one the tables match (``matched``); past the
    first segment that leaves all of them behind, only the last segment is kept
    (``torch.__version__.epoch.value`` is ``torch.__version__.value``): nothing compares the middle
    of such a name, while its root, its start and its last segment (a class? a dtype?) stay. Without
    this, code that stores attributes of what an attribute held names ever longer chains, one more
    segment each time its walk runs again: composer's trainer state reached 530 such names at one
    call (``GradScaler._computed.batch_size.epoch.value``, every order of every attribute), and
    one test file's check took over ten minutes.
    """

    def __init__(self, matched: Iterable[str]) -> None:
        self._prefixes = {name[:end] for name in matched for end in _segment_ends(name)}
        self._stems: dict[str, str] = {}
        self._values: dict[tuple[str, str], frozenset] = {}

    def attribute_value(self, name: str, attribute: str) -> frozenset:
        """What attribute ``attribute`` of the external value named ``name`` holds: the same set
        (of the same ``External``) each time, so the sets holding it find it by identity, not by
        comparing (a walk looks up each attribute of each external value it meets, again on every
        walk)."""
        key = (name, attribute)
        found = self._values.get(key)
        if found is None:
            found = self._values[key] = frozenset([External(self.attribute(name, attribute))])
        return found

    def attribute(self, name: str, attribute: str) -> str:
        stem = self._stems.get(name)
        if stem is None:
            stem = self._stems[name] = self._stem(name)
        return f"{stem}.{attribute}"

    def _stem(self, name: str) -> str:
        """``name`` up to its first segment outside every matched name (all of it when there is none)."""
        for end in _segment_ends(name):
            if name[:end] not in self._prefixes:
                return name[:end]
        return name


def _segment_ends(name: str) -> list[int]:
    """Where each dotted prefix of ``name`` ends: ``a.b.c`` -> [1, 3, 5]."""
    return [i for i, char in enumerate(name) if char == "."] + [len(name)]


#: What a computation on values without data yields.
_NO_DATA = Data()


def derived(values) -> Data:
    """The data a computation on ``values`` yields: it derives from and may be dual like its inputs."""
    found: list[Data] = []
    for value in values:
        if isinstance(value, Collection):
            found.append(_contents(value))
        elif isinstance(value, Data):
            found.append(value)
    if not found:
        return _NO_DATA
    if len(found) == 1 and not found[0].exact:
        return found[0]  # most computations see one ``Data``: that is the result (no copies)
    origins: set[CompiledOutput] = set()
    elements: set[OutputElement] = set()
    dual = from_parameter = requires_grad = False
    for data in found:
        origins |= data.origins
        elements |= data.elements
        dual = dual or data.dual
        from_parameter = from_parameter or data.from_parameter
        requires_grad = requires_grad or data.requires_grad
    return Data(frozenset(origins), dual, from_parameter, requires_grad, elements=frozenset(elements))


def derived_from_sets(sets: Iterable[frozenset]) -> Data:
    """``derived`` of every value in ``sets``, each set's data derived once (``_derived_of_set``):
    merging data is associative, so this is the data ``derived`` gives for all of them at once."""
    found = [
        data
        for data in (_derived_of_set(values) if len(values) >= _REMEMBERED_SETS else derived(values) for values in sets)
        if data is not _NO_DATA
    ]
    return derived(found) if found else _NO_DATA


def in_stable_order(values: frozenset) -> Iterable:
    """``values`` sorted by ``stable_text``: the order that makes events the same in every process
    (a large set's order remembered, ``_ordered_set``: a trainer state holding any of a test
    suite's models is an argument of many calls)."""
    if len(values) < 2:
        return values
    if len(values) >= _REMEMBERED_SETS:
        return _ordered_set(values)
    return sorted(values, key=stable_text)


#: Sets at least this large have what is computed from them remembered (``_PerLargeSet``); smaller
#: ones cost less to compute again than to look up.
_REMEMBERED_SETS = 16
#: The most sets remembered at once, per function (all are forgotten when there are more).
_MOST_REMEMBERED_SETS = 4096


class _PerLargeSet(Generic[_R]):
    """``compute(values)``, remembered for the most recent large sets. Keyed by identity, as the
    same set object is passed along (the set is kept, so its identity stays its own): comparing
    equal sets built apart compares their values, and values that share parts (wrappers of
    wrappers) compare each part once per path to it (one root analyzed after another found the
    sets the first had left and took minutes)."""

    def __init__(self, compute: Callable[[frozenset], _R]) -> None:
        self._compute = compute
        self._known: dict[int, tuple[frozenset, _R]] = {}

    def __call__(self, values: frozenset) -> _R:
        known = self._known.get(id(values))
        if known is not None and known[0] is values:
            return known[1]
        if len(self._known) >= _MOST_REMEMBERED_SETS:
            self._known.clear()
        result = self._compute(values)
        self._known[id(values)] = (values, result)
        return result


#: ``derived`` of a large set: a trainer state's model may be any of a test suite's models, and
#: every call with it as an argument derived the data of all of them again.
_derived_of_set = _PerLargeSet(derived)
_ordered_set = _PerLargeSet(lambda values: tuple(sorted(values, key=stable_text)))


def _contents(collection: Collection) -> Data:
    """The data derived from everything in ``collection`` at any depth, computed once per collection
    and kept on it: the same collections (a trainer's state, a config of models and datasets) reach
    hundreds of thousands of calls; opening them each time took most of composer's check."""
    state = collection.__dict__
    known = state.get("_contents")
    if known is None:
        known = state["_contents"] = derived(collection.items)
    return known


def stable_text(value: object) -> str:
    """``repr`` with every set's elements sorted: a text that orders values the same way in every
    process (``repr`` of a frozenset follows string hashing, which differs between processes)."""
    state = getattr(value, "__dict__", None)
    known = state.get(_STABLE_TEXT) if state is not None else None
    if known is not None:  # the common case, first: sorting a call's callees asks millions of times
        return known
    if isinstance(value, frozenset):
        return "{" + ", ".join(sorted(stable_text(v) for v in value)) + "}"
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return "(" + ", ".join(stable_text(v) for v in value) + ")"
    if is_dataclass(value) and not isinstance(value, type):
        # Values are immutable: the text is kept on the value, computed once.
        inner = ", ".join(stable_text(getattr(value, f.name)) for f in fields(value))
        known = f"{type(value).__name__}({inner})"
        if len(known) > _LONGEST_STABLE_TEXT:
            digest = hashlib.blake2b(known.encode(), digest_size=16).hexdigest()
            known = f"{type(value).__name__}#{digest}"
        if state is not None:
            object.__setattr__(value, _STABLE_TEXT, known)
        return known
    return repr(value)


_STABLE_TEXT = "_stable_text"
#: A value whose text is longer is named by a digest of it. Values share their parts (wrappers hold
#: collections that hold the wrappers' modules), and writing each part out wherever it occurs grows
#: without bound with every level.
_LONGEST_STABLE_TEXT = 4096
