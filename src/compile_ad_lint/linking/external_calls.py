"""Calls of names outside the project: each meaning ``knowledge.calls`` gives the name runs its effect's
handler (``effects/registry.py``); a name without one is an external function or class. The engine's
records that effects share (backwards, config writes, caller requests) are kept here."""

from __future__ import annotations

from dataclasses import replace

from ..core.locations import Location
from ..knowledge import torch_api as api
from ..knowledge.calls import REACH_EFFECTS
from .arguments import Args, Values, argument_data, keyword_arg
from .effects.autograd import in_order
from .effects.registry import EFFECTS
from .events import BackwardThroughCompiled, ConfigWrite
from .frames import Frame
from .incremental import RequestEntry
from .incremental.memo import Memo
from .stores import constants_of
from .values import ConstVal, ExternalInstance, derived


class ExternalCalls(Memo):
    # ``engine`` (``EngineState``), an ``EngineContext``, is what the effects are handed.

    def call_external(self, name: str, args: Args, site: Location, frame: Frame) -> Values:
        """A call of a name outside the project: what the knowledge tables say it means (one lookup in
        ``knowledge.calls``), else an external function or class whose result derives from its arguments.

        The module, container and framework effects (``REACH_EFFECTS``) come first, each may pass
        (None); then a call passing ``requires_grad=`` is a tensor factory; then the others."""
        meanings = self.calls.get(name, ())
        for meaning in meanings:
            if meaning.effect in REACH_EFFECTS:
                handled = EFFECTS[meaning.effect](self.engine, meaning.row, name, args, site, frame)
                if handled is not None:
                    return handled
        requires_grad = keyword_arg(args, api.REQUIRES_GRAD.name)
        if requires_grad is not None and constants_of(requires_grad) != {False}:
            return frozenset([replace(argument_data(args), requires_grad=True)])
        for meaning in meanings:
            if meaning.effect not in REACH_EFFECTS:
                handled = EFFECTS[meaning.effect](self.engine, meaning.row, name, args, site, frame)
                if handled is not None:
                    return handled
        if not api.is_torch(name):
            self.escape_arguments(args, site, frame)  # ``wandb.log(aux)``, ``print(out)``: a backward may hide there
        last = name.rsplit(".", 1)[-1]
        if last[:1].isupper() and not last.isupper():
            return frozenset([ExternalInstance(name)])
        return frozenset([argument_data(args)])

    def record_config_writes(self, values: Values, site: Location, how: str) -> None:
        """Record every value written to ``backward_pass_autocast``, in any context (walks included
        that record nothing else): a literal that torch rejects is wrong wherever it is written."""
        for value in values:
            literal = isinstance(value, ConstVal)
            self.emit(ConfigWrite(site, how, value.value if literal else None, literal))

    def request_callers(self, frame: Frame, log: bool = True) -> None:
        """Ask for the callers of the function this walk started from (they bind its parameters).
        That function is the stack's first, so what a walk below it asks for depends on the entry
        it was walked from (a shared step walked from one script's entry point asks for that
        entry's callers): a summary replays the request for its replay's entry (``RequestEntry``)."""
        if frame.record and frame.stack:
            path, qualname = frame.stack[0]
            self.caller_requests.add((str(path), qualname))
            self._entry_requests += 1
            if log:
                self.log_effect(RequestEntry())

    def record_backward(
        self,
        receivers: Values,
        site: Location,
        spelling: str,
        frame: Frame,
        create_graph: bool | None = False,
        create_graph_text: str = "",
        ask_callers: bool = True,
        returns_gradients: bool = False,
    ) -> None:
        data = derived(receivers)
        origins = data.origins
        if not origins and data.from_parameter and ask_callers:
            self.request_callers(frame)
        if origins and frame.record:
            ordered = in_order(self.reach.refine(origins, frame))
            backward_autocast = self.reach.refined_state(frame.ctx.autocast, frame)
            islands = self.islands.of(ordered)
            self.emit(
                BackwardThroughCompiled(
                    site,
                    spelling,
                    backward_autocast,
                    ordered,
                    create_graph,
                    data.elements,
                    islands,
                    self.site_of(frame, site),
                    frame.conditions,
                    create_graph_text if create_graph is None else "",
                    returns_gradients,
                )
            )
