"""Modules whose parameters are dual tensors (CAL001 through module state).

Forward-mode AD with respect to parameters makes the module dual, not the call's inputs: the
forward-AD tutorial's ``setattr(model, name, fwAD.make_dual(p, t))`` (or ``model.weight = ...``),
``p.copy_(fwAD.make_dual(...))`` on ``model.parameters()``, and
``torch.func.functional_call(model, dual_params, (x,))``. A compiled call of such a module, or of
one of its submodules, inside a ``dual_level`` region has dual inputs although its arguments look
plain. Dual tensors keep their tangents inside their ``dual_level`` only, so the modules are dual
per region: one heap cell each (``DualParamsCell(region)``), a memoized walk that asked is walked
again when it grows, and a walk summary logs what it marked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.locations import Location
from ...knowledge import torch_api as api
from ...summary import model as ir
from ..arguments import Values, argument_data
from ..frames import Frame
from ..incremental import DualParams, DualParamsCell
from ..values import Collection, Compiled, Data, Instance, Wrapper, held_modules

if TYPE_CHECKING:
    from ..engine_context import EngineContext

#: How many levels of submodules a dual module's parameters reach (blocks of a model's layers).
_SUBMODULE_DEPTH = 3


class DualParameters:
    def __init__(self, interpreter: EngineContext) -> None:
        self.interp = interpreter
        #: Per forward-AD region, the modules whose parameters are dual there.
        self.modules: dict[Location, frozenset] = {}

    def holds(self, compiled: Compiled, region: Location) -> bool:
        """Whether the module ``compiled`` runs has dual parameters in ``region``."""
        self.interp.read_cell(DualParamsCell(region))
        dual = self.modules.get(region, frozenset())
        return bool(dual) and bool(held_modules(compiled) & dual)

    def mark(self, values: Values, region: Location) -> None:
        """The modules among ``values`` (and their submodules) now have dual parameters in ``region``."""
        interp = self.interp
        found: set = set()
        pending = [(v, 0) for v in values]
        while pending:
            value, depth = pending.pop()
            if not interp.reach.is_module_value(value):
                continue
            for module in held_modules(value):
                if module in found:
                    continue
                found.add(module)
                if depth < _SUBMODULE_DEPTH and isinstance(module, (Instance, Wrapper, Compiled)):
                    for child in interp.reach.submodules(module):
                        items = child.items if isinstance(child, Collection) else (child,)
                        pending.extend((item, depth + 1) for item in items)
        known = self.modules.get(region, frozenset())
        added = frozenset(found) - known
        if not added:
            return
        interp.note_write(DualParamsCell(region))
        interp.log_effect(DualParams(added, region))
        self.modules[region] = known | added
        interp.changed_cell(DualParamsCell(region))

    def copy_into(self, call: ir.Call, frame: Frame) -> None:
        """``p.copy_(fwAD.make_dual(...))`` with ``p`` from ``model.parameters()``: ``model`` is dual."""
        func = call.func
        if not (isinstance(func, ir.Attr) and func.attr == api.COPY_IN_PLACE.name and isinstance(func.base, ir.Ref)):
            return
        source = frame.element_of.get(func.base.name)
        if not (
            isinstance(source, ir.Call)
            and isinstance(source.func, ir.Attr)
            and source.func.attr in api.MODULE_PARAMETER_METHODS
        ):
            return
        region = frame.ctx.region
        if region is not None and argument_data(self.interp.eval_args(call.args, frame)).dual:
            self.mark(self.interp.eval(source.func.base, frame), region)

    def assigned(self, bases: Values, values: Values, region: Location) -> None:
        """``model.weight = fwAD.make_dual(...)`` / ``setattr(model, name, dual)`` in ``region``."""
        if any(isinstance(v, Data) and v.dual for v in values):
            self.mark(bases, region)
