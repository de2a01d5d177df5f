"""Name resolution: local and module globals, builtins, qualified names across modules, and
attributes of abstract values."""

from __future__ import annotations

from pathlib import Path

from ..knowledge import containers
from ..knowledge import torch_api as api
from ..summary import model as ir
from .arguments import Values
from .frames import Context, Frame
from .heap import Heap
from .incremental import GlobalCell
from .values import (
    UNKNOWN_VALUES,
    ClassVal,
    Collection,
    Compiled,
    ConstVal,
    Data,
    External,
    ExternalInstance,
    FrameworkObject,
    Imported,
    Instance,
    ModuleRef,
    Settings,
    Wrapper,
    attribute_holders,
    normalize,
)

#: What each builtin name holds, one set per name for the whole run: sets holding it then find it
#: by identity rather than by comparing (``len``, ``isinstance``, ``range``... are looked up on
#: nearly every line).
_BUILTINS = {name: frozenset([External(f"builtins.{name}")]) for name in dir(__import__("builtins"))}


class Names(Heap):
    def lookup(self, name: str, frame: Frame) -> Values:
        if name in frame.env:
            return self.settle(frame.env[name])
        if name in frame.closure:
            return self.settle(frame.closure[name])
        found = self.lookup_global(frame.path, name)
        if found is not None:
            return found
        return _BUILTINS.get(name) or UNKNOWN_VALUES

    def module_global(self, path: Path, name: str) -> Values | None:
        """What module ``path`` binds to ``name``: only the top-level blocks binding it are run."""
        env = self.globals.setdefault(path, {})
        view = self.index.view_of(path)  # a walk depends on the value read (a heap cell), or:
        for index in view.blocks_binding(name):
            if (path, index) not in self.globals_run:
                self.globals_run.add((path, index))
                # On the statements it runs (and on what they read), not on the rest of the file;
                # run where the name is first read, maybe on a switch's arm: not the arm's doing.
                with self.off_the_arms():
                    self.engine.exec_block(
                        self.index.block_body(path, index), Frame(path, env, Context(), record=False)
                    )
        self.read_cell(GlobalCell(path, name))  # a registry a function fills (``Reach.store_global``)
        return env.get(name)

    def module_getattr(self, path: Path, name: str) -> Values | None:
        """What a module's ``__getattr__`` (PEP 562) returns for a name the module does not bind."""
        hook = self.lookup_global(path, "__getattr__")
        if not hook:
            return None
        frame = Frame(path, {}, Context(), record=False)
        return self.engine.call_values(hook, ((None, frozenset([ConstVal(name)])),), ir.Span(1, 1, 1, 1), frame)

    def settle(self, values: Values) -> Values:
        """Resolve the imports among ``values`` (lazily: only names that are used get resolved)."""
        for value in values:  # a loop, not any(): asked on every name lookup
            if isinstance(value, Imported):
                break
        else:
            return values
        settled: set = set()
        for value in values:
            settled |= self.resolve_qualified(value.name, value.importer) if isinstance(value, Imported) else {value}
        return normalize(settled)

    def lookup_global(self, path: Path, name: str) -> Values | None:
        key = (path, name)
        if key in self._resolving:
            return None
        self._resolving.add(key)
        try:
            found = self.module_global(path, name)
            if found is not None:
                return self.settle(found)
            for star in self.index.star_imports(path):
                module = None if api.is_external_root(star) else self.index.find_module(star, path)
                if module is not None and module != path:
                    found = self.lookup_global(module, name)
                    if found is not None:
                        return found
            if self.index.is_package(path):
                sub = self.index.find_module(f"{self.index.module_name(path)}.{name}", path)
                if sub is not None:
                    return frozenset([ModuleRef(sub)])
            return None
        finally:
            self._resolving.discard(key)

    def resolve_qualified(self, qualified: str, importer: Path) -> Values:
        if api.is_external_root(qualified):
            return frozenset([External(qualified)])
        key = (qualified, self.index.folder(importer))
        if not self._recordings and key in self._qualified:  # asked on every imported name used
            return self._qualified[key]

        def resolve() -> Values:
            split = self.index.split_qualified(qualified, importer)
            if split is None:
                return frozenset([External(qualified)])
            module, attributes = split
            values: Values = frozenset([ModuleRef(module)])
            for attribute in attributes:
                values = self.attribute(values, attribute)
            return values

        # An import cycle sees "unknown".
        return self.engine.cached(self._qualified, key, resolve, cycle=UNKNOWN_VALUES)

    def attribute(self, bases: Values, name: str) -> Values:
        result: set = set()
        for base in attribute_holders(bases, name):
            result |= self.attribute_of(base, name)
        return normalize(result) if result else UNKNOWN_VALUES

    def attribute_of(self, base: object, name: str) -> Values:
        if isinstance(base, External):
            return self.external_names.attribute_value(base.name, name)
        if isinstance(base, ExternalInstance):
            return self.external_names.attribute_value(base.cls, name)
        if isinstance(base, ModuleRef):
            found = self.lookup_global(base.path, name)
            if found is None and name != "__getattr__":
                found = self.module_getattr(base.path, name)
            return found if found is not None else UNKNOWN_VALUES
        if isinstance(base, Instance):
            found = self.instance_attribute(base.cls, name)
            if found is not None:
                return found
            member = self.find_member(base.cls, name)
            if member is None:  # ``self.manual_backward`` inherited from a framework base class
                return (
                    self.reach.framework_attribute(base, name)
                    or self.switches.namespace_attribute(base)  # ``args.torchcompile`` of a Namespace subclass
                    or UNKNOWN_VALUES
                )
            return self.bind_methods(member, base)
        if isinstance(base, ClassVal):
            member = self.find_member(base, name)
            return member if member is not None else UNKNOWN_VALUES
        if isinstance(base, Collection):
            if base.by_name and not containers.own_attribute(name):
                # An ``nn.ModuleDict``'s item by name (``self.transformer.h``): what indexing gives.
                return base.elements()
            return frozenset([base])  # ``.values()``, ``.children()``, ... iterate the same items
        if isinstance(base, Compiled):
            if name == api.ORIGINAL_MODULE.name and base.target is not None:
                return frozenset([base.target])
            if name == api.COMPILED_FORWARD.name and base.how not in api.IN_PLACE_HOWS:
                # Compiled only where its switches hold (``if args.compile:``, a launcher's dynamo
                # backend): elsewhere the module is not wrapped and its own ``forward`` runs.
                if base.conditions and base.target is not None:
                    return frozenset([base]) | self.attribute_of(base.target, name)
                return frozenset([base])
            # An OptimizedModule forwards attribute access to the original module, uncompiled.
            return self.attribute_of(base.target, name) if base.target is not None else UNKNOWN_VALUES
        if isinstance(base, (Data, Settings)):
            return frozenset([base])
        if isinstance(base, Wrapper):
            return self.reach.wrapper_attribute(base, name)
        if isinstance(base, FrameworkObject):
            return self.reach.framework_attribute(base, name) or UNKNOWN_VALUES
        return UNKNOWN_VALUES
