"""What a value is in the module model: an ``nn.Module``, a project class defining a member, a
framework's module class. The base of ``Reach`` and of the effects mixed into it, so that they
call these without declaring them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..knowledge import frameworks as fw
from ..knowledge import torch_api as api
from .values import ClassVal, Collection, Compiled, Data, External, ExternalInstance, Instance, Wrapper, held_modules

if TYPE_CHECKING:
    from .engine_context import EngineContext


class ModuleFacts:
    interp: EngineContext
    #: ``has_project_member`` by value and member name.
    _project_members: dict[tuple[object, str], bool]

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
            return (api.is_torch_nn(value.cls) and value.cls not in api.PARAMETER_FACTORIES) or (
                value.cls in fw.MODULE_BASES
            )
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
