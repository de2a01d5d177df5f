"""What the training frameworks do (``knowledge.frameworks`` rows): their prepared objects and
wrappers, precision and backend settings, ``fit``/``train`` entry points and the backward they run.
A framework behaviour is a row and, where it needs code, a handler here: the framework classes'
(``Effect.FRAMEWORK_CLASS``) and each ``FrameworkEffect`` of their methods, registered like the other
effects (``registry.py``). ``Reach`` is built on ``FrameworkEffects``: which attributes are framework
methods, and the autocast state an ``if <flag>:`` arm refines."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ...core.findings import Condition
from ...core.locations import Location
from ...knowledge import frameworks as fw
from ...knowledge.effects import Effect
from ...knowledge.torch_api import IN_PLACE_HOWS, CompileHow
from ...summary import model as ir
from ..arguments import Args, Values, keyword_arg, spread_keyword
from ..contexts import AutocastContext, AutocastState, NullContext
from ..frames import Frame
from ..module_facts import ModuleFacts
from ..stores import (
    argument_or_none,
    constants_of,
)
from ..values import (
    PARAMETER,
    UNKNOWN_BACKEND,
    UNKNOWN_VALUES,
    Collection,
    Compiled,
    CompiledOutput,
    ConstVal,
    Data,
    External,
    FrameworkCall,
    FrameworkObject,
    Instance,
    Settings,
    Wrapper,
    normalize,
)
from .registry import register, register_framework_method

if TYPE_CHECKING:
    from ..engine_context import EngineContext


@register(Effect.FRAMEWORK_CLASS)
def framework_class(
    engine: EngineContext, row: fw.FrameworkClass, name: str, args: Args, site: Location, frame: Frame
) -> Values:
    """A framework's object (``Accelerator(...)``, ``Trainer(...)``): its precision and compile settings."""
    return frozenset([framework_object(row, args, site)])


def framework_object(row: fw.FrameworkClass, args: Args, site: Location) -> FrameworkObject:
    autocast = framework_precision(row, args, site)
    compiles = framework_compilation(row, args)
    backend, launched_by, switch, regional = compiles.backend, compiles.launched_by, compiles.switch, compiles.regional
    held = (
        frozenset().union(*(argument_or_none(args, keyword, index) or frozenset() for keyword, index in row.holds))
        if row.holds
        else frozenset()
    )
    precision_site = site if autocast is not None else None
    for keyword, index in row.settings_from:
        for value in argument_or_none(args, keyword, index) or ():
            if isinstance(value, FrameworkObject):
                autocast, backend, precision_site = value.autocast, value.compile_backend, value.precision_site
                launched_by, switch, regional = value.compile_launched_by, value.compile_switch, value.compile_regional
    return FrameworkObject(
        row.kind,
        site,
        autocast,
        backend,
        held=normalize(held),
        precision_site=precision_site,
        compile_launched_by=launched_by,
        compile_switch=switch,
        compile_regional=regional,
    )


def framework_precision(row: fw.FrameworkClass, args: Args, site: Location) -> AutocastState | None:
    precision = row.precision
    if precision is None:
        return None
    device = None
    if precision.device_argument is not None:
        constants = constants_of(keyword_arg(args, precision.device_argument))
        if constants is not None and len(constants) == 1:
            device = dict(precision.device_values).get(str(constants.pop()))
    origin = f"`{row.kind.rsplit('.', 1)[-1]}(...)` mixed precision"
    maybe = AutocastState(True, device, None, site, f"{origin} (may be enabled: not a literal in the code)")
    if precision.flags:
        for flag, flag_dtype in precision.flags:
            values = keyword_arg(args, flag)
            if values is None:
                continue
            constants = constants_of(values)
            if constants is None or len(constants) != 1:
                return maybe
            if constants.pop():
                return AutocastState(True, device, flag_dtype, site, f"{origin} ({flag}=True)")
        return None
    values = argument_or_none(args, precision.argument, None)
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
    constants = constants_of(values)
    table = dict(precision.values)
    if constants is None or len(constants) != 1 or next(iter(constants)) not in table:
        return maybe
    written = constants.pop()
    dtype = table[written]
    if dtype is None:
        return None
    dtype = next((used for on, given, used in precision.device_dtypes if (on, given) == (device, dtype)), dtype)
    return AutocastState(True, device, dtype, site, f"{origin} ({precision.argument}={written!r})")


@dataclass(frozen=True)
class CompileSetting:
    """How a framework object compiles the models it prepares, read from its constructor call."""

    #: The backend (``UNKNOWN_BACKEND``: not one literal); None when it does not compile.
    backend: str | None = None
    #: The environment variable that decides whether it compiles, when no argument in the code
    #: does (``Accelerator()``: ``ACCELERATE_DYNAMO_BACKEND``).
    launched_by: str = ""
    #: The condition it compiles under, when the argument that decides it may also be the value
    #: that turns compiling off (``dynamo_backend=backend``, ``backend`` "NO" on one path and
    #: ``args.dynamo_backend`` on another: ``dynamo_backend != 'no'``; a flag: its name). A value
    #: computed elsewhere does not carry the switch it came from (``analyses/switches.py``): the
    #: argument is named.
    switch: str = ""
    #: ``use_regional_compilation=True``, literally (``Compilation.regional_arguments``).
    regional: bool = False


def _given(args: Args, keyword: str) -> Values | None:
    """A constructor argument by keyword, or a literal dict's entry spread into the call
    (``Accelerator(**{"dynamo_backend": "inductor"})``); a mapping that is not a literal is not read
    (``Accelerator(**kwargs)`` usually leaves the backend to the launcher)."""
    values = keyword_arg(args, keyword)
    if values is not None:
        return values
    literal = frozenset(v for v in spread_keyword(args, keyword) or () if isinstance(v, ConstVal))
    return literal or None


def framework_compilation(row: fw.FrameworkClass, args: Args) -> CompileSetting:
    """The backend argument, else the plugin, else the flag the code passes; else the row's default;
    regional when an argument the row names says so literally."""
    compilation = row.compilation
    if compilation is None:
        return CompileSetting()
    setting = _compilation(compilation, args)
    if any(constants_of(_given(args, keyword)) == {True} for keyword in compilation.regional_arguments):
        setting = replace(setting, regional=True)
    return setting


def _compilation(compilation: fw.Compilation, args: Args) -> CompileSetting:
    for keyword in compilation.backend_arguments:
        values = _given(args, keyword)
        if values is not None:
            constants = constants_of(values)
            if constants is not None and len(constants) == 1:
                backend = str(constants.pop()).lower()
                return CompileSetting(None if backend == "no" else backend)
            literals = {str(value.value).lower() for value in values if isinstance(value, ConstVal)}
            return CompileSetting(UNKNOWN_BACKEND, switch=f"{keyword} != 'no'" if "no" in literals else "")
    for keyword in compilation.config_arguments:
        values = _given(args, keyword)
        if values is not None:
            return _configured(keyword, values, compilation.default_backend)
    flags_given = any(_given(args, flag) is not None for flag in compilation.flags)
    launched_by = "" if flags_given else compilation.environment
    for keyword in compilation.plugin_arguments:
        given = _given(args, keyword)
        if given is None:
            continue
        plugins = [value for value in given if isinstance(value, FrameworkObject)]
        launched = {plugin.compile_launched_by for plugin in plugins}
        switches = {plugin.compile_switch for plugin in plugins}
        launched_by = launched.pop() if len(launched) == 1 and not flags_given else ""
        if plugins:
            return CompileSetting(
                plugins[0].compile_backend,
                launched_by,
                switches.pop() if len(switches) == 1 else "",
                regional=all(plugin.compile_regional for plugin in plugins),
            )
        break
    for flag in compilation.flags:
        values = _given(args, flag)
        if values is not None:
            constants = constants_of(values)
            if constants == {True}:
                return CompileSetting(compilation.default_backend)
            if constants == {False}:
                return CompileSetting()
            off = len(values) > 1 and any(isinstance(v, ConstVal) and not v.value for v in values)
            return CompileSetting(UNKNOWN_BACKEND, switch=flag if off else "")
    absent = compilation.absent_backend
    return CompileSetting(absent, launched_by if absent is not None else "")


def _configured(keyword: str, values: Values, default_backend: str) -> CompileSetting:
    """``compile_config=<values>``: compiles unless it is None; the backend a literal dict names. A
    None among the values, or a launch setting, is the switch the compile holds under."""
    nones = [v for v in values if isinstance(v, ConstVal) and v.value is None]
    if len(nones) == len(values):
        return CompileSetting()
    backends = set()
    for value in values:
        if value in nones:
            continue
        config = value.value if isinstance(value, ConstVal) else None
        backend = config.get("backend", default_backend) if isinstance(config, ir.DictLiteral) else None
        backends.add(str(backend).lower() if isinstance(backend, str) else UNKNOWN_BACKEND)
    off = bool(nones) or any(isinstance(v, Settings) for v in values)
    return CompileSetting(
        backends.pop() if len(backends) == 1 else UNKNOWN_BACKEND, switch=f"{keyword} is not None" if off else ""
    )


def framework_argument(call: FrameworkCall, args: Args) -> Values | None:
    """The argument the method's row names."""
    return argument_or_none(args, *call.method.argument) if call.method.argument is not None else None


@register_framework_method(fw.FrameworkEffect.AUTOCAST)
def framework_autocast(
    engine: EngineContext, call: FrameworkCall, args: Args, site: Location, span: ir.Span, frame: Frame
) -> Values:
    state = call.owner.autocast if call.owner is not None else None
    return frozenset([AutocastContext(replace(state, source=site)) if state is not None else NullContext()])


@register_framework_method(fw.FrameworkEffect.BACKWARD)
def framework_backward(
    engine: EngineContext, call: FrameworkCall, args: Args, site: Location, span: ir.Span, frame: Frame
) -> Values:
    receivers = framework_argument(call, args) or frozenset()
    kind = call.owner.kind if call.owner is not None else call.method.kind
    engine.record_backward(receivers, site, f"{kind.rsplit('.', 1)[-1]}.{call.name}()", frame)
    return frozenset([ConstVal(None)])


@register_framework_method(fw.FrameworkEffect.PREPARE)
@register_framework_method(fw.FrameworkEffect.SETUP)
def framework_prepare(
    engine: EngineContext, call: FrameworkCall, args: Args, site: Location, span: ir.Span, frame: Frame
) -> Values:
    owner = call.owner
    if owner is None:
        return UNKNOWN_VALUES
    items = [values for keyword, values in args if keyword is None] or [
        framework_argument(call, args) or UNKNOWN_VALUES
    ]
    compiles = call.method.effect is fw.FrameworkEffect.PREPARE
    prepared = [
        prepare(engine, values, owner, site, call.name, compiles, replaces_forward=call.method.replaces_forward)
        for values in items
    ]
    if len(prepared) == 1:
        return prepared[0]
    return frozenset([Collection(normalize(frozenset().union(*prepared)), positions=tuple(prepared))])


@register_framework_method(fw.FrameworkEffect.FIT)
def framework_fit(
    engine: EngineContext, call: FrameworkCall, args: Args, site: Location, span: ir.Span, frame: Frame
) -> Values:
    if call.owner is None:
        return UNKNOWN_VALUES
    lightning_fit(engine, call.owner, call.method, framework_argument(call, args) or frozenset(), site, span, frame)
    return frozenset([ConstVal(None)])


@register_framework_method(fw.FrameworkEffect.TRAIN)
def framework_train(
    engine: EngineContext, call: FrameworkCall, args: Args, site: Location, span: ir.Span, frame: Frame
) -> Values:
    if call.owner is None:
        return UNKNOWN_VALUES
    trainer_loop(engine, call.owner, call.method, site, span, frame)
    return frozenset([Data()])


def prepare(
    engine: EngineContext,
    values: Values,
    owner: FrameworkObject,
    site: Location,
    method: str,
    compiles: bool,
    *,
    replaces_forward: bool = False,
) -> Values:
    """A module through ``Accelerator.prepare`` or ``Fabric.setup`` (``frameworks`` rows); the
    framework compiles what it prepares when ``compiles`` and the object was set to. Where it
    ``replaces_forward``, a module compiled in place gets the autocast inside its graph."""
    kind = owner.kind.rsplit(".", 1)[-1]
    label = f"{kind}.{method}()"
    result = set()
    for value in values:
        if not engine.reach.is_module_value(value):
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
        if replaces_forward and isinstance(value, Compiled) and value.how in IN_PLACE_HOWS and value.target is not None:
            # ``model.compile()`` then ``prepare(model)``: the compiled ``_call_impl`` calls the new
            # forward, so the autocast is entered inside the graph. accelerate's own compile, when
            # set, wraps that module again (it is no ``OptimizedModule``): inside that graph too.
            result.add(replace(value, target=Wrapper(frozenset([value.target]), label, site, autocast)))
            continue
        wrapped = Wrapper(frozenset([value]), label, site, autocast)
        if compiles and owner.compile_backend is not None and not isinstance(value, Compiled):
            if owner.compile_backend != UNKNOWN_BACKEND:
                dynamo = f"dynamo backend {owner.compile_backend!r}"
            elif owner.compile_launched_by:
                dynamo = "a dynamo backend from the environment"
            else:  # an argument the code passes, not one literal
                dynamo = "a dynamo backend the code does not fix"
            launched = tuple(
                Condition(expression, True, None)
                for expression in (owner.compile_launched_by, owner.compile_switch)
                if expression
            )
            # accelerate compiles last, around its autocast wrapper: autocast inside the graph.
            # Regional: the children are compiled one by one and the autocast forward runs eagerly
            # around them, so the compiled regions are entered under the autocast.
            regional = owner.compile_regional
            # composer enters its autocast around the model it compiled, as regional compilation does.
            row = fw.CLASS_BY_KIND.get(owner.kind)
            outside = regional or bool(row and row.compilation and row.compilation.autocast_around)
            compiled = Compiled(
                value if outside else wrapped,
                owner.compile_backend,
                site,
                f"{label} ({dynamo}, regional compilation)" if regional else f"{label} ({dynamo})",
                conditions=launched,
                how=CompileHow.FRAMEWORK,
            )
            result.add(Wrapper(frozenset([compiled]), label, site, autocast) if outside else compiled)
        else:
            result.add(wrapped)
    return frozenset(result)


def lightning_fit(
    engine: EngineContext,
    trainer: FrameworkObject,
    method: fw.FrameworkMethod,
    models: Values,
    site: Location,
    span: ir.Span,
    frame: Frame,
) -> None:
    """``Trainer.fit(model)``: the module's step (``training_step``) under the precision's
    autocast, then (automatic optimization) the backward of its loss here, outside autocast."""
    interp = engine
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
                interp.call_values(interp.bind_methods(members, module), hook_args, span, frame, ir.Ref(hook.method))
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


def trainer_loop(
    engine: EngineContext,
    trainer: FrameworkObject,
    method: fw.FrameworkMethod,
    site: Location,
    span: ir.Span,
    frame: Frame,
) -> None:
    """A trainer's loop (Hugging Face ``Trainer.train()``, composer ``Trainer.fit()``): the model
    prepared like accelerate's ``prepare``, called on a batch, and its backward outside autocast."""
    interp = engine
    prepared = prepare(engine, trainer.held, trainer, site, method.method, compiles=True)  # accelerator.prepare inside
    callee = ir.Ref(method.calls or method.method)
    batch = (None if method.positional_batch else "**", frozenset([PARAMETER]))
    outputs = interp.call_values(prepared, (batch,), span, frame, callee)
    label = f"{trainer.kind.rsplit('.', 1)[-1]}.{method.method}()"
    interp.record_backward(outputs, site, f"{label} ({method.backward_at})" if method.backward_at else label, frame)


@register_framework_method(fw.FrameworkEffect.NULL_CONTEXT)
def framework_null_context(
    engine: EngineContext, call: FrameworkCall, args: Args, site: Location, span: ir.Span, frame: Frame
) -> Values:
    return frozenset([NullContext()])


@register_framework_method(fw.FrameworkEffect.SAME)
def framework_same(
    engine: EngineContext, call: FrameworkCall, args: Args, site: Location, span: ir.Span, frame: Frame
) -> Values:
    return framework_argument(call, args) or UNKNOWN_VALUES


class FrameworkEffects(ModuleFacts):
    """``Reach``'s part: the framework methods a value has, and refined autocast states."""

    interp: EngineContext

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
