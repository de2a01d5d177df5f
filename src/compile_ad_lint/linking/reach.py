"""Reach: the shapes real training code hides compiled regions in (issue 11).

A compiled module wrapped in DDP or a framework's prepared module, moved with ``.cuda()``,
compiled block by block in place, returned in a tuple by a factory, stored in a dataclass in a
registry; forward replaced by its compiled version; a frozen module; outputs computed under
``no_grad``; autocast switched by a flag. The interpreter calls into ``Reach`` at a few hooks; what
torch and the frameworks do is read from the tables in ``knowledge.torch_api`` and ``knowledge.frameworks``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.findings import Condition
from ..core.locations import Location
from ..knowledge import frameworks as fw
from ..knowledge import torch_api as api
from ..knowledge.calls import REACH_EFFECTS, Meaning
from ..knowledge.effects import Effect
from ..knowledge.torch_api import CompileHow
from ..summary import model as ir
from .arguments import Args, Values, argument_data, argument_values, keyword_arg, positional, spread_keyword
from .frames import Context, Frame
from .values import (
    PARAMETER,
    UNKNOWN_BACKEND,
    UNKNOWN_VALUES,
    AutocastContext,
    AutocastState,
    ClassVal,
    Collection,
    Compiled,
    CompiledOutput,
    ConstVal,
    Data,
    External,
    ExternalInstance,
    FrameworkCall,
    FrameworkObject,
    GradMode,
    Imported,
    Instance,
    NullContext,
    Value,
    Wrapper,
    held_modules,
    normalize,
)
from .walks import SIDE_EFFECTS

if TYPE_CHECKING:
    from .engine_context import EngineContext

#: Most modules whose import side effects (registrations) are run for one analysis.
MAX_SIDE_EFFECT_MODULES = 64


def _argument(args: Args, keyword: str, index: int | None) -> frozenset | None:
    found = keyword_arg(args, keyword)
    if found is None and index is not None:
        found = positional(args, index) or None
    return found


def _constants(values: Iterable[object] | None) -> set | None:
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


#: How a store combines what a heap cell holds with what is stored (``joined_store``, ``merged_store``).


def joined_store(current: frozenset, added: frozenset) -> frozenset:
    """``current`` plus ``added``, normalized (data weaker than the known data adds nothing)."""
    return normalize(current | added)


def merged_store(current: frozenset, added: frozenset) -> frozenset:
    """``current`` plus ``added``, the stored elements of a container kept in one collection
    (one per store would nest and grow with every loop iteration)."""
    stores = [v for v in added if isinstance(v, Collection) and not v.sequential and not v.positions]
    if not stores:
        return normalize(current | added)
    old = [v for v in current if isinstance(v, Collection) and not v.sequential and not v.positions and v.items]
    items = frozenset().union(*(c.items for c in old + stores))
    kept = frozenset(v for v in current if v not in old) | frozenset(v for v in added if v not in stores)
    return normalize(kept | {Collection(normalize(items))})


def flag_key(expr: ir.Expr | None) -> str | None:
    """``mixed_precision``, ``self.use_amp``, ``args.amp``: a flag as written, for path sensitivity."""
    if isinstance(expr, ir.Ref):
        return expr.name
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


class Reach:
    def __init__(self, interpreter: EngineContext) -> None:
        self.interp = interpreter
        #: The module being analyzed (its import side effects run when a registry is read).
        self.root: Path | None = None
        #: Top-level packages whose import side effects already ran in this analysis.
        self.side_effects_done: set[str] = set()
        self._keyword_fields: dict[ClassVal, bool] = {}
        #: ``module_values_of`` by class, with the version of the class's ``("modules", klass)`` cell.
        self._module_values: dict[ClassVal, tuple[int, frozenset]] = {}
        #: ``submodules`` by value, and ``_own_submodules`` by module: the result, the cells it read
        #: with their versions then, and ``heap_changes`` when they last held those versions.
        self._submodules: dict[object, tuple[frozenset, dict[object, int], int]] = {}
        self._own_submodules_kept: dict[object, tuple[frozenset, dict[object, int], int]] = {}
        #: ``has_project_member`` by value and member name.
        self._project_members: dict[tuple[object, str], bool] = {}
        self._effects = self.reach_effects()
        self._framework_effects = self.framework_effects()

    # -- what a value is --------------------------------------------------------------------

    def is_module_value(self, value: object) -> bool:
        """Whether ``value`` is an ``nn.Module`` (compiled or not, wrapped or not)."""
        interp = self.interp
        if isinstance(value, Wrapper):
            return True
        if isinstance(value, Compiled):
            return value.target is None or isinstance(value.target, Data) or self.is_module_value(value.target)
        if isinstance(value, Instance):
            return interp.is_module_class(value.cls)
        if isinstance(value, ExternalInstance):
            return api.is_torch_nn(value.cls) and value.cls not in api.PARAMETER_FACTORIES
        if isinstance(value, Collection):
            return value.sequential
        return False

    def has_project_member(self, value: object, name: str) -> bool:
        """A project class defines ``name`` itself (its own ``to``, ``train``, ``compile``, ...).

        Kept per value and name: what a value holds and what a finished class body defines do not
        change (a trainer state holding ~190 models was asked 240,000 times in one of composer's
        test files). Not while a class body runs (its names are still being bound) or a walk is
        summarized (it reads the class bodies itself)."""
        interp = self.interp
        if interp.summarizing or interp.class_bodies_running:
            return self._defines_member(value, name)
        known = self._project_members.get((value, name))
        if known is None:
            known = self._project_members[(value, name)] = self._defines_member(value, name)
        return known

    def _defines_member(self, value: object, name: str) -> bool:
        return any(
            isinstance(module, Instance) and self.interp.find_member(module.cls, name) is not None
            for module in held_modules(value)
        )

    def is_framework_module_class(self, cls: ClassVal) -> bool:
        return any(isinstance(b, External) and b.name in fw.FRAMEWORK_BASES for b in self.interp.mro(cls))

    # -- grad: frozen modules, no_grad, requires_grad ----------------------------------------

    def graded(self, values: Values, frame: Frame, requires_grad: bool = True) -> Values:
        """Results of a module call: they require grad, unless grad recording is off."""
        if not frame.ctx.grad_enabled:
            return self.without_graph(values)
        if not requires_grad:
            return values
        return frozenset(
            replace(v, requires_grad=True) if isinstance(v, Data) and not v.requires_grad else v for v in values
        )

    @staticmethod
    def without_graph(values: Values, keep: Data | None = None) -> Values:
        """The same data without autograd history (what ``no_grad`` or a frozen module yields);
        ``keep``: the inputs' history, which a frozen module's output still carries."""
        kept = keep.origins if keep is not None else frozenset()
        elements = keep.elements if keep is not None else frozenset()
        return frozenset(
            replace(v, origins=v.origins & kept, requires_grad=False, elements=v.elements & elements, exact=frozenset())
            if isinstance(v, Data)
            else v
            for v in values
        )

    def compiled_output(
        self, compiled: Compiled, output: Values, inputs: Data, frame: Frame, arguments: tuple = ()
    ) -> Values:
        """A compiled call's result: no backward under ``no_grad``, or through a frozen module whose
        inputs do not require grad."""
        if not frame.ctx.grad_enabled:
            return self.without_graph(output)
        if self.frozen(compiled.target) and not self.need_grad(inputs, arguments):
            return self.without_graph(output, inputs)
        return frozenset(replace(v, requires_grad=True) if isinstance(v, Data) else v for v in output)

    @staticmethod
    def need_grad(inputs: Data, values: Iterable[object]) -> bool:
        """Whether inputs require grad: module outputs, parameters (``nn.Parameter(...)``), explicit flags."""
        return (
            inputs.requires_grad
            or bool(inputs.origins)
            or any(isinstance(v, ExternalInstance) and v.cls in api.PARAMETER_FACTORIES for v in values)
        )

    @staticmethod
    def frozen(value: object) -> bool:
        return isinstance(value, Wrapper) and value.frozen

    def freeze(self, values: Values, site: Location, frozen: bool) -> Values:
        """``module.requires_grad_(frozen is False)``: the same modules, frozen or unfrozen."""
        result: set[object] = set()
        for value in values:
            if isinstance(value, Wrapper) and value.frozen and not frozen:
                result |= value.inner
            elif frozen and self.is_module_value(value) and not self.frozen(value):
                result.add(Wrapper(frozenset([value]), "requires_grad_(False)", site, frozen=True))
            else:
                result.add(value)
        return frozenset(result)

    def freeze_expr(self, expr: ir.Expr, frame: Frame, span: ir.Span, frozen: bool) -> None:
        """Rebind what ``expr`` names to its frozen (or unfrozen) version. Unfreezing a part
        (``model.head.requires_grad_(True)``, ``model.get_classifier().parameters()``) unfreezes the
        whole: it trains again, partly."""
        if not frozen:
            root = expr
            while isinstance(root, (ir.Attr, ir.Call, ir.Item)):
                root = root.base if isinstance(root, (ir.Attr, ir.Item)) else root.func
            if root is not expr and isinstance(root, ir.Ref):
                self.freeze_expr(root, frame, span, frozen=False)
        target = target_of(expr)
        if target is None:
            return
        values = self.interp.eval(expr, frame)
        if isinstance(target, ir.AttrTarget):
            self.replace_attribute(
                target, values, self.freeze(values, self.interp.loc(frame.path, span), frozen), frame
            )
        else:
            self.interp.assign(target, self.freeze(values, self.interp.loc(frame.path, span), frozen), frame, span)

    def requires_grad_argument(self, args: Args) -> bool | None:
        values = _argument(args, api.REQUIRES_GRAD.name, 0)
        if values is None:
            return True
        constants = _constants(values)
        return bool(constants.pop()) if constants and len(constants) == 1 else None

    # -- receiver methods: ``.cuda()``, ``.children()``, ``.get()``, ``register_module`` -----

    def receiver_method(self, call: ir.Call, frame: Frame) -> Values:
        """``<receiver>.<method>(...)`` for the methods whose receiver matters (api tables)."""
        interp = self.interp
        func = call.func
        assert isinstance(func, ir.Attr)
        name = func.attr
        receivers = interp.eval(func.base, frame)
        args = interp.eval_args(call.args, frame)
        site = interp.loc(frame.path, call.span)
        result: set = set()
        rest: set = set()
        for receiver in receivers:
            if (
                name in api.MODULE_RETURNING_METHODS
                and self.is_module_value(receiver)
                and not self.has_project_member(receiver, name)
            ):
                if name == "requires_grad_":
                    grad = self.requires_grad_argument(args)
                    result |= (
                        self.freeze(frozenset([receiver]), site, frozen=True)
                        if grad is False
                        else (self.freeze(frozenset([receiver]), site, frozen=False) if grad else {receiver})
                    )
                else:
                    result.add(receiver)
            elif (
                name in api.MODULE_CHILDREN_METHODS
                and isinstance(receiver, (Instance, Wrapper, Compiled))
                and not self.has_project_member(receiver, name)
            ):
                result.add(Collection(self.submodules(receiver)))
            elif (
                name in api.MODULE_PARAMETER_METHODS
                and self.is_module_value(receiver)
                and not self.has_project_member(receiver, name)
            ):
                result.add(Data(requires_grad=not self.frozen(receiver)))
            elif name in api.CONTAINER_ELEMENT_METHODS and isinstance(receiver, (Collection, ConstVal)):
                result |= self.container_elements(func.base, frozenset([receiver]), frame)
            elif name in api.MODULE_REGISTRATION_METHODS and isinstance(receiver, (Instance, Collection)):
                self.register_module(func.base, receiver, args, frame, call.span)
                result.add(ConstVal(None))
            elif name == "requires_grad_" and isinstance(receiver, Data):
                grad = self.requires_grad_argument(args)
                result.add(replace(receiver, requires_grad=grad is not False))
            else:
                rest.add(receiver)
        if rest:
            callees = interp.attribute(frozenset(rest), name)
            result |= interp.call_values(callees, args, call.span, frame, func)
        return normalize(result) if result else UNKNOWN_VALUES

    def submodules(self, value: object) -> frozenset:
        """What ``module.children()``/``modules()`` may yield: module-valued attributes of ``self``
        (of each module a wrapper or a compiled module holds, each module once however many paths
        through wrappers of wrappers lead to it).

        Kept per value, and per module it holds, until a heap cell it read changes (the walk in
        progress depends on those cells as if it had read them itself): a trainer state's model
        may be any of the ~190 models a test suite builds (composer's tests/trainer/), and the
        framework code walked for each asks for their modules millions of times, while each store
        changes the cells of one class only. A walk being summarized for the walk memory reads each
        cell where it happens (``read_cell``)."""
        own = self._own_submodules if self.interp.summarizing else self._kept_own_submodules

        def held_submodules(reads: dict[object, int]) -> frozenset:
            return frozenset().union(*(own(module, reads) for module in held_modules(value)))

        if self.interp.summarizing:
            return held_submodules({})
        return self._kept(self._submodules, value, held_submodules)[0]

    def _kept_own_submodules(self, module: object, reads: dict[object, int]) -> frozenset:
        """``_own_submodules`` of ``module``, kept; ``reads`` gets the cells it read, with their
        versions when it was computed (a changed one: computed again next time)."""
        found, own_reads = self._kept(self._own_submodules_kept, module, lambda r: self._own_submodules(module, r))
        for cell, version in own_reads.items():
            reads.setdefault(cell, version)
        return found

    def _kept(
        self, store: dict, key: object, compute: Callable[[dict[object, int]], frozenset]
    ) -> tuple[frozenset, dict[object, int]]:
        """``store[key]`` with the heap cells it read, while each keeps the version it had (the walk
        in progress then depends on them, as if it had read them itself); else computed again.
        Nothing is compared when no cell at all has changed since they last held (93 % of the 1.4 M
        lookups in composer's tests/trainer/test_checkpoint.py)."""
        interp = self.interp
        known = store.get(key)
        if known is not None:
            found, reads, checked_at = known
            if checked_at == interp.heap_changes or interp.still_valid(reads):
                if checked_at != interp.heap_changes:
                    store[key] = (found, reads, interp.heap_changes)
                interp.depend_on_reads(reads.items())
                return found, reads
        reads = {}
        computed_at = interp.heap_changes  # a cell changed while computing: checked next time
        found = compute(reads)
        store[key] = (found, reads, computed_at)
        return found, reads

    def _own_submodules(self, value: object, reads: dict[object, int]) -> frozenset:
        interp = self.interp
        found: set = set()
        if isinstance(value, Instance):
            for klass in interp.mro(value.cls):
                if isinstance(klass, ClassVal):
                    interp.harvest_instance_attributes(klass, value.cls)
                    modules = self.module_values_of(klass)
                    cell = ("modules", klass)
                    interp.read_cell(cell, harvested_for=value.cls, contents=modules)
                    reads.setdefault(cell, interp.cell_version(cell))
                    found |= modules
        items: set = set()
        for v in found:
            items |= v.items if isinstance(v, Collection) and not v.sequential else {v}
        return normalize(items) if items else UNKNOWN_VALUES

    def module_values_of(self, klass: ClassVal) -> frozenset:
        """The module-valued instance attribute values stored for ``klass`` (and the collections,
        which may hold modules): what ``children()`` may yield, the heap cell ``("modules", klass)``.
        Kept per class until the cell changes (every ``children()`` of the class's instances asks,
        and every store of one of its attributes changes it)."""
        version = self.interp.cell_version(("modules", klass))
        known = self._module_values.get(klass)
        if known is not None and known[0] == version:
            return known[1]
        values = frozenset(
            v
            for values in self.interp.attributes_by_class.get(klass, {}).values()
            for v in values
            if self.is_module_value(v) or isinstance(v, Collection)
        )
        self._module_values[klass] = (version, values)
        return values

    def register_module(
        self, receiver_expr: ir.Expr, receiver: object, args: Args, frame: Frame, span: ir.Span
    ) -> None:
        """``parent.register_module(name, module)`` / ``add_module``: like ``setattr``; on an
        ``nn.ModuleDict``/``nn.ModuleList`` the module becomes one of its items."""
        module = _argument(args, "module", 1) or frozenset()
        if isinstance(receiver, Collection):
            self.store_element(receiver_expr, module, frame, span)
        elif isinstance(receiver, Instance):
            self.set_attribute(frozenset([receiver]), _argument(args, "name", 0), module)

    # -- element stores: ``layers[i] = torch.compile(layer)``, registries --------------------

    def store_element(self, container: ir.Expr, values: Values, frame: Frame, span: ir.Span) -> None:
        """``container[key] = values`` (or an in-place change of one of its elements): iterating or
        indexing ``container`` may now yield ``values`` too."""
        interp = self.interp
        # Only what the rules can follow: modules, callables, specs, compiled outputs (plain data
        # stored in caches and tables would only grow the containers).
        values = frozenset(
            v for v in values if not isinstance(v, (Data, ConstVal)) or (isinstance(v, Data) and v.origins)
        )
        if not values:
            return
        added = frozenset([Collection(normalize(values))])
        if isinstance(container, ir.Ref):
            name = container.name
            if name in frame.env:
                frame.env[name] = merged_store(frame.env[name], added)
            elif name in frame.closure:
                frame.closure[name] = merged_store(frame.closure[name], added)
            else:
                self.store_global(frame.path, name, added)
        elif isinstance(container, ir.Attr):
            bases = interp.eval(container.base, frame)
            self.set_attribute(bases, frozenset([ConstVal(container.attr)]), added)

    def container_store(self, call: ir.Call, frame: Frame) -> Values | None:
        """``residuals.append(h)`` / ``outs.extend(hs)`` on a list (a display or a collection): the
        list may now yield the compiled outputs stored. None when the receiver is not a list the
        analysis holds."""
        interp = self.interp
        func = call.func
        assert isinstance(func, ir.Attr)
        receivers = interp.eval(func.base, frame)
        if not any(
            isinstance(r, Collection) or (isinstance(r, ConstVal) and isinstance(r.value, (ir.ListLiteral, tuple)))
            for r in receivers
        ):
            return None
        args = interp.eval_args(call.args, frame)
        method = api.CONTAINER_STORE_METHODS[func.attr]
        stored = positional(args, method.position)
        if method.elements:
            stored = interp.elements(stored) if stored else stored
        # Compiled outputs only (a ControlNet's residuals): appended modules and callables, followed
        # too, walked torchtitan's code for every layer list it builds (15,900 -> 18,900 walks).
        stored = frozenset(v for v in stored if isinstance(v, Data) and v.origins)
        if stored:
            self.store_element(func.base, stored, frame, call.span)
        rest = frozenset(r for r in receivers if not isinstance(r, ConstVal))
        if rest:  # what the call itself does (an unknown list's method may run anything)
            interp.call_values(interp.attribute(rest, func.attr), args, call.span, frame, func)
        return frozenset([ConstVal(None)])

    def store_global(self, path: Path, name: str, added: Values) -> None:
        """Add ``added`` to module ``path``'s global ``name`` (a registry filled by a function).
        Logged after what the store read (the binding blocks, the global): a summary's log is
        checked and replayed in order, and those reads are compared with the heap before it."""
        self._add_to_global(path, name, added)
        self.interp.log_effect(("store_global", path, name, added))

    def _add_to_global(self, path: Path, name: str, added: Values) -> None:
        interp = self.interp
        interp.lookup_global(path, name)  # the binding blocks run first, so they do not overwrite it
        env = interp.globals.setdefault(path, {})
        current = env.get(name)
        if current is None:
            return
        imported = [v for v in current if isinstance(v, Imported)]
        if imported:  # ``from registry import SPECS``: the registry lives in the module it comes from
            for value in imported:
                split = (
                    interp.index.split_qualified(value.name, value.importer)
                    if not api.is_external_root(value.name)
                    else None
                )
                if split is not None and len(split[1]) == 1 and split[0] != path:
                    self.store_global(split[0], split[1][0], added)
            return
        updated = merged_store(current, added)
        if updated != current:
            interp.set_global(path, name, current, updated)

    def set_attribute(self, bases: Values, names: Values | None, values: Values) -> None:
        """``setattr(obj, name, value)``: a known name stores the attribute; an unknown name replaces
        whichever attribute held the module ``value`` was made from (``setattr(model, n, torch.compile(child))``)."""
        constants = _constants(names)
        for base in bases:
            if not isinstance(base, Instance):
                continue
            if constants is not None and all(isinstance(c, str) for c in constants):
                for attr in constants:
                    self.merge_attribute(base.cls, attr, values)
            else:
                self.replace_everywhere(base, values)

    def merge_attribute(self, cls: ClassVal, name: str, values: Values) -> None:
        """Add ``values`` to what ``cls``'s instances hold in ``name`` (containers kept as one)."""
        interp = self.interp
        interp.note_write(("attr", cls, name), merged_store, values)  # before the store, in a summary's log
        interp.log_effect(("merge_attribute", cls, name, values))
        known = interp.instance_attrs.get((cls, name), frozenset())
        updated = merged_store(known, values)
        if updated != known:
            interp.store_attribute(cls, name, updated)

    def replace_everywhere(self, base: Instance, values: Values) -> None:
        sources = {v.target for v in values if isinstance(v, Compiled)} | {
            i for v in values if isinstance(v, Wrapper) for i in v.inner
        }
        if not sources:
            return  # only a compiled or wrapped module replaces the attribute it was made from
        interp = self.interp
        for klass in interp.mro(base.cls):
            if not isinstance(klass, ClassVal):
                continue
            interp.harvest_instance_attributes(klass, base.cls)
            interp.note_write(("class", klass))
            for name, held in list(interp.attributes_by_class.get(klass, {}).items()):
                hit = held & sources or any(isinstance(h, Collection) and h.items & sources for h in held)
                if not hit or values <= held:
                    continue
                updated = normalize(held | (values if held & sources else {Collection(normalize(values))}))
                if updated != held:
                    interp.store_attribute(klass, name, updated)
        interp.log_effect(("replace_everywhere", base, values))  # after its reads, as in ``store_global``

    def replace_attribute(self, target: ir.AttrTarget, old: Values, new: Values, frame: Frame) -> None:
        """Rebind ``base.attr``: instance attributes accumulate, so add ``new`` (a may-analysis)."""
        bases = self.interp.eval(target.base, frame)
        self.set_attribute(bases, frozenset([ConstVal(target.attr)]), new)

    def in_place_elsewhere(self, receiver: ir.Expr, compiled: Values, frame: Frame, span: ir.Span) -> None:
        """``block.compile()`` changed an object that is also held elsewhere: the loop variable's
        container (``for block in model.blocks``), the subscripted container, or ``getattr``'s object."""
        if isinstance(receiver, ir.Ref) and receiver.name in frame.element_of:
            source = frame.element_of[receiver.name]
            if (
                isinstance(source, ir.Call)
                and isinstance(source.func, ir.Attr)
                and source.func.attr in api.MODULE_CHILDREN_METHODS
            ):
                # ``for child in model.children()``: a module's children are its attributes.
                owners = frozenset(v for v in self.interp.eval(source.func.base, frame) if isinstance(v, Instance))
                if owners:
                    self.set_attribute(owners, None, compiled)
                    return
            container = container_of(source)
            if isinstance(container, ir.Ref) and container.name in frame.aliases:
                container = frame.aliases[container.name]
            self.store_element(container, compiled, frame, span)
            if not isinstance(container, ir.Attr):
                # A local list of the instance's blocks (``blocks = self.repeated_blocks()``,
                # ``mods = self.layers``): the blocks are held by its attributes too.
                for owner in frame.env.get("self", ()):
                    if isinstance(owner, Instance):
                        self.replace_everywhere(owner, compiled)
        elif isinstance(receiver, ir.Item):
            self.store_element(container_of(receiver.base), compiled, frame, span)
        elif (
            isinstance(receiver, ir.Call)
            and isinstance(receiver.func, ir.Ref)
            and receiver.func.name == "getattr"
            and len(receiver.args) >= 2
        ):
            interp = self.interp
            objects = interp.eval(receiver.args[0].value, frame)
            names = interp.eval(receiver.args[1].value, frame)
            self.set_attribute(objects, names, compiled)

    def in_place_statement(self, expr: ir.Expr, frame: Frame) -> bool:
        """``teacher.requires_grad_(False)`` as a statement freezes ``teacher`` itself;
        ``fmap.detach_()`` leaves ``fmap`` without the graph it came from (a discriminator step on
        the generator's output)."""
        if (
            isinstance(expr, ir.Call)
            and isinstance(expr.func, ir.Attr)
            and expr.func.attr == api.DETACH_IN_PLACE.name
            and target_of(expr.func.base) is not None
        ):
            values = self.interp.eval(expr.func.base, frame)
            if not values or not all(isinstance(v, Data) for v in values):
                return False
            target = target_of(expr.func.base)
            assert target is not None
            detached = self.without_graph(values)
            if isinstance(target, ir.AttrTarget):
                self.replace_attribute(target, values, detached, frame)
            else:
                self.interp.assign(target, detached, frame, expr.span)
            return True
        if not (isinstance(expr, ir.Call) and isinstance(expr.func, ir.Attr) and expr.func.attr == "requires_grad_"):
            return False
        receiver = expr.func.base
        if target_of(receiver) is None:
            return False
        current = self.interp.eval(receiver, frame)
        if not any(self.is_module_value(v) and not self.has_project_member(v, "requires_grad_") for v in current):
            return False
        grad = self.requires_grad_argument(self.interp.eval_args(expr.args, frame))
        if grad is None:
            return True  # may or may not freeze: keep what may run a backward
        self.freeze_expr(receiver, frame, expr.span, frozen=not grad)
        return True

    @staticmethod
    def always_iterates(first: ir.Stmt) -> bool:
        """A loop over ``module.parameters()`` (a module has parameters: the body runs)."""
        if not (isinstance(first, ir.Assign) and isinstance(first.value, ir.Item)):
            return False
        source = first.value.base
        return (
            isinstance(source, ir.Call)
            and isinstance(source.func, ir.Attr)
            and source.func.attr in api.MODULE_PARAMETER_METHODS
        )

    def note_element_binding(self, statement: ir.Assign, frame: Frame) -> None:
        """``for block in model.blocks`` / ``block = model.blocks[0]``: remember where the name's
        value is an element of, for in-place changes (``block.compile()``, ``p.requires_grad = False``),
        and which names are another name for an attribute (``layers = model.layers``)."""
        if isinstance(statement.value, ir.Attr) and len(statement.targets) == 1:
            (target,) = statement.targets
            if isinstance(target, ir.NameTarget):
                frame.aliases[target.name] = statement.value
            return
        if not isinstance(statement.value, ir.Item):
            return
        pending = list(statement.targets)
        while pending:
            target = pending.pop()
            if isinstance(target, ir.NameTarget):
                frame.element_of[target.name] = statement.value.base
            elif isinstance(target, ir.MultiTarget):
                pending.extend(target.targets)

    def parameter_flag(self, target: ir.AttrTarget, values: Values, frame: Frame, span: ir.Span) -> None:
        """``for p in model.parameters(): p.requires_grad = False`` freezes ``model``."""
        if target.attr != api.REQUIRES_GRAD.name or not isinstance(target.base, ir.Ref):
            return
        source = frame.element_of.get(target.base.name)
        if not (
            isinstance(source, ir.Call)
            and isinstance(source.func, ir.Attr)
            and source.func.attr in api.MODULE_PARAMETER_METHODS
        ):
            return
        constants = _constants(values)
        if constants == {False}:
            self.freeze_expr(source.func.base, frame, span, frozen=True)
        elif constants != {False}:
            self.freeze_expr(source.func.base, frame, span, frozen=False)

    # -- containers and registries ---------------------------------------------------------

    def container_elements(self, base: ir.Expr, values: Values, frame: Frame) -> Values:
        """What ``base[key]`` / ``base.get(key)`` yields. A module-level registry that the analysis
        has seen no registration into runs the import side effects first; one that is still empty
        stands for registrations made elsewhere (unknown, and worth asking the callers about)."""
        interp = self.interp
        if (
            isinstance(base, ir.Ref)
            and base.name not in frame.env
            and base.name not in frame.closure
            and self.empty_registry(values)
        ):
            package = interp.index.module_name(frame.path).split(".", 1)[0]
            if package not in self.side_effects_done:
                self.run_import_side_effects(package)
                values = interp.eval(base, frame)
            # A walk summary depends on their having run here (by this walk, or before it).
            interp.read_cell((SIDE_EFFECTS, package))
            if self.empty_registry(values):
                return frozenset([replace(PARAMETER, dual=False)])
        result: set = set()
        for value in values:
            if isinstance(value, ConstVal) and isinstance(value.value, (tuple, ir.ListLiteral, ir.DictLiteral)):
                items = value.value if isinstance(value.value, tuple) else value.value.items
                if isinstance(value.value, ir.DictLiteral):
                    items = tuple(v for _, v in items)
                result |= {ConstVal(item) for item in items if not isinstance(item, ir.Symbol)}
                if any(isinstance(item, ir.Symbol) for item in items) or not items:
                    result.add(Data())
            else:
                result |= interp.unmerged_elements((value,)) or UNKNOWN_VALUES
        return normalize(result) if result else UNKNOWN_VALUES

    @staticmethod
    def empty_registry(values: Values) -> bool:
        """A global holding only an empty ``{}``/``[]``/``dict()`` (filled at run time)."""
        if not values:
            return False
        for value in values:
            if (
                isinstance(value, ConstVal)
                and isinstance(value.value, (ir.DictLiteral, ir.ListLiteral))
                and not value.value.items
            ):
                continue
            if isinstance(value, Collection) and not value.items:
                continue
            return False
        return True

    def run_import_side_effects(self, package: str) -> None:
        """Run the module-level code of the modules of ``package`` (the registry's top-level package)
        that the analyzed module imports (its package ``__init__`` chain first, then its imports,
        transitively): registrations happen there (``import torchtitan.models`` registering train
        specs). Registrations from outside the package reach the registry through the callers."""
        self.side_effects_done.add(package)
        interp = self.interp
        interp.log_effect((SIDE_EFFECTS, package))
        root = self.root
        if root is None:
            return

        order: list[Path] = []
        seen: set[Path] = set()
        pending = [*interp.index.package_chain(root), root]
        while pending and len(order) < MAX_SIDE_EFFECT_MODULES:
            path = pending.pop(0)
            if path in seen:
                continue
            seen.add(path)
            imports = interp.index.imports(path)  # None: the file does not parse
            module = interp.index.module_name(path)
            if imports is None or api.is_external_root(module):
                continue
            order.append(path)
            if path != root and module.split(".", 1)[0] != package:
                continue  # run nothing outside the registry's package, follow nothing from there
            for dotted in imports:
                found = interp.index.find_module(dotted, path)
                if found is not None and found not in seen:
                    pending.extend([*interp.index.package_chain(found), found])
        for path in order:
            if path == root or interp.index.module_name(path).split(".", 1)[0] != package:
                continue  # the root's module-level code already ran; other packages register nothing here
            view = interp.index.view_of(path)
            env = interp.globals.setdefault(path, {})
            for index in view.effectful_blocks():
                if (path, index) not in interp.globals_run:
                    interp.globals_run.add((path, index))
                    interp.index.note(path)  # its module-level code runs: all of it counts
                    interp.exec_block(view.block(index).body, Frame(path, env, Context(), record=False))

    # -- classes whose constructor stores keyword arguments (dataclasses) -------------------

    def keyword_fields(self, cls: ClassVal) -> bool:
        interp = self.interp

        def decide() -> bool:
            summary = interp.class_summary(cls)
            if summary is None:
                return False

            frame = Frame(cls.path, {}, Context(), record=False)
            decorators = [v for d in summary.decorators for v in interp.eval(d, frame)]
            bases = interp.bases(cls)
            return any(isinstance(v, External) and v.name in api.DATACLASS_DECORATORS for v in decorators) or any(
                isinstance(b, External) and b.name in api.KEYWORD_FIELD_BASES for b in bases
            )

        return interp.cached(self._keyword_fields, cls, decide, cycle=False)

    def construct_fields(self, cls: ClassVal, args: Args) -> None:
        """``TrainSpec(build_loss_fn=build_ce_loss, ...)``: the dataclass stores its keyword arguments."""
        instance = frozenset([Instance(cls)])
        for keyword, values in args:
            if keyword not in (None, "*", "**"):
                self.set_attribute(instance, frozenset([ConstVal(keyword)]), values)

    # -- torch and framework calls by qualified name ---------------------------------------

    def external(
        self, name: str, meanings: tuple[Meaning, ...], args: Args, site: Location, frame: Frame
    ) -> Values | None:
        """Calls whose ``knowledge.calls`` meanings are effects this module implements (``REACH_EFFECTS``),
        and calls passing ``requires_grad=`` (a tensor factory); None for the others."""
        for meaning in meanings:
            if meaning.effect in REACH_EFFECTS:
                handled = self._effects[meaning.effect](meaning.row, name, args, site, frame)
                if handled is not None:
                    return handled
        requires_grad = keyword_arg(args, api.REQUIRES_GRAD.name)
        if requires_grad is not None and _constants(requires_grad) != {False}:
            return frozenset([replace(argument_data(args), requires_grad=True)])
        return None

    # The reach effects, one method each: (row, name, args, site, frame) -> values, or None to go on.

    def wrap_module(self, wrapper: api.ModuleWrapper, name: str, args: Args, site: Location, frame: Frame) -> Values:
        inner = _argument(args, "module", 0) or UNKNOWN_VALUES
        # ``DDP(DDP(m))`` from code walked again is ``DDP(m)``.
        inner = frozenset(
            i for v in inner for i in (v.inner if isinstance(v, Wrapper) and v.kind == wrapper.label else (v,))
        )
        return frozenset([Wrapper(normalize(inner), wrapper.label, site)])

    def builtin_getattr(self, row: object, name: str, args: Args, site: Location, frame: Frame) -> Values | None:
        if len(args) < 2:
            return None
        interp = self.interp
        objects, names = positional(args, 0), positional(args, 1)
        constants = _constants(names)
        default = positional(args, 2)
        if constants is not None and all(isinstance(c, str) for c in constants):
            return normalize(frozenset().union(*(interp.attribute(objects, c) for c in constants)) | default)
        modules = [o for o in objects if isinstance(o, Instance) and interp.is_module_class(o.cls)]
        return normalize(frozenset().union(*(self.submodules(o) for o in modules)) | default | UNKNOWN_VALUES)

    def builtin_setattr(self, row: object, name: str, args: Args, site: Location, frame: Frame) -> Values | None:
        if len(args) < 3:
            return None
        if frame.ctx.region is not None:
            self.interp.dual_params.assigned(positional(args, 0), positional(args, 2), frame.ctx.region)
        self.set_attribute(positional(args, 0), positional(args, 1), positional(args, 2))
        return frozenset([ConstVal(None)])

    def reach_effects(self) -> dict[Effect, Callable[[Any, str, Args, Location, Frame], Values | None]]:
        """The implementation of each of ``REACH_EFFECTS``."""
        return {
            Effect.WRAPPER: self.wrap_module,
            Effect.SAME_MODULE: lambda row, name, args, site, frame: (
                _argument(args, "module", 0) or positional(args, 0) or UNKNOWN_VALUES
            ),
            Effect.GRAD_MODE: lambda row, name, args, site, frame: frozenset([GradMode(self.grad_mode(name, args))]),
            Effect.DATACLASS: lambda row, name, args, site, frame: frozenset([External(name)]),
            Effect.EMPTY_CONTAINER: lambda row, name, args, site, frame: (
                None if args else frozenset([Collection(frozenset())])
            ),
            Effect.GETATTR: self.builtin_getattr,
            Effect.SETATTR: self.builtin_setattr,
            # The reverse-mode questions (CAL004) still apply: the torch effects go on.
            Effect.FORWARD_MODE: lambda row, name, args, site, frame: self.forward_mode_call(name, args, site, frame),
            Effect.FRAMEWORK_CLASS: lambda row, name, args, site, frame: frozenset(
                [self.framework_object(row, args, site)]
            ),
        }

    def grad_mode(self, name: str, args: Args) -> bool | None:
        default = api.GRAD_MODES[name]
        keyword = api.GRAD_MODE_ARGUMENT.get(name)
        if keyword is None:
            return default
        values = _argument(args, keyword, 0)
        if values is None:
            return False if default is False else None  # inference_mode() disables grad by default
        constants = _constants(values)
        if constants is None or len(constants) != 1:
            return None
        flag = bool(constants.pop())
        if default is False:  # inference_mode(mode): mode=False leaves grad as it was
            return False if flag else None
        return flag

    def forward_mode_call(self, name: str, args: Args, site: Location, frame: Frame) -> None:
        """``jacobian(f, x, strategy="forward-mode", vectorize=True)`` calls ``f`` on dual tensors inside
        a ``dual_level`` of its own: a CAL001 region at this call."""
        (keyword, index, value), (guard, guard_index) = api.FORWARD_MODE_FUNCTIONS[name]
        if _constants(_argument(args, keyword, index)) != {value}:
            return
        vectorize = _argument(args, guard, guard_index)
        if vectorize is None or _constants(vectorize) == {False}:
            return  # without vectorize=True it raises NotImplementedError at once: loud
        interp = self.interp
        functions = _argument(args, "func", 0) or frozenset()
        saved = frame.ctx
        frame.ctx = replace(saved, region=site)
        start = len(frame.pending)
        try:
            span = ir.Span(site.line, site.column, site.end_line, site.end_column)
            interp.call_values(
                functions, ((None, frozenset([Data(dual=True)])),), span, frame, ir.Ref(name.rsplit(".", 1)[-1])
            )
        finally:
            frame.ctx = saved
        interp.finish_region(frame, site, start)

    # -- wrappers ---------------------------------------------------------------------------

    def call_wrapper(self, wrapper: Wrapper, args: Args, span: ir.Span, frame: Frame, func: ir.Expr | None) -> Values:
        saved = frame.ctx
        if wrapper.autocast is not None:
            frame.ctx = replace(saved, autocast=wrapper.autocast)
        try:
            results = self.interp.call_values(wrapper.inner, args, span, frame, func)
        finally:
            frame.ctx = saved
        if wrapper.frozen:
            inputs = argument_data(args)
            if not self.need_grad(inputs, argument_values(args)):
                return self.without_graph(results, inputs)
        return results

    def wrapper_attribute(self, wrapper: Wrapper, name: str) -> Values:
        interp = self.interp
        if wrapper.forwards(name):
            return interp.attribute(wrapper.inner, name)
        if name == api.WRAPPED_MODULE.name:
            return wrapper.inner
        # ``forward`` or ``__call__`` of a frozen wrapper: what it runs, still without gradients.
        return frozenset([Wrapper(interp.attribute(wrapper.inner, name), wrapper.kind, wrapper.site, frozen=True)])

    def instance_forward(self, instance: Instance) -> Values:
        """``self.forward = torch.compile(self.forward)``: calls of the module run the replacement."""
        interp = self.interp
        replaced = interp.instance_attribute(instance.cls, api.FORWARD.name)
        return interp.bind_methods(replaced, instance) if replaced else frozenset()

    # -- frameworks -------------------------------------------------------------------------

    def framework_object(self, row: fw.FrameworkClass, args: Args, site: Location) -> FrameworkObject:
        autocast = self.framework_precision(row, args, site)
        backend = self.framework_backend(row, args)
        held = (
            frozenset().union(*(_argument(args, keyword, index) or frozenset() for keyword, index in row.holds))
            if row.holds
            else frozenset()
        )
        launched_by = self.framework_backend_launched(row, args) if backend is not None else ""
        precision_site = site if autocast is not None else None
        for keyword, index in row.settings_from:
            for value in _argument(args, keyword, index) or ():
                if isinstance(value, FrameworkObject):
                    autocast, backend, precision_site = value.autocast, value.compile_backend, value.precision_site
                    launched_by = value.compile_launched_by
        return FrameworkObject(
            row.kind,
            site,
            autocast,
            backend,
            held=normalize(held),
            precision_site=precision_site,
            compile_launched_by=launched_by,
        )

    def framework_precision(self, row: fw.FrameworkClass, args: Args, site: Location) -> AutocastState | None:
        precision = row.precision
        if precision is None:
            return None
        device = None
        if precision.device_argument is not None:
            constants = _constants(keyword_arg(args, precision.device_argument))
            if constants is not None and len(constants) == 1:
                device = dict(precision.device_values).get(str(constants.pop()))
        origin = f"`{row.kind.rsplit('.', 1)[-1]}(...)` mixed precision"
        maybe = AutocastState(True, device, None, site, f"{origin} (may be enabled: not a literal in the code)")
        if precision.flags:
            for flag, flag_dtype in precision.flags:
                values = keyword_arg(args, flag)
                if values is None:
                    continue
                constants = _constants(values)
                if constants is None or len(constants) != 1:
                    return maybe
                if constants.pop():
                    return AutocastState(True, device, flag_dtype, site, f"{origin} ({flag}=True)")
            return None
        values = _argument(args, precision.argument, None)
        if values is None:
            values = spread_keyword(args, precision.argument)  # ``Fabric(**fabric_kwargs)``
        if values is None:
            if precision.absent == "unknown":
                return replace(
                    maybe,
                    origin=f"{origin} (not set in the code: {precision.set_elsewhere} may enable it)",
                    launched_by=precision.environment,
                )
            return None if precision.absent is None else AutocastState(True, device, precision.absent, site, origin)
        constants = _constants(values)
        table = dict(precision.values)
        if constants is None or len(constants) != 1 or next(iter(constants)) not in table:
            return maybe
        written = constants.pop()
        dtype = table[written]
        if dtype is None:
            return None
        dtype = next((used for on, given, used in precision.device_dtypes if (on, given) == (device, dtype)), dtype)
        return AutocastState(True, device, dtype, site, f"{origin} ({precision.argument}={written!r})")

    def framework_backend(self, row: fw.FrameworkClass, args: Args) -> str | None:
        """The backend the framework compiles prepared models with, None when it does not."""
        compilation = row.compilation
        if compilation is None:
            return None
        for keyword in compilation.backend_arguments:
            values = keyword_arg(args, keyword)
            if values is not None:
                constants = _constants(values)
                if constants is None or len(constants) != 1:
                    return UNKNOWN_BACKEND
                backend = str(constants.pop()).lower()
                return None if backend == "no" else backend
        for keyword in compilation.plugin_arguments:
            for value in keyword_arg(args, keyword) or ():
                if isinstance(value, FrameworkObject):
                    return value.compile_backend
        for flag in compilation.flags:
            values = keyword_arg(args, flag)
            if values is not None:
                constants = _constants(values)
                if constants == {True}:
                    return compilation.default_backend
                return None if constants == {False} else UNKNOWN_BACKEND
        return compilation.absent_backend

    def framework_backend_launched(self, row: fw.FrameworkClass, args: Args) -> str:
        """The environment variable that decides whether the framework compiles, when no argument
        in the code does (``Accelerator()``: ``ACCELERATE_DYNAMO_BACKEND``); "" when one does."""
        compilation = row.compilation
        if compilation is None:
            return ""
        if any(
            keyword_arg(args, keyword) is not None for keyword in (*compilation.backend_arguments, *compilation.flags)
        ):
            return ""
        for keyword in compilation.plugin_arguments:
            plugins = keyword_arg(args, keyword)
            if plugins is not None:
                found = {value.compile_launched_by for value in plugins if isinstance(value, FrameworkObject)}
                return found.pop() if len(found) == 1 else ""
        return compilation.environment

    def framework_attribute(self, value: object, name: str) -> Values | None:
        if isinstance(value, FrameworkObject):
            method = fw.METHODS.get((value.kind, name))
            return frozenset([FrameworkCall(value, name, method)]) if method is not None else None
        if isinstance(value, Instance) and self.is_framework_module_class(value.cls):
            for base in self.interp.mro(value.cls):
                if isinstance(base, External) and base.name in fw.FRAMEWORK_BASES:
                    method = fw.METHODS.get((fw.FRAMEWORK_BASES[base.name], name))
                    if method is not None:
                        return frozenset([FrameworkCall(None, name, method)])
        return None

    def call_framework(self, call: FrameworkCall, args: Args, span: ir.Span, frame: Frame) -> Values:
        site = self.interp.loc(frame.path, span)
        return self._framework_effects[call.method.effect](call, args, site, span, frame)

    def framework_effects(self) -> dict[fw.FrameworkEffect, Callable[..., Values]]:
        """The implementation of each ``knowledge.frameworks`` effect: (call, args, site, span, frame)."""
        effect = fw.FrameworkEffect
        return {
            effect.AUTOCAST: self.framework_autocast,
            effect.BACKWARD: self.framework_backward,
            effect.NULL_CONTEXT: lambda call, args, site, span, frame: frozenset([NullContext()]),
            effect.SAME: lambda call, args, site, span, frame: self.framework_argument(call, args) or UNKNOWN_VALUES,
            effect.PREPARE: self.framework_prepare,
            effect.SETUP: self.framework_prepare,
            effect.FIT: self.framework_fit,
            effect.TRAIN: self.framework_train,
        }

    @staticmethod
    def framework_argument(call: FrameworkCall, args: Args) -> Values | None:
        """The argument the method's row names."""
        return _argument(args, *call.method.argument) if call.method.argument is not None else None

    def framework_autocast(
        self, call: FrameworkCall, args: Args, site: Location, span: ir.Span, frame: Frame
    ) -> Values:
        state = call.owner.autocast if call.owner is not None else None
        return frozenset([AutocastContext(replace(state, source=site)) if state is not None else NullContext()])

    def framework_backward(
        self, call: FrameworkCall, args: Args, site: Location, span: ir.Span, frame: Frame
    ) -> Values:
        receivers = self.framework_argument(call, args) or frozenset()
        kind = call.owner.kind if call.owner is not None else call.method.kind
        self.interp.record_backward(receivers, site, f"{kind.rsplit('.', 1)[-1]}.{call.name}()", frame)
        return frozenset([ConstVal(None)])

    def framework_prepare(self, call: FrameworkCall, args: Args, site: Location, span: ir.Span, frame: Frame) -> Values:
        owner = call.owner
        if owner is None:
            return UNKNOWN_VALUES
        items = [values for keyword, values in args if keyword is None] or [
            self.framework_argument(call, args) or UNKNOWN_VALUES
        ]
        compiles = call.method.effect is fw.FrameworkEffect.PREPARE
        prepared = [self.prepare(values, owner, site, call.name, compiles) for values in items]
        if len(prepared) == 1:
            return prepared[0]
        return frozenset([Collection(normalize(frozenset().union(*prepared)), positions=tuple(prepared))])

    def framework_fit(self, call: FrameworkCall, args: Args, site: Location, span: ir.Span, frame: Frame) -> Values:
        if call.owner is None:
            return UNKNOWN_VALUES
        self.lightning_fit(
            call.owner, call.method, self.framework_argument(call, args) or frozenset(), site, span, frame
        )
        return frozenset([ConstVal(None)])

    def framework_train(self, call: FrameworkCall, args: Args, site: Location, span: ir.Span, frame: Frame) -> Values:
        if call.owner is None:
            return UNKNOWN_VALUES
        self.hf_train(call.owner, call.method, site, span, frame)
        return frozenset([Data()])

    def prepare(self, values: Values, owner: FrameworkObject, site: Location, method: str, compiles: bool) -> Values:
        """A module through ``Accelerator.prepare`` or ``Fabric.setup`` (``frameworks`` rows); the
        framework compiles what it prepares when ``compiles`` and the object was set to."""
        kind = owner.kind.rsplit(".", 1)[-1]
        label = f"{kind}.{method}()"
        result = set()
        for value in values:
            if not self.is_module_value(value):
                result.add(value)
                continue
            autocast = (
                replace(
                    owner.autocast,
                    source=site,
                    origin=f"{label} runs the forward under autocast: {owner.autocast.origin}",
                )
                if owner.autocast
                else None
            )
            wrapped = Wrapper(frozenset([value]), label, site, autocast)
            if compiles and owner.compile_backend is not None and not isinstance(value, Compiled):
                # accelerate compiles last, around its autocast wrapper: autocast inside the graph.
                dynamo = (
                    "a dynamo backend from the environment"
                    if owner.compile_backend == UNKNOWN_BACKEND
                    else f"dynamo backend {owner.compile_backend!r}"
                )
                launched = (Condition(owner.compile_launched_by, True, None),) if owner.compile_launched_by else ()
                result.add(
                    Compiled(
                        wrapped,
                        owner.compile_backend,
                        site,
                        f"{label} ({dynamo})",
                        conditions=launched,
                        how=CompileHow.FRAMEWORK,
                    )
                )
            else:
                result.add(wrapped)
        return frozenset(result)

    def lightning_fit(
        self,
        trainer: FrameworkObject,
        method: fw.FrameworkMethod,
        models: Values,
        site: Location,
        span: ir.Span,
        frame: Frame,
    ) -> None:
        """``Trainer.fit(model)``: the module's step (``training_step``) under the precision's
        autocast, then (automatic optimization) the backward of its loss here, outside autocast."""
        interp = self.interp
        saved = frame.ctx
        step_args = ((None, frozenset([PARAMETER])), (None, frozenset([Data()])))
        for model in sorted(models, key=repr):
            compiled = model if isinstance(model, Compiled) else None
            module = compiled.target if compiled is not None else model
            if not isinstance(module, Instance):
                continue
            steps = interp.find_member(module.cls, method.step) if method.step is not None else None
            if steps is None or method.step is None:
                continue
            for hook in fw.FIT_HOOKS:  # ``configure_model`` compiling blocks, ``setup`` building them
                members = interp.find_member(module.cls, hook.method)
                if members is not None:
                    hook_args = tuple((None, frozenset([ConstVal(a)])) for a in hook.arguments)
                    interp.call_values(
                        interp.bind_methods(members, module), hook_args, span, frame, ir.Ref(hook.method)
                    )
            bound = interp.bind_methods(steps, module)
            if trainer.autocast is not None:
                frame.ctx = replace(saved, autocast=trainer.autocast)
            try:
                if compiled is not None:  # ``from_compiled`` compiles training_step with the same dynamo context
                    step = frozenset(
                        replace(
                            compiled,
                            target=b,
                            spelling=f"{compiled.spelling}; Lightning compiles {method.step}",
                            edit=None,  # Lightning's compile of training_step has no call a fix can edit
                        )
                        for b in bound
                    )
                    loss = interp.call_values(step, step_args, span, frame, ir.Ref(method.step))
                else:
                    loss = interp.call_values(bound, step_args, span, frame, ir.Ref(method.step))
            finally:
                frame.ctx = saved
            manual = interp.instance_attribute(module.cls, method.automatic_flag) if method.automatic_flag else None
            if manual and all(isinstance(v, ConstVal) and v.value is False for v in manual):
                continue
            interp.record_backward(loss, site, "Trainer.fit() (Lightning's automatic-optimization backward)", frame)

    def hf_train(
        self, trainer: FrameworkObject, method: fw.FrameworkMethod, site: Location, span: ir.Span, frame: Frame
    ) -> None:
        """Hugging Face ``Trainer.train()``: the model prepared like accelerate's ``prepare``, called on
        a batch, and ``accelerator.backward(loss)`` outside autocast."""
        interp = self.interp
        prepared = self.prepare(trainer.held, trainer, site, method.method, compiles=True)  # accelerator.prepare inside
        callee = ir.Ref(method.calls or method.method)
        outputs = interp.call_values(prepared, (("**", frozenset([PARAMETER])),), span, frame, callee)
        interp.record_backward(outputs, site, "Trainer.train() (accelerator.backward in training_step)", frame)

    # -- path sensitivity on a flag --------------------------------------------------------

    def refine(self, origins: Iterable[CompiledOutput], frame: Frame) -> list[CompiledOutput]:
        """Inside ``if <flag>:``/``else:``, an autocast ``enabled=<flag>`` is known on or off."""
        refined = []
        for origin in origins:
            state = self.refined_state(origin.forward_autocast, frame)
            refined.append(origin if state is origin.forward_autocast else replace(origin, forward_autocast=state))
        return refined

    @staticmethod
    def refined_state(state: AutocastState, frame: Frame) -> AutocastState:
        if state.condition is None or state.condition not in frame.assumptions:
            return state
        if frame.assumptions[state.condition]:
            return replace(state, condition=None)
        return AutocastState(
            False, source=state.source, origin=f"{state.origin} with `{state.condition}` false on this path"
        )
