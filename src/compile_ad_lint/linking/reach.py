"""Reach: the shapes real training code hides compiled regions in (issue 11).

A compiled module wrapped in DDP or a framework's prepared module, moved with ``.cuda()``,
compiled block by block in place, returned in a tuple by a factory, stored in a dataclass in a
registry; forward replaced by its compiled version; a frozen module; outputs computed under
``no_grad``; autocast switched by a flag. The interpreter calls into ``Reach`` at a few hooks; what
torch and the frameworks do is read from the tables in ``knowledge.torch_api`` and ``knowledge.frameworks``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..knowledge import containers
from ..knowledge import switches as settings
from ..knowledge import torch_api as api
from ..summary import model as ir
from .arguments import Args, Values, argument_data, argument_values
from .effects.containers import ContainerStores
from .effects.frameworks import FrameworkEffects
from .frames import Frame
from .grad import is_frozen, need_grad, requires_grad_argument, without_graph
from .incremental import Cell, ModulesCell
from .values import (
    UNKNOWN_VALUES,
    ClassVal,
    Collection,
    Compiled,
    ConstVal,
    Data,
    External,
    Instance,
    Wrapper,
    held_modules,
    normalize,
)

if TYPE_CHECKING:
    from .engine_context import EngineContext


class Reach(ContainerStores, FrameworkEffects):
    def __init__(self, interpreter: EngineContext) -> None:
        self.interp = interpreter
        #: The module being analyzed (its import side effects run when a registry is read).
        self.root: Path | None = None
        #: Top-level packages whose import side effects already ran in this analysis.
        self.side_effects_done: set[str] = set()
        self._keyword_fields: dict[ClassVal, bool] = {}
        #: ``module_values_of`` by class, with the version of the class's ``ModulesCell``.
        self._module_values: dict[ClassVal, tuple[int, frozenset]] = {}
        #: ``submodules`` by value, and ``_own_submodules`` by module: the result, the cells it read
        #: with their versions then, and ``heap_changes`` when they last held those versions.
        self._submodules: dict[object, tuple[frozenset, dict[Cell, int], int]] = {}
        self._own_submodules_kept: dict[object, tuple[frozenset, dict[Cell, int], int]] = {}
        self._project_members: dict[tuple[object, str], bool] = {}

    # -- grad: frozen modules, no_grad, requires_grad ----------------------------------------

    def graded(self, values: Values, frame: Frame, requires_grad: bool = True) -> Values:
        """Results of a module call: they require grad, unless grad recording is off."""
        if not frame.ctx.grad_enabled:
            return without_graph(values)
        if not requires_grad:
            return values
        return frozenset(
            replace(v, requires_grad=True) if isinstance(v, Data) and not v.requires_grad else v for v in values
        )

    def compiled_output(
        self, compiled: Compiled, output: Values, inputs: Data, frame: Frame, arguments: tuple = ()
    ) -> Values:
        """A compiled call's result: no backward under ``no_grad``, or through a frozen module whose
        inputs do not require grad."""
        if not frame.ctx.grad_enabled:
            return without_graph(output)
        if is_frozen(compiled.target) and not need_grad(inputs, arguments):
            return without_graph(output, inputs)
        return frozenset(replace(v, requires_grad=True) if isinstance(v, Data) else v for v in output)

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
                    grad = requires_grad_argument(args)
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
                result.add(Data(requires_grad=not is_frozen(receiver)))
            elif name in containers.CONTAINER_ELEMENT_METHODS and isinstance(receiver, (Collection, ConstVal)):
                looked_up = self.literal_lookup(receiver, name, args)
                result |= (
                    looked_up
                    if looked_up is not None
                    else self.container_elements(func.base, frozenset([receiver]), frame)
                )
            elif name in api.MODULE_REGISTRATION_METHODS and isinstance(receiver, (Instance, Collection)):
                self.register_module(func.base, receiver, args, frame, call.span)
                result.add(ConstVal(None))
            elif name in settings.SELF_RETURNING_BY_NAME and self._returns_itself(receiver, name):
                result.add(receiver)  # ``Args().parse_args()`` of a ``Tap`` subclass: the instance, filled
            elif name == "requires_grad_" and isinstance(receiver, Data):
                grad = requires_grad_argument(args)
                result.add(replace(receiver, requires_grad=grad is not False))
            else:
                rest.add(receiver)
        if rest:
            callees = interp.attribute(frozenset(rest), name)
            result |= interp.call_values(callees, args, call.span, frame, func)
        return normalize(result) if result else UNKNOWN_VALUES

    def _returns_itself(self, receiver: object, name: str) -> bool:
        """``receiver.<name>()`` is the receiver: a project class on a settings base whose method
        ``name`` returns the instance (``knowledge.switches.SELF_RETURNING_METHODS``), not overridden."""
        if not isinstance(receiver, Instance) or self.has_project_member(receiver, name):
            return False
        bases = settings.SELF_RETURNING_BY_NAME[name]
        return any(isinstance(b, External) and b.name in bases for b in self.interp.mro(receiver.cls))

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

        def held_submodules(reads: dict[Cell, int]) -> frozenset:
            return frozenset().union(*(own(module, reads) for module in held_modules(value)))

        if self.interp.summarizing:
            return held_submodules({})
        return self._kept(self._submodules, value, held_submodules)[0]

    def _kept_own_submodules(self, module: object, reads: dict[Cell, int]) -> frozenset:
        """``_own_submodules`` of ``module``, kept; ``reads`` gets the cells it read, with their
        versions when it was computed (a changed one: computed again next time)."""
        found, own_reads = self._kept(self._own_submodules_kept, module, lambda r: self._own_submodules(module, r))
        for cell, version in own_reads.items():
            reads.setdefault(cell, version)
        return found

    def _kept(
        self, store: dict, key: object, compute: Callable[[dict[Cell, int]], frozenset]
    ) -> tuple[frozenset, dict[Cell, int]]:
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

    def _own_submodules(self, value: object, reads: dict[Cell, int]) -> frozenset:
        interp = self.interp
        found: set = set()
        if isinstance(value, Instance):
            for klass in interp.mro(value.cls):
                if isinstance(klass, ClassVal):
                    interp.harvest_instance_attributes(klass, value.cls)
                    modules = self.module_values_of(klass)
                    cell = ModulesCell(klass)
                    interp.read_cell(cell, harvested_for=value.cls, contents=modules)
                    reads.setdefault(cell, interp.cell_version(cell))
                    found |= modules
        items: set = set()
        for v in found:
            items |= v.items if isinstance(v, Collection) and not v.sequential else {v}
        return normalize(items) if items else UNKNOWN_VALUES

    # -- element stores: ``layers[i] = torch.compile(layer)``, registries --------------------

    # -- containers and registries ---------------------------------------------------------

    # -- classes whose constructor stores keyword arguments (dataclasses) -------------------

    # -- torch and framework calls by qualified name ---------------------------------------

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
            if not need_grad(inputs, argument_values(args)):
                return without_graph(results, inputs)
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

    # -- path sensitivity on a flag --------------------------------------------------------
