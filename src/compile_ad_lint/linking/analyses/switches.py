"""Run-time switches: which ``if`` tests read a value the user sets when launching the run.

One rule (``knowledge/switches.py`` lists the sources): a branch on a value the user can set at
launch (an argparse/click/typer/hydra parameter, an OmegaConf, YAML, JSON or TOML config, a
dataclass or pydantic config field, an environment variable, a module global that
``exec(open(...).read())`` or ``globals().update(...)`` can rebind) may take either arm, whatever
the code writes as its default; a branch on a value nothing can rebind is decided by it. Each arm
of a switch runs under its ``Condition`` (``Context.conditions``): what is compiled, called or
differentiated there carries it, and a finding that holds on that arm only names it.

Only the test itself is read: ``if args.compile and not debug:`` names the whole test; a value
computed from a switch elsewhere (``ddp = int(os.environ.get("RANK", -1)) != -1``) is unknown
data, so its branch may still take either arm, but it is not named.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.findings import Condition
from ...knowledge import switches as knowledge
from ...knowledge import torch_api as api
from ...summary import model as ir
from ..arguments import Args, Values
from ..contexts import AutocastContext
from ..frames import Context, Frame
from ..stores import flag_key
from ..values import (
    ClassVal,
    Collection,
    Compiled,
    ConstVal,
    Data,
    External,
    ExternalInstance,
    FunctionVal,
    Instance,
    OnSwitch,
    Settings,
)

if TYPE_CHECKING:
    from ..engine_context import EngineContext

#: The most switches a context keeps (the outermost): deeper nesting adds walks for little news.
MAX_CONDITIONS = 4
#: The conditions the two arms of ``if <switch>:`` run under (``arm_conditions``); None: no switch.
Switched = tuple[Condition, Condition] | None


class Switches:
    def __init__(self, interpreter: EngineContext) -> None:
        self.interp = interpreter
        self._config_classes: dict[ClassVal, bool] = {}
        self._config_fields: dict[ClassVal, frozenset[str]] = {}
        self._settings_parameters: dict[tuple[Path, str], Settings | None] = {}
        #: (function, its span, a name) -> whether the name holds what the function's caller set.
        self._read_locals: dict[tuple, bool] = {}

    # -- values read from the launch settings ------------------------------------------------

    def namespace_attribute(self, instance: Instance) -> Values | None:
        """An attribute a settings namespace class does not define (``args.torchcompile`` on a
        ``class TrainArgs(argparse.Namespace)``): a setting. None for other classes."""
        for klass in self.interp.mro(instance.cls):
            if isinstance(klass, External) and klass.name in knowledge.SETTINGS_BASES:
                return frozenset([Settings(knowledge.SETTINGS_BASES[klass.name][0])])
        return None

    def parameter_settings(self, function: FunctionVal) -> Settings | None:
        """What a parameter no caller binds holds in a function decorated by a command-line or config
        framework (``@hydra.main``, ``@click.command``): its settings. None for other functions."""
        interp = self.interp

        def decide() -> Settings | None:
            definition = interp.index.definition(function.path, function.qualname)
            if definition is None or not definition.decorators:
                return None

            frame = Frame(function.path, {}, Context(), record=False)
            for decorator in definition.decorators:
                named = decorator.func if isinstance(decorator, ir.Call) else decorator
                if not _pure(named):
                    continue
                for value in interp.eval(named, frame):
                    row = knowledge.SETTINGS_DECORATOR_BY_NAME.get(value.name) if isinstance(value, External) else None
                    if row is not None:
                        return Settings(row.kind)
            return None

        found = interp.cached(self._settings_parameters, (function.path, function.qualname), decide, cycle=None)
        return found if isinstance(found, Settings) else None

    # -- branches ------------------------------------------------------------------------------

    def arm_conditions(self, test: ir.Expr, written: str, tests: Values, frame: Frame) -> Switched:
        """The condition each arm of ``if <test>:`` (or option of ``a if <test> else b``) holds under
        when the test reads a switch, None when it does not (the branch is then decided by a known
        constant, or merged when unknown). ``written``: the test as written; ``tests``: its values."""
        if self.lazily_stored(test, frame) or not self.reads_switch(test, frame):
            return None
        text = _passed_switch(test, tests) or written or flag_key(test) or "a run-time switch"
        known = {bool(t.value) for t in tests if isinstance(t, ConstVal)}
        default = next(iter(known)) if len(known) == 1 and all(isinstance(t, ConstVal) for t in tests) else None
        return (
            Condition(text, True, default),
            Condition(text, False, None if default is None else not default),
        )

    def passed_on(self, arguments: Sequence[ir.Arg], args: Args, frame: Frame) -> Args:
        """``args`` of a call of project code, each literal read from a run-time switch marked with
        the switch as written (``maybe_compile(model, cfg.compile)``: ``ConstVal(False,
        "cfg.compile")``). The callee's branch on it is then a switch, as the caller's would be;
        decided by the literal default, it hid the compile a ``maybe_compile`` helper makes."""
        if len(arguments) != len(args):
            return args
        marked: list | None = None
        for position, (argument, (keyword, values)) in enumerate(zip(arguments, args)):
            if keyword in ("*", "**") or not values or isinstance(argument.value, ir.Const):
                continue
            if not all(isinstance(v, ConstVal) and v.switch is None for v in values):
                continue
            if not self.reads_switch(argument.value, frame):
                continue
            name = flag_key(argument.value) or ""  # computed (``cfg.compile and not debug``): unnamed
            if marked is None:
                marked = list(args)
            marked[position] = (keyword, frozenset(ConstVal(v.value, name) for v in values))  # type: ignore[union-attr]
        return tuple(marked) if marked is not None else args

    def reads_switch(self, expr: ir.Expr, frame: Frame) -> bool:
        """Whether ``expr`` reads a run-time switch directly. Calls are not made again: only names
        and attribute chains are evaluated (what the test's own evaluation looked up)."""
        if isinstance(expr, ir.Ref):
            if self.rebindable(expr.name, frame):
                return True
            return _holds_settings(
                self.interp.lookup(expr.name, frame), lambda: self.read_from_caller(expr.name, frame)
            )
        if isinstance(expr, ir.Attr):
            if _pure(expr):
                interp = self.interp

                def read() -> bool:
                    return self.read_from_caller(_root(expr), frame)

                bases = interp.eval(expr.base, frame)
                if _holds_settings(bases, read) or self.config_field(bases, expr.attr):
                    return True
                if _holds_settings(interp.attribute(bases, expr.attr), read):  # ``args.flag`` of a Namespace subclass
                    return True
            return self.reads_switch(expr.base, frame)
        if isinstance(expr, ir.Call):
            if _pure(expr.func) and any(
                isinstance(v, External) and v.name in knowledge.SETTINGS_CALL_BY_NAME
                for v in self.interp.eval(expr.func, frame)
            ):
                return True
            return self.reads_switch(expr.func, frame) or any(self.reads_switch(a.value, frame) for a in expr.args)
        if isinstance(expr, (ir.Combine, ir.Elements)):
            return any(self.reads_switch(part, frame) for part in expr.parts)
        if isinstance(expr, ir.Choice):
            return any(self.reads_switch(option, frame) for option in expr.options)
        if isinstance(expr, ir.Item):
            return self.reads_switch(expr.base, frame)
        return False

    def lazily_stored(self, test: ir.Expr, frame: Frame) -> bool:
        """``self._compiled is None`` (or ``is not None``) where the method walked stores to that
        attribute of its first parameter: a cache the program fills on first use
        (``if self._compiled is None: self._compiled = torch.compile(...)``), not a switch, whatever
        a harvest found the attribute may hold."""
        if not (
            isinstance(test, ir.Combine)
            and test.op in ("is", "is not")
            and len(test.parts) == 2
            and isinstance(test.parts[1], ir.Const)
            and test.parts[1].value is None
        ):
            return False
        attribute = test.parts[0]
        if not (isinstance(attribute, ir.Attr) and isinstance(attribute.base, ir.Ref) and frame.stack):
            return False
        function = self.interp.index.function(*frame.stack[-1])
        if (
            function is None
            or "." not in function.qualname  # a method's (a function's ``cfg.x is None`` fills a default)
            or not function.params
            or function.params[0] != attribute.base.name
        ):
            return False
        stored = ir.AttrTarget(attribute.base, attribute.attr)
        return any(
            isinstance(statement, ir.Assign) and stored in statement.targets
            for statement in ir.statements_in(function.body)
        )

    def read_from_caller(self, name: str | None, frame: Frame) -> bool:
        """``name``, holding data from a parameter no analyzed caller binds, holds what that caller
        set: it is a parameter of the function walked (``cfg``, ``self``), or a local every
        assignment of which reads one (V-JEPA 2's ``compile_model = args.get("model").get(...)``).
        Not a local the function computes (hao-ai-lab/FastVideo's ``current_start_frame += 1``,
        ``exit_flag = index == exit_flags[0]``, a loop's variable), which was named as a switch."""
        if name is None or not frame.stack:
            return name is not None
        function = self.interp.index.function(*frame.stack[-1])
        if function is None:
            return True
        key = (function.qualname, function.span, name)
        known = self._read_locals.get(key)
        if known is None:
            known = self._read_locals[key] = _read_from_parameters(name, function, depth=3)
        return known

    def rebindable(self, name: str, frame: Frame) -> bool:
        """``name`` read here is a module global that a rebinder of its module may change."""
        if frame.stack and (name in frame.env or name in frame.closure):
            return False  # a function's own name
        return name in self.interp.index.rebindable(frame.path)

    # -- config classes --------------------------------------------------------------------------

    def config_field(self, bases: Values, name: str) -> bool:
        """``cfg.<name>`` is a field of a config class (dataclass, attrs, pydantic) instance."""
        return any(
            isinstance(base, Instance) and self.is_config_class(base.cls) and name in self.fields(base.cls)
            for base in bases
        )

    def is_config_class(self, cls: ClassVal) -> bool:
        interp = self.interp

        def decide() -> bool:
            for klass in interp.mro(cls):
                if isinstance(klass, External):
                    if klass.name in knowledge.CONFIG_CLASS_BASES:
                        return True
                    continue
                if not isinstance(klass, ClassVal):
                    continue
                summary = interp.class_summary(klass)
                if summary is None:
                    continue

                frame = Frame(klass.path, {}, Context(), record=False)
                for decorator in summary.decorators:
                    named = decorator.func if isinstance(decorator, ir.Call) else decorator
                    if _pure(named) and any(
                        isinstance(v, External) and v.name in knowledge.CONFIG_CLASS_DECORATORS
                        for v in interp.eval(named, frame)
                    ):
                        return True
            return False

        return bool(interp.cached(self._config_classes, cls, decide, cycle=False))

    def fields(self, cls: ClassVal) -> frozenset[str]:
        """The fields of a config class and its project bases: names its bodies annotate or give a
        literal default (``compile: bool = False``, ``compile_mode = "default"``)."""
        interp = self.interp

        def collect() -> frozenset[str]:
            names: set[str] = set()
            for klass in interp.mro(cls):
                if not isinstance(klass, ClassVal):
                    continue
                summary = interp.class_summary(klass)
                if summary is not None:
                    names.update(summary.fields)
            return frozenset(names)

        return frozenset(interp.cached(self._config_fields, cls, collect))


def _chain_base(expr: ir.Expr) -> ir.Expr:
    """What an attribute chain starts from (``cfg`` of ``cfg.train.compile``)."""
    while isinstance(expr, ir.Attr):
        expr = expr.base
    return expr


def _root(expr: ir.Expr) -> str | None:
    """The name an attribute chain starts from, if a name."""
    base = _chain_base(expr)
    return base.name if isinstance(base, ir.Ref) else None


def _pure(expr: ir.Expr) -> bool:
    """A name or an attribute chain on one: evaluating it calls nothing."""
    return isinstance(_chain_base(expr), (ir.Ref, ir.Import))


def _holds_settings(values: Values, read_from_caller: Callable[[], bool]) -> bool:
    """Settings, or data from a parameter no analyzed caller binds (an entry point's ``cfg``: set by
    whoever calls it, outside the analyzed program, as launch settings are) when the name read holds
    what the caller set (``read_from_caller``). Not what a compiled call returned, whatever its
    inputs were: a loss is computed by the run, not set at its launch (huggingface/nanoVLM's ``if
    loss is not None:`` was named as a switch)."""
    if any(isinstance(v, Settings) or (isinstance(v, ConstVal) and v.switch is not None) for v in values):
        return True
    if _settings_object(values):
        return True
    return (
        any(isinstance(v, Data) and v.from_parameter and not (v.origins or v.elements) for v in values)
        and read_from_caller()
    )


#: Calls that read a setting: ``cfg.get("compile", False)``, ``getattr(args, "amp")``, ``bool(...)``.
_READING_METHODS = frozenset({"get", "getattr", "__getitem__", "pop"})
_READING_FUNCTIONS = frozenset({"getattr", "bool", "int", "float", "str"})
_COMPARISONS = frozenset({"==", "!=", "is", "is not", "in", "not in", *ir.ORDERINGS})


def _read_from_parameters(name: str, function: ir.FunctionSummary, depth: int) -> bool:
    """``name`` is a parameter of ``function``, or a local each assignment of which reads one
    (``_reads``); a loop's variable or a value computed from one is not."""
    if name in function.params:
        return True
    values = list(_assignments(function.body, name))
    return (
        bool(values) and depth > 0 and all(value is not None and _reads(value, function, depth - 1) for value in values)
    )


def _assignments(body: tuple[ir.Stmt, ...], name: str) -> Iterator[ir.Expr | None]:
    """What each assignment to ``name`` in ``body`` assigns (None: a loop's variable, an unpacked
    element, a ``with ... as`` target), branches included, not nested functions."""
    loop_variables: list[ir.Assign] = []  # a loop's first statement binds its variable
    for statement in ir.statements_in(body):
        if isinstance(statement, ir.Branch) and statement.loop and statement.arms and statement.arms[0]:
            first = statement.arms[0][0]
            if isinstance(first, ir.Assign):
                loop_variables.append(first)
        elif isinstance(statement, ir.With):
            if any(item.target is not None and _binds(item.target, name) for item in statement.items):
                yield None
        elif isinstance(statement, ir.Assign):
            for target in statement.targets:
                if isinstance(target, ir.NameTarget) and target.name == name:
                    yield None if any(statement is loop for loop in loop_variables) else statement.value
                elif isinstance(target, ir.MultiTarget) and _binds(target, name):
                    yield None


def _binds(target: ir.Target, name: str) -> bool:
    if isinstance(target, ir.NameTarget):
        return target.name == name
    return isinstance(target, ir.MultiTarget) and any(_binds(t, name) for t in target.targets)


def _reads(expr: ir.Expr, function: ir.FunctionSummary, depth: int) -> bool:
    """``expr`` reads a setting from what the caller passed: a literal default, a parameter or a
    local that reads one, its attributes, items and ``get``s, and their comparisons with literals."""
    if isinstance(expr, ir.Const):
        return True
    if isinstance(expr, ir.Ref):
        return _read_from_parameters(expr.name, function, depth)
    if isinstance(expr, ir.Attr):
        return _reads(expr.base, function, depth)
    if isinstance(expr, ir.Item):
        return _reads(expr.base, function, depth)
    if isinstance(expr, ir.Choice):
        return all(_reads(option, function, depth) for option in expr.options)
    if isinstance(expr, ir.Call):
        func = expr.func
        if isinstance(func, ir.Attr) and func.attr in _READING_METHODS:
            return _reads(func.base, function, depth)
        if isinstance(func, ir.Ref) and func.name in _READING_FUNCTIONS and expr.args:
            return _reads(expr.args[0].value, function, depth)
        return False
    if isinstance(expr, ir.Combine):
        if expr.op == "not" and len(expr.parts) == 1:
            return _reads(expr.parts[0], function, depth)
        if expr.op in _COMPARISONS and len(expr.parts) == 2:
            return any(isinstance(part, ir.Const) for part in expr.parts) and all(
                _reads(part, function, depth) for part in expr.parts
            )
    return False


def _passed_switch(test: ir.Expr, tests: Values) -> str | None:
    """The switch a caller passed in as the name tested (``if enabled:`` in ``maybe_compile(model,
    cfg.compile)``): the finding names what the user sets, and the caller's own ``if cfg.compile:``
    is the same condition."""
    if not isinstance(test, ir.Ref):
        return None
    names = {t.switch if isinstance(t, ConstVal) else None for t in tests}
    name = names.pop() if len(names) == 1 else None
    return name or None


def _settings_object(values: Values) -> bool:
    return any(
        isinstance(v, (External, ExternalInstance))
        and (v.name if isinstance(v, External) else v.cls) in knowledge.SETTINGS_OBJECTS
        for v in values
    )


def with_condition(conditions: tuple[Condition, ...], condition: Condition) -> tuple[Condition, ...]:
    """``conditions`` and ``condition`` (a branch inside a switch's arm), the outermost kept."""
    if condition in conditions or len(conditions) >= MAX_CONDITIONS:
        return conditions
    return (*conditions, condition)


def stamp_arm(env: dict[str, Values], before: dict[str, Values], condition: Condition) -> None:
    """The compiled values and autocast contexts an arm of a switch bound (a helper called there
    compiled them, outside the arm's frame; ``precision_context = torch.autocast(...)`` under ``if
    cfg.precision == "bf16":``, entered after the branch) exist on that arm only: they carry its
    condition (NVIDIA/physicsnemo's darcy trainer claimed its bf16 autocast on every run)."""
    for name, values in env.items():
        known = before.get(name)
        if values is known:
            continue
        fresh = values if known is None else values - known
        marked = stamped(fresh, condition)
        if marked != fresh:
            env[name] = (values - fresh) | marked


def stamped(values: Values, *conditions: Condition) -> Values:
    """``values`` chosen under ``conditions`` (an option of ``a if <switch> else b``, what an arm's
    code made): the compiled values and autocast contexts among them carry each."""
    for condition in conditions:
        fresh = [v for v in values if _unstamped(v, condition)]
        if fresh:
            values = values.difference(fresh).union(_stamped(v, condition) for v in fresh)
    return values


def _unstamped(value: object, condition: Condition) -> bool:
    if isinstance(value, Collection):  # ``model.layers[i] = torch.compile(block)`` in a callee
        return any(_unstamped(item, condition) for item in value.items.union(*value.positions))
    if isinstance(value, Compiled):
        return condition not in value.conditions
    if isinstance(value, External):
        return value.name in api.STAMPED_CALLABLES
    if isinstance(value, OnSwitch):
        return condition not in value.conditions
    return isinstance(value, AutocastContext) and value.state.active and condition not in value.state.switches


def _stamped(value: object, condition: Condition) -> object:
    if isinstance(value, Collection):
        positions = tuple(stamped(p, condition) for p in value.positions)
        return replace(value, items=stamped(value.items, condition), positions=positions)
    if isinstance(value, Compiled):
        return replace(value, conditions=with_condition(value.conditions, condition))
    if isinstance(value, External):
        return OnSwitch(value, (condition,))
    if isinstance(value, OnSwitch):
        return replace(value, conditions=with_condition(value.conditions, condition))
    assert isinstance(value, AutocastContext)
    return AutocastContext(replace(value.state, switches=with_condition(value.state.switches, condition)))
