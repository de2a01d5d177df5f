"""Where modules are stored: containers and registries, attributes and module globals, replaced
forwards and in-place changes elsewhere, the import side effects that fill registries, and
``getattr``/``setattr``. ``Reach`` is built on it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.locations import Location
from ...knowledge import containers
from ...knowledge import torch_api as api
from ...knowledge.effects import Effect
from ...summary import model as ir
from ..arguments import Args, Values, positional
from ..frames import Context, Frame
from ..grad import is_frozen, requires_grad_argument, without_graph
from ..incremental import (
    AttrCell,
    ClassCell,
    MergeAttribute,
    ModulesCell,
    ReplaceEverywhere,
    SideEffectsCell,
    SideEffectsRun,
    StoreGlobal,
    StoreInHolders,
    StoreRule,
)
from ..module_facts import ModuleFacts
from ..stores import (
    MAX_SIDE_EFFECT_MODULES,
    argument_or_none,
    constants_of,
    container_of,
    merged_store,
    target_of,
)
from ..values import (
    PARAMETER,
    UNKNOWN_VALUES,
    ClassVal,
    Collection,
    Compiled,
    ConstVal,
    Data,
    External,
    Imported,
    Instance,
    Wrapper,
    normalize,
)
from .registry import register

if TYPE_CHECKING:
    from ..engine_context import EngineContext


class ContainerStores(ModuleFacts):
    interp: EngineContext
    root: Path | None
    side_effects_done: set[str]
    _keyword_fields: dict[ClassVal, bool]
    _module_values: dict[ClassVal, tuple[int, frozenset]]

    def module_values_of(self, klass: ClassVal) -> frozenset:
        """The module-valued instance attribute values stored for ``klass`` (and the collections,
        which may hold modules): what ``children()`` may yield, the heap cell ``ModulesCell(klass)``.
        Kept per class until the cell changes (every ``children()`` of the class's instances asks,
        and every store of one of its attributes changes it)."""
        version = self.interp.cell_version(ModulesCell(klass))
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
        module = argument_or_none(args, "module", 1) or frozenset()
        if isinstance(receiver, Collection):
            self.store_element(receiver_expr, module, frame, span)
        elif isinstance(receiver, Instance):
            self.set_attribute(frozenset([receiver]), argument_or_none(args, "name", 0), module)

    def store_element(
        self, container: ir.Expr, values: Values, frame: Frame, span: ir.Span, literals: Values = frozenset()
    ) -> None:
        """``container[key] = values`` (or an in-place change of one of its elements): iterating or
        indexing ``container`` may now yield ``values`` too, and the string ``literals`` kept."""
        interp = self.interp
        # Only what the rules can follow: modules, callables, specs, compiled outputs (plain data
        # stored in caches and tables would only grow the containers).
        values = (
            frozenset(v for v in values if not isinstance(v, (Data, ConstVal)) or (isinstance(v, Data) and v.origins))
            | literals
        )
        if not values:
            return
        added = frozenset([Collection(normalize(values))])
        if isinstance(container, ir.Ref):
            name = container.name
            if name in frame.env:
                held = frame.env[name]
                frame.env[name] = merged_store(held, added)
                if name not in frame.aliases and any(isinstance(v, (Compiled, Wrapper)) for v in values):
                    self.store_in_holders(frozenset(v for v in held if isinstance(v, Collection) and v.by_name), added)
            elif name in frame.closure:
                frame.closure[name] = merged_store(frame.closure[name], added)
            else:
                self.store_global(frame.path, name, added)
        elif isinstance(container, ir.Attr):
            bases = interp.eval(container.base, frame)
            self.set_attribute(bases, frozenset([ConstVal(container.attr)]), added)
            if not containers.own_attribute(container.attr) and any(
                isinstance(b, Collection) and b.by_name for b in bases
            ):
                self.store_element(container.base, added, frame, span)  # an item of an ``nn.ModuleDict``
        elif isinstance(container, ir.Item):
            # ``model.transformer["h"]``: the container holding this one now holds what it holds.
            self.store_element(container.base, added, frame, span)

    def store_in_holders(self, collections: Values, added: Values) -> None:
        """``blocks = get_blocks(model)`` then ``blocks.register_module(name, torch.compile(block))``
        (fla-org/flame, torchtitan's shape): the model's attribute holding the ``nn.ModuleDict`` the
        helper returned holds the compiled blocks too. Only an ``nn.ModuleDict`` (no builtin copies
        one: ``list(model.layers)`` is a collection equal to a ``nn.ModuleList`` it copies, and
        what is stored in the copy stays there) and only compiled or wrapped modules (a scan of the
        instance attributes; a name bound to the attribute itself is followed without one)."""
        if not collections:
            return
        interp = self.interp
        interp.log_effect(StoreInHolders(collections, added))
        holders = [key for key, held in interp.instance_attrs.items() if not collections.isdisjoint(held)]
        for cls, attr in holders:
            self.merge_attribute(cls, attr, added)

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
        method = containers.CONTAINER_STORE_METHODS[func.attr]
        stored = positional(args, method.position)
        if method.elements:
            stored = interp.elements(stored) if stored else stored
        # Compiled outputs only (a ControlNet's residuals): appended modules and callables, followed
        # too, walked torchtitan's code for every layer list it builds (15,900 -> 18,900 walks).
        # String literals appended to a list display are kept: ``devices = ["cpu"]`` then
        # ``devices.append("cuda")`` made ``devices[-1]`` "cpu" alone, a device messages named.
        literals = (
            frozenset(v for v in stored if isinstance(v, ConstVal) and isinstance(v.value, str))
            if any(isinstance(r, ConstVal) and isinstance(r.value, ir.ListLiteral) for r in receivers)
            else frozenset()
        )
        stored = frozenset(v for v in stored if isinstance(v, Data) and v.origins)
        if stored or literals:
            self.store_element(func.base, stored, frame, call.span, literals)
        rest = frozenset(r for r in receivers if not isinstance(r, ConstVal))
        if rest:  # what the call itself does (an unknown list's method may run anything)
            interp.call_values(interp.attribute(rest, func.attr), args, call.span, frame, func)
        return frozenset([ConstVal(None)])

    def container_update(self, call: ir.Call, frame: Frame) -> Values | None:
        """``self.transformer.update({"blocks": nn.ModuleList(blocks)})`` on an ``nn.ModuleDict`` (a
        collection): it now holds the mapping's values, modules too. None when no receiver is a
        collection the analysis holds (a config's or a hash's ``update``: an ordinary call)."""
        interp = self.interp
        func = call.func
        assert isinstance(func, ir.Attr)
        receivers = interp.eval(func.base, frame)
        if not any(isinstance(r, Collection) for r in receivers):
            return None
        args = interp.eval_args(call.args, frame)
        mapping = positional(args, 0)
        if mapping:
            self.store_element(func.base, interp.elements(mapping), frame, call.span)
        rest = frozenset(r for r in receivers if not isinstance(r, (Collection, ConstVal)))
        if rest:
            interp.call_values(interp.attribute(rest, func.attr), args, call.span, frame, func)
        return frozenset([ConstVal(None)])

    def store_global(self, path: Path, name: str, added: Values) -> None:
        """Add ``added`` to module ``path``'s global ``name`` (a registry filled by a function).
        Logged after what the store read (the binding blocks, the global): a summary's log is
        checked and replayed in order, and those reads are compared with the heap before it."""
        self._add_to_global(path, name, added)
        self.interp.log_effect(StoreGlobal(path, name, added))

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
        constants = constants_of(names)
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
        interp.note_write(AttrCell(cls, name), StoreRule.MERGE, values)  # before the store, in a summary's log
        interp.log_effect(MergeAttribute(cls, name, values))
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
            interp.note_write(ClassCell(klass))
            for name, held in list(interp.attributes_by_class.get(klass, {}).items()):
                hit = held & sources or any(isinstance(h, Collection) and h.items & sources for h in held)
                if not hit or values <= held:
                    continue
                updated = normalize(held | (values if held & sources else {Collection(normalize(values))}))
                if updated != held:
                    interp.store_attribute(klass, name, updated)
        interp.log_effect(ReplaceEverywhere(base, values))  # after its reads, as in ``store_global``

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
            detached = without_graph(values)
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
        grad = requires_grad_argument(self.interp.eval_args(expr.args, frame))
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
        if isinstance(statement.value, (ir.Attr, ir.Item)) and len(statement.targets) == 1:
            (target,) = statement.targets
            if isinstance(target, ir.NameTarget):
                frame.aliases[target.name] = statement.value
            if isinstance(statement.value, ir.Attr):
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
        constants = constants_of(values)
        if constants == {False}:
            self.freeze_expr(source.func.base, frame, span, frozen=True)
        elif constants != {False}:
            self.freeze_expr(source.func.base, frame, span, frozen=False)

    @staticmethod
    def literal_lookup(receiver: object, method: str, args: Args) -> Values | None:
        """``options.get("target", "forward")`` / ``.pop(...)`` on a dict literal with a literal key:
        the key's item, else the default (``get``'s None); on an empty ``dict()``, the default. None
        when it is not known."""
        if method not in containers.DICT_LOOKUP_METHODS:
            return None
        if isinstance(receiver, Collection) and not receiver.items:
            return positional(args, 1) or None  # ``dict()`` holds nothing yet: the default
        if not (isinstance(receiver, ConstVal) and isinstance(receiver.value, ir.DictLiteral)):
            return None
        keys = positional(args, 0)
        key = next(iter(keys)) if len(keys) == 1 else None
        if not isinstance(key, ConstVal) or isinstance(key.value, ir.Symbol):
            return None
        item = receiver.value.get(key.value, _ABSENT)
        if item is not _ABSENT:
            return frozenset([ConstVal(item)]) if not isinstance(item, ir.Symbol) else None  # type: ignore[arg-type]
        default = positional(args, 1)
        if default:
            return default
        return frozenset([ConstVal(None)]) if method == "get" else None

    def container_elements(self, base: ir.Expr, values: Values, frame: Frame, index: int | str | None = None) -> Values:
        """What ``base[key]`` / ``base.get(key)`` yields. A module-level registry that the analysis
        has seen no registration into runs the import side effects first; one that is still empty
        stands for registrations made elsewhere (unknown, and worth asking the callers about)."""
        interp = self.interp
        if isinstance(base, ir.Ref) and base.name == frame.star:
            picked = _positional_item(values, index)  # ``args[0]`` of ``*args``: that argument
            if picked is not None:
                return picked
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
            interp.read_cell(SideEffectsCell(package))
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
        interp.log_effect(SideEffectsRun(package))
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
                    with interp.off_the_arms():
                        interp.exec_block(view.block(index).body, Frame(path, env, Context(), record=False))

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
        """``TrainSpec(build_loss_fn=build_ce_loss, ...)``: the dataclass stores its keyword arguments.
        ``TrainConfig(**cfg)`` may set any field from the mapping: a field it does not name holds what
        the mapping may hold there, or its default (jwohlwend/boltz's ``trainer: Optional[dict] =
        None`` read as None hid the Trainer's precision)."""
        instance = frozenset([Instance(cls)])
        given = set()
        for keyword, values in args:
            if keyword not in (None, "*", "**"):
                self.set_attribute(instance, frozenset([ConstVal(keyword)]), values)
                given.add(keyword)
        mappings = frozenset().union(*(values for keyword, values in args if keyword == "**"))
        if not mappings:
            return
        summary = self.interp.class_summary(cls)
        if summary is None:
            return
        assigned = {
            target.name
            for statement in summary.body
            if isinstance(statement, ir.Assign)
            for target in statement.targets
            if isinstance(target, ir.NameTarget)
        }
        for name in sorted((set(summary.fields) | assigned) - given):
            default = self.interp.find_member(cls, name) or frozenset()
            self.set_attribute(instance, frozenset([ConstVal(name)]), self._mapping_item(mappings, name) | default)

    def _mapping_item(self, mappings: Values, name: str) -> Values:
        """What ``**mapping`` may pass as keyword ``name``: a literal dict's item, any item of a dict
        the code built, else what the mapping holds under that name (a launch setting, unknown data)."""
        found: set = set()
        for mapping in mappings:
            if isinstance(mapping, ConstVal) and isinstance(mapping.value, ir.DictLiteral):
                item = mapping.value.get(name, _ABSENT)
                if item is not _ABSENT:
                    found.add(ConstVal(item))  # type: ignore[arg-type]  # a literal dict holds literals
            elif isinstance(mapping, Collection):
                found |= mapping.items
            elif not isinstance(mapping, ConstVal):
                found |= self.interp.attribute(frozenset([mapping]), name)
        return frozenset(found)

    # -- freezing: ``requires_grad_()``, ``param.requires_grad = False`` --------------------

    def freeze(self, values: Values, site: Location, frozen: bool) -> Values:
        """``module.requires_grad_(frozen is False)``: the same modules, frozen or unfrozen."""
        result: set[object] = set()
        for value in values:
            if isinstance(value, Wrapper) and value.frozen and not frozen:
                result |= value.inner
            elif frozen and self.is_module_value(value) and not is_frozen(value):
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


# -- the effects registered here: ``(engine, row, name, args, site, frame) -> values``, or None --


@register(Effect.GETATTR)
def builtin_getattr(
    engine: EngineContext, row: object, name: str, args: Args, site: Location, frame: Frame
) -> Values | None:
    if len(args) < 2:
        return None
    objects, names = positional(args, 0), positional(args, 1)
    constants = constants_of(names)
    default = positional(args, 2)
    if constants is not None and all(isinstance(c, str) for c in constants):
        return normalize(frozenset().union(*(engine.attribute(objects, c) for c in constants)) | default)
    modules = [o for o in objects if isinstance(o, Instance) and engine.is_module_class(o.cls)]
    return normalize(frozenset().union(*(engine.reach.submodules(o) for o in modules)) | default | UNKNOWN_VALUES)


@register(Effect.SETATTR)
def builtin_setattr(
    engine: EngineContext, row: object, name: str, args: Args, site: Location, frame: Frame
) -> Values | None:
    if len(args) < 3:
        return None
    if frame.ctx.region is not None:
        engine.dual_params.assigned(positional(args, 0), positional(args, 2), frame.ctx.region)
    engine.reach.set_attribute(positional(args, 0), positional(args, 1), positional(args, 2))
    return frozenset([ConstVal(None)])


#: A dict literal's ``get`` default that no item can be.
_ABSENT = object()


@register(Effect.EMPTY_CONTAINER)
def empty_container(
    engine: EngineContext, row: object, name: str, args: Args, site: Location, frame: Frame
) -> Values | None:
    if not args:
        return frozenset([Collection(frozenset())])
    if not (isinstance(row, containers.ContainerFactory) and row.mapping):
        return None
    # ``dict(h=blocks, ln_f=norm)``: keyword values are items, a positional mapping's values too. Only
    # a mapping of modules is kept as a collection (what an ``nn.ModuleDict`` is built from); other
    # dicts stay data derived from their arguments.
    items = frozenset().union(
        *(values if keyword not in (None, "*", "**") else engine.elements(values) for keyword, values in args)
    )
    module = engine.reach.is_module_value
    if not any(module(v) or (isinstance(v, Collection) and any(module(i) for i in v.items)) for v in items):
        literal = _literal_dict(args)
        if literal is not None:
            return frozenset([ConstVal(literal)])  # ``dict(target="train_step")``, as ``{"target": ...}``
        return None  # a registry of classes or names (``OrderedDict([("sdxl", Pipeline), ...])``): data
    return frozenset([Collection(normalize(items))])


def _literal_dict(args: Args) -> ir.DictLiteral | None:
    """``dict(a=1, b="x")`` with one literal per keyword: the dict display it equals."""
    items = []
    for keyword, values in args:
        if keyword in (None, "*", "**") or len(values) != 1:
            return None
        value = next(iter(values))
        if not isinstance(value, ConstVal):
            return None
        items.append((keyword, value.value))
    return ir.DictLiteral(tuple(items))


@register(Effect.DATACLASS)
def dataclass_decorator(
    engine: EngineContext, row: object, name: str, args: Args, site: Location, frame: Frame
) -> Values:
    return frozenset([External(name)])


def _positional_item(values: Values, index: int | str | None) -> Values | None:
    """Item ``index`` of tuples known position by position (what ``*args`` holds); None otherwise."""
    if not isinstance(index, int) or isinstance(index, bool) or not values:
        return None
    picked: set = set()
    for value in values:
        if not isinstance(value, Collection) or not -len(value.positions) <= index < len(value.positions):
            return None
        picked |= value.positions[index]
    return normalize(frozenset(picked))
