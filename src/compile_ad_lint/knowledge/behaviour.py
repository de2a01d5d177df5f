"""What torch does at run time, per version: rows backed by the recorded facts.

Each row holds for a range of torch series (``versions.Versions``) and names the cases of the
facts scripts (``facts/*.py``, run per version into ``facts/recorded/torch-<release>.json``) that
show it. ``tests/knowledge/test_recorded_facts.py`` checks every row against every recorded file
and that every recorded case is claimed by a row. The analysis asks these tables for the target's
series (``forward_ad_outcome``, ``in_place_compiles_torch_nn``); no code compares versions itself.

Adding a torch version: run each facts script with ``--record`` on it, add its series to
``versions.RECORDED``, and split or extend the rows whose recorded outcome changed.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from ..core.torch_versions import EVERY_VERSION, Series, Versions

_BEFORE_2_14 = Versions(before=Series(2, 14))
_SINCE_2_14 = Versions(since=Series(2, 14))
_BEFORE_2_15, _SINCE_2_15 = Versions(before=Series(2, 15)), Versions(since=Series(2, 15))
#: pytorch/pytorch#187284 (closed for 2.14): Dynamo graph-breaks when it would wrap a dual tensor
#: input ("Attempted to wrap a dual tensor input", GB0375), so a frame whose first call is dual runs eagerly.
_GRAPH_BREAK = "torch/_dynamo/variables/builder.py (2.14): wrapping a dual tensor input is a graph break (GB0375)"


@dataclass(frozen=True)
class Fact:
    """A case of a facts script (``facts/<script>.py``) and the outcomes a row accepts from it."""

    script: str
    case: str
    outcomes: frozenset[str]


def _facts(script: str, outcome: str | Iterable[str], *cases: str) -> tuple[Fact, ...]:
    accepted = frozenset([outcome] if isinstance(outcome, str) else outcome)
    return tuple(Fact(script, case, accepted) for case in cases)


# -- forward-mode AD through a compiled callable (CAL001, CAL006) ---------------------------------


class Outcome(str, enum.Enum):
    """What a dual call of a compiled callable gives."""

    TANGENT_NONE = "tangent None"
    #: The right tangent. For a first dual call on torch >= 2.14 this is a graph break: the frame runs eagerly.
    TANGENT_CORRECT = "tangent correct"
    RAISES_NOT_IMPLEMENTED = "raises NotImplementedError"
    RAISES_UNSUPPORTED = "raises Unsupported"
    #: ``jacobian(strategy="forward-mode")``: an all-zero Jacobian or ``BackendCompilerFailed``, by shapes.
    JACOBIAN_WRONG = "jacobian wrong"
    JACOBIAN_CORRECT = "jacobian correct"

    @property
    def correct(self) -> bool:
        return self in (Outcome.TANGENT_CORRECT, Outcome.JACOBIAN_CORRECT)


class CompiledKind(str, enum.Enum):
    FUNCTION = "a compiled function"
    #: A function whose dual inputs also require grad (``make_dual(x.requires_grad_(), t)``).
    FUNCTION_INPUTS_REQUIRE_GRAD = "a compiled function whose inputs require grad"
    MODULE_WITH_PARAMETERS = "a compiled module with parameters"
    PARAMETERLESS_MODULE = "a compiled module without parameters"
    #: ``torch.autograd.functional.jacobian(f, x, strategy="forward-mode", vectorize=True)`` over a compiled ``f``.
    FORWARD_MODE_JACOBIAN = "a forward-mode jacobian of a compiled function"


class CallOrder(str, enum.Enum):
    #: The compiled callable's first call in the process is the dual one.
    FIRST_CALL_DUAL = "first call dual"
    #: It ran (was traced) with plain inputs before the dual call: a training step, a warm-up.
    PLAIN_FIRST = "plain first"


@dataclass(frozen=True)
class ForwardAdRow:
    kind: CompiledKind
    order: CallOrder
    #: ``fullgraph=True`` (True), not (False), either (None).
    fullgraph: bool | None
    versions: Versions
    outcome: Outcome
    facts: tuple[Fact, ...]
    source: str


_FA = "forward_ad"
_O = Outcome
_K = CompiledKind
_FIRST, _PLAIN = CallOrder.FIRST_CALL_DUAL, CallOrder.PLAIN_FIRST
_NOT_IMPLEMENTED = (
    "AOTAutograd's compiled autograd.Function has no jvp (torch/_functorch/_aot_autograd/runtime_wrappers.py)"
)
_REUSED = "the graph traced with plain inputs is reused for dual inputs: Dynamo's guards do not check for duals"

FORWARD_AD_ROWS: tuple[ForwardAdRow, ...] = (
    ForwardAdRow(
        _K.FUNCTION,
        _FIRST,
        False,
        _BEFORE_2_14,
        _O.TANGENT_NONE,
        _facts(
            _FA,
            "tangent None",
            "function, first call dual",
            "function, first call dual, called twice",
            "function, mode='max-autotune-no-cudagraphs', first call dual",
            "torch._dynamo.optimize('inductor'), first call dual",
        ),
        "pytorch/pytorch#187284: inductor's graph drops the tangents of dual inputs that do not require grad",
    ),
    ForwardAdRow(
        _K.FUNCTION,
        _FIRST,
        False,
        _SINCE_2_14,
        _O.TANGENT_CORRECT,
        _facts(
            _FA,
            "tangent correct",
            "function, first call dual",
            "function, first call dual, called twice",
            "function, mode='max-autotune-no-cudagraphs', first call dual",
            "torch._dynamo.optimize('inductor'), first call dual",
        ),
        _GRAPH_BREAK,
    ),
    ForwardAdRow(
        _K.FUNCTION,
        _FIRST,
        True,
        _BEFORE_2_14,
        _O.TANGENT_NONE,
        _facts(_FA, "tangent None", "function, first call dual, fullgraph=True"),
        "pytorch/pytorch#187284",
    ),
    ForwardAdRow(
        _K.FUNCTION,
        _FIRST,
        True,
        _SINCE_2_14,
        _O.RAISES_UNSUPPORTED,
        _facts(_FA, "raises Unsupported", "function, first call dual, fullgraph=True"),
        f"{_GRAPH_BREAK}; with fullgraph=True a graph break raises torch._dynamo.exc.Unsupported",
    ),
    ForwardAdRow(
        _K.FUNCTION,
        _PLAIN,
        None,
        EVERY_VERSION,
        _O.TANGENT_NONE,
        _facts(
            _FA,
            "tangent None",
            "function, plain first",
            "function, plain first inside dual_level",
            "function, plain first, fullgraph=True",
            "function, plain through another torch.compile wrapper first",
            "torch._dynamo.optimize('inductor'), plain first",
        ),
        _REUSED,
    ),
    ForwardAdRow(
        _K.FUNCTION_INPUTS_REQUIRE_GRAD,
        _FIRST,
        None,
        _BEFORE_2_14,
        _O.RAISES_NOT_IMPLEMENTED,
        _facts(
            _FA,
            "raises NotImplementedError",
            "function, input requires grad, first call dual",
            "function, input requires grad, first call dual, fullgraph=True",
        ),
        _NOT_IMPLEMENTED,
    ),
    ForwardAdRow(
        _K.FUNCTION_INPUTS_REQUIRE_GRAD,
        _FIRST,
        False,
        _SINCE_2_14,
        _O.TANGENT_CORRECT,
        _facts(_FA, "tangent correct", "function, input requires grad, first call dual"),
        _GRAPH_BREAK,
    ),
    ForwardAdRow(
        _K.FUNCTION_INPUTS_REQUIRE_GRAD,
        _FIRST,
        True,
        _SINCE_2_14,
        _O.RAISES_UNSUPPORTED,
        _facts(_FA, "raises Unsupported", "function, input requires grad, first call dual, fullgraph=True"),
        f"{_GRAPH_BREAK}; with fullgraph=True a graph break raises torch._dynamo.exc.Unsupported",
    ),
    ForwardAdRow(
        _K.FUNCTION_INPUTS_REQUIRE_GRAD,
        _PLAIN,
        None,
        EVERY_VERSION,
        _O.RAISES_NOT_IMPLEMENTED,
        _facts(_FA, "raises NotImplementedError", "function, input requires grad, plain first"),
        f"{_REUSED}; {_NOT_IMPLEMENTED}",
    ),
    ForwardAdRow(
        _K.MODULE_WITH_PARAMETERS,
        _FIRST,
        None,
        _BEFORE_2_14,
        _O.RAISES_NOT_IMPLEMENTED,
        _facts(
            _FA,
            "raises NotImplementedError",
            "torch.compile(module with parameters), first call dual",
            "torch.compile(module with parameters), first call dual, fullgraph=True",
            "project module .compile() in place, first call dual",
        ),
        _NOT_IMPLEMENTED,
    ),
    ForwardAdRow(
        _K.MODULE_WITH_PARAMETERS,
        _FIRST,
        False,
        _SINCE_2_14,
        _O.TANGENT_CORRECT,
        _facts(
            _FA,
            "tangent correct",
            "torch.compile(module with parameters), first call dual",
            "project module .compile() in place, first call dual",
        ),
        _GRAPH_BREAK,
    ),
    ForwardAdRow(
        _K.MODULE_WITH_PARAMETERS,
        _FIRST,
        True,
        _SINCE_2_14,
        _O.RAISES_UNSUPPORTED,
        _facts(_FA, "raises Unsupported", "torch.compile(module with parameters), first call dual, fullgraph=True"),
        f"{_GRAPH_BREAK}; with fullgraph=True a graph break raises torch._dynamo.exc.Unsupported",
    ),
    ForwardAdRow(
        _K.MODULE_WITH_PARAMETERS,
        _PLAIN,
        None,
        EVERY_VERSION,
        _O.RAISES_NOT_IMPLEMENTED,
        _facts(
            _FA,
            "raises NotImplementedError",
            "torch.compile(module with parameters), plain first",
            "project module .compile() in place, plain first",
        ),
        f"{_REUSED}; {_NOT_IMPLEMENTED}",
    ),
    ForwardAdRow(
        _K.PARAMETERLESS_MODULE,
        _FIRST,
        None,
        _BEFORE_2_14,
        _O.TANGENT_NONE,
        _facts(
            _FA,
            "tangent None",
            "torch.compile(parameterless module), first call dual",
            "torch.compile(parameterless module), first call dual, fullgraph=True",
        ),
        "pytorch/pytorch#187284",
    ),
    ForwardAdRow(
        _K.PARAMETERLESS_MODULE,
        _FIRST,
        False,
        _SINCE_2_14,
        _O.TANGENT_CORRECT,
        _facts(_FA, "tangent correct", "torch.compile(parameterless module), first call dual"),
        _GRAPH_BREAK,
    ),
    ForwardAdRow(
        _K.PARAMETERLESS_MODULE,
        _FIRST,
        True,
        _SINCE_2_14,
        _O.RAISES_UNSUPPORTED,
        _facts(_FA, "raises Unsupported", "torch.compile(parameterless module), first call dual, fullgraph=True"),
        f"{_GRAPH_BREAK}; with fullgraph=True a graph break raises torch._dynamo.exc.Unsupported",
    ),
    ForwardAdRow(
        _K.PARAMETERLESS_MODULE,
        _PLAIN,
        None,
        EVERY_VERSION,
        _O.TANGENT_NONE,
        _facts(_FA, "tangent None", "torch.compile(parameterless module), plain first"),
        _REUSED,
    ),
    ForwardAdRow(
        _K.FORWARD_MODE_JACOBIAN,
        _FIRST,
        None,
        _BEFORE_2_14,
        _O.JACOBIAN_WRONG,
        _facts(
            _FA,
            ("jacobian all-zero", "jacobian wrong", "raises BackendCompilerFailed"),
            "forward-mode jacobian, first call, tanh(x) * x.sum() on 5",
            "forward-mode jacobian, first call, sin(x**3) on 4",
        ),
        "torch/autograd/functional.py `_jacfwd`: vmap over a dual_level() call of the function",
    ),
    ForwardAdRow(
        _K.FORWARD_MODE_JACOBIAN,
        _PLAIN,
        None,
        _BEFORE_2_14,
        _O.JACOBIAN_WRONG,
        _facts(
            _FA,
            ("jacobian all-zero", "jacobian wrong", "raises BackendCompilerFailed"),
            "forward-mode jacobian, plain first, tanh(x) * x.sum() on 5",
            "forward-mode jacobian, plain first, sin(x**3) on 4",
        ),
        "torch/autograd/functional.py `_jacfwd`",
    ),
    ForwardAdRow(
        _K.FORWARD_MODE_JACOBIAN,
        _FIRST,
        None,
        _SINCE_2_14,
        _O.JACOBIAN_CORRECT,
        _facts(
            _FA,
            "jacobian correct",
            "forward-mode jacobian, first call, tanh(x) * x.sum() on 5",
            "forward-mode jacobian, first call, sin(x**3) on 4",
        ),
        _GRAPH_BREAK,
    ),
    ForwardAdRow(
        _K.FORWARD_MODE_JACOBIAN,
        _PLAIN,
        None,
        _SINCE_2_14,
        _O.JACOBIAN_CORRECT,
        _facts(
            _FA,
            "jacobian correct",
            "forward-mode jacobian, plain first, tanh(x) * x.sum() on 5",
            "forward-mode jacobian, plain first, sin(x**3) on 4",
        ),
        "measured (facts/forward_ad.py): under vmap the dual call graph-breaks even after a plain trace",
    ),
)


def forward_ad_row(kind: CompiledKind, order: CallOrder, fullgraph: bool, series: Series) -> ForwardAdRow:
    """The row for a dual call of ``kind`` in ``order`` on ``series`` (exactly one holds: tested)."""
    for row in FORWARD_AD_ROWS:
        if (
            row.kind is kind
            and row.order is order
            and row.fullgraph in (None, fullgraph)
            and row.versions.holds_for(series)
        ):
            return row
    raise LookupError(f"no forward-AD row for {kind.value}, {order.value}, fullgraph={fullgraph}, torch {series}")


#: Backends and transforms that keep tangents, plain call first or not, on every recorded version
#: (``knowledge.torch_api.TANGENT_SAFE_BACKENDS`` names the backends the analysis trusts).
TANGENT_KEEPING: tuple[ForwardAdRow, ...] = tuple(
    ForwardAdRow(
        _K.FUNCTION,
        order,
        None,
        EVERY_VERSION,
        _O.TANGENT_CORRECT,
        _facts(_FA, "tangent correct", case),
        source,
    )
    for order, case, source in (
        (_PLAIN, "backend='eager', plain first", "the eager backend runs the captured graph with autograd"),
        (_FIRST, "backend='aot_eager', first call dual", "aot_eager keeps tangents of functions"),
        (_PLAIN, "backend='aot_eager', plain first", "aot_eager keeps tangents of functions"),
        (_PLAIN, "torch.compiler.disable, plain first", "torch/compiler/__init__.py `disable`: never traced"),
        (_FIRST, "torch.func.jvp over the compiled function, first call", "torch.func.jvp does not use dual_level"),
        (_PLAIN, "torch.func.jvp over the compiled function, plain first", "torch.func.jvp does not use dual_level"),
    )
)


# -- what `.compile()` in place compiles (every rule) ------------------------------------------------


@dataclass(frozen=True)
class InPlaceCompileRow:
    """Whether ``module.compile()`` in place compiles a module that torch.nn itself defines."""

    versions: Versions
    compiles_torch_nn_modules: bool
    facts: tuple[Fact, ...]
    source: str


_SCOPE = "compile_scope"
IN_PLACE_COMPILE_ROWS: tuple[InPlaceCompileRow, ...] = (
    InPlaceCompileRow(
        _BEFORE_2_14,
        False,
        _facts(
            _SCOPE,
            "not compiled",
            "built-in nn.Linear .compile() in place",
            "nn.Sequential of built-ins .compile() in place",
        )
        + _facts(
            _FA,
            "tangent correct",
            "built-in nn.Linear .compile() in place, first call dual",
            "built-in nn.Linear .compile() in place, plain first",
        ),
        "torch/_dynamo/trace_rules.py (2.13): frames of torch.nn's own modules are skipped, so "
        "`Module.compile()` (which compiles `self._call_impl`) runs a built-in module eagerly",
    ),
    InPlaceCompileRow(
        _SINCE_2_14,
        True,
        _facts(
            _SCOPE,
            "compiled",
            "built-in nn.Linear .compile() in place",
            "nn.Sequential of built-ins .compile() in place",
        )
        + _facts(_FA, "tangent correct", "built-in nn.Linear .compile() in place, first call dual")
        + _facts(_FA, "raises NotImplementedError", "built-in nn.Linear .compile() in place, plain first"),
        "measured on 2.14.1 and 2.15.0 (facts/compile_scope.py): Dynamo traces them",
    ),
)


def in_place_compiles_torch_nn(series: Series) -> bool:
    return next(row.compiles_torch_nn_modules for row in IN_PLACE_COMPILE_ROWS if row.versions.holds_for(series))


# -- other facts the rules rest on -------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """A fact a rule rests on, for the versions it holds for (every recorded one unless said)."""

    rule: str
    what: str
    facts: tuple[Fact, ...]
    versions: Versions = EVERY_VERSION


_BA = "backward_autocast"
_DB = "double_backward_and_unused_outputs"
_DIFFERS, _SAME = "differs from eager", "same as eager"
_ACCEPTED = "accepted"
_RAISES_DOUBLE = "raises RuntimeError: torch.compile with aot_autograd does not currently support double backward"
_DONATED = (
    "raises RuntimeError: This backward function was compiled with non-empty donated buffers which requires "
    "create_graph=False and retain_graph=False"
)
_NOT_USED = "raises RuntimeError: The differentiated Tensor at index 0 appears to not have been used in the graph"
_KEEPING = "tangent correct"
#: The facts cases of a compiled function that differentiates twice (in its own body, or the penalty
#: in a loss module's ``forward`` it calls).
_INSIDE = tuple(
    f"{shape}_inside_compiled_function"
    for shape in (
        "double_backward",
        "backward_create_graph",
        "grad_twice",
        "backward_then_grad",
        "penalty_with_critic_losses",
        "penalty_in_loss_module",
    )
)

CLAIMS: tuple[Claim, ...] = (
    Claim(
        "CAL002",
        "backward_pass_autocast defaults to 'same_as_forward'",
        _facts(_BA, "'same_as_forward'", "default value"),
    ),
    Claim(
        "CAL002",
        "a compiled backward traced under another autocast state than it runs in differs from eager",
        _facts(
            _BA,
            _DIFFERS,
            "forward in autocast, default config, backward outside",
            "forward in autocast, config 'off', backward inside",
            "forward outside autocast, default config, backward inside",
        ),
    ),
    Claim(
        "CAL002",
        "a compiled backward traced under the autocast state it runs in matches eager",
        _facts(
            _BA,
            _SAME,
            "forward in autocast, config 'off', backward outside",
            "forward in autocast, default config, backward inside",
            "forward outside autocast, matching kwargs list, backward inside",
        ),
    ),
    Claim(
        "CAL002",
        "a compiled call through torch.utils.checkpoint under autocast, its backward outside, differs from eager "
        "(the checkpoint recomputes the forward under the forward's autocast state)",
        _facts(
            _BA,
            _DIFFERS,
            "forward in autocast through checkpoint(use_reentrant=False), default config, backward outside",
            "forward in autocast through checkpoint(use_reentrant=True), default config, backward outside",
        ),
    ),
    Claim(
        "CAL002",
        "autocast entered by a replaced forward (accelerate's prepare) runs inside the graph of a module "
        "compiled in place, which is traced with the autocast state at its call, and outside torch.compile(module)'s",
        _facts(_BA, _SAME, "module compiled in place, forward replaced to enter autocast, backward outside")
        + _facts(_BA, _DIFFERS, "torch.compile(module), forward replaced to enter autocast, backward outside"),
    ),
    Claim(
        "CAL002",
        "`torch.compile(module).forward(x)` runs the compiled module; `forward` of a module compiled in place runs "
        "eagerly",
        _facts(
            _SCOPE,
            "compiled",
            "torch.compile(project module).forward(x)",
            "torch.compile(built-in nn.Linear).forward(x)",
        )
        + _facts(_SCOPE, "not compiled", "project module .compile() in place, then .forward(x)"),
    ),
    Claim(
        "CAL002",
        "`@torch.compile` (bare or with arguments) on an nn.Module class compiles the class's `_call_impl` in "
        "place (torch/_dynamo/eval_frame.py `_TorchDynamoContext.__call__`): every instance's call runs compiled, "
        "and its backward is traced under the autocast its call ran in (entered through an ExitStack too)",
        _facts(
            _SCOPE,
            "compiled",
            "@torch.compile on a project module class, instance called",
            "@torch.compile(backend=...) on a project module class, instance called",
        )
        + _facts(
            _BA,
            _DIFFERS,
            "@torch.compile module class, forward in autocast entered by an ExitStack, default config, backward outside",
        )
        + _facts(
            _BA,
            _SAME,
            "@torch.compile module class, forward in autocast entered by an ExitStack, config 'off', backward outside",
        ),
    ),
    Claim(
        "CAL003",
        "'same_as_forward', 'off' and a list of autocast kwargs dicts are accepted",
        _facts(_BA, _ACCEPTED, "value 'same_as_forward'", "value 'off'", "value: a list of autocast kwargs dicts"),
    ),
    Claim(
        "CAL003",
        "any other value fails when the backward is traced (an AssertionError, wrapped in BackendCompilerFailed)",
        _facts(
            _BA,
            "raises BackendCompilerFailed (AssertionError)",
            "value 'sameasforward' (a misspelled string)",
            "value: a bare kwargs dict",
            "value None",
            "value False",
        ),
    ),
    Claim(
        "CAL001",
        "the tangent-keeping backends and transforms keep tangents, plain call first or not",
        _facts(
            _FA,
            _KEEPING,
            "backend='eager', plain first",
            "backend='aot_eager', first call dual",
            "backend='aot_eager', plain first",
            "torch.compiler.disable, plain first",
            "torch.func.jvp over the compiled function, first call",
            "torch.func.jvp over the compiled function, plain first",
        ),
    ),
    Claim(
        "CAL001",
        "a first dual call's graph break keeps later calls eager: only a plain call before the first dual call matters",
        _facts(_FA, "first tangent correct; after a plain call tangent correct", "function, dual then plain then dual"),
        _SINCE_2_14,
    ),
    Claim(
        "CAL001",
        "before 2.14 every dual call drops the tangent",
        _facts(_FA, "first tangent None; after a plain call tangent None", "function, dual then plain then dual"),
        _BEFORE_2_14,
    ),
    Claim(
        "CAL001",
        "two torch.compile wrappers of one function, or compiled instances of one torch.nn module class, share "
        "the graph a plain call traced",
        _facts(
            _FA,
            ("tangent None", "raises NotImplementedError"),
            "function, plain through another torch.compile wrapper first",
            "built-in nn.Linear, plain through another compiled instance first",
        ),
    ),
    Claim(
        "CAL001",
        "another compiled instance of a project module class traces its own graph: its first dual call graph-breaks",
        _facts(_FA, "tangent correct", "project module, plain through another compiled instance of its class first"),
        _SINCE_2_14,
    ),
    Claim(
        "CAL001",
        "before 2.14 a compiled module with parameters raises whatever ran before",
        _facts(
            _FA,
            "raises NotImplementedError",
            "project module, plain through another compiled instance of its class first",
        ),
        _BEFORE_2_14,
    ),
    *(
        Claim("CAL004", what, _facts(_DB, outcome, *cases), versions)
        for what, outcome, cases, versions in (
            (
                "a second backward through a compiled backward raises",
                f"first-order grad correct; grad(create_graph=True) correct; second backward {_RAISES_DOUBLE}",
                (
                    "grad_create_graph_inductor",
                    "grad_create_graph_aot_eager",
                    "grad_create_graph_disable_around_compiled",
                ),
                EVERY_VERSION,
            ),
            (
                "backward(create_graph=True), then a second backward, raises",
                f"backward(create_graph=True) correct; second backward {_RAISES_DOUBLE}",
                ("backward_create_graph_inductor",),
                EVERY_VERSION,
            ),
            (
                "with cudagraphs on CPU (skipped) the AOTAutograd graph runs: the second backward raises",
                f"grad(create_graph=True) correct; second backward {_RAISES_DOUBLE}",
                ("grad_create_graph_cudagraphs_fresh",),
                EVERY_VERSION,
            ),
            (
                "create_graph=True after a first-order backward raises (donated buffers)",
                (
                    f"first-order grad correct; grad(create_graph=True) {_DONATED}",
                    f"first-order backward correct; grad(create_graph=True) {_DONATED}",
                ),
                ("grad_create_graph_cudagraphs", "create_graph_after_first_order_module_inductor"),
                EVERY_VERSION,
            ),
            (
                "the eager backend and torch.compiler.disable differentiate twice",
                "first-order grad correct; grad(create_graph=True) correct; second backward correct",
                ("grad_create_graph_eager_backend", "grad_create_graph_disable"),
                EVERY_VERSION,
            ),
            (
                "torch.autograd.functional.jvp, hvp and vhp raise",
                _RAISES_DOUBLE,
                ("functional_jvp", "functional_hvp", "functional_vhp"),
                EVERY_VERSION,
            ),
            ("first-order vjp is right", "correct", ("functional_vjp",), EVERY_VERSION),
            (
                "torch.autograd.functional.hessian returns an all-zero Hessian",
                "all-zero Hessian, no error (eager: non-zero)",
                ("functional_hessian",),
                _BEFORE_2_14,
            ),
            ("torch.autograd.functional.hessian raises", "raises RuntimeError", ("functional_hessian",), _SINCE_2_14),
            (
                "vjp/jacobian(create_graph=True): a backward through the result raises",
                tuple(
                    f"{name} correct; .backward() through its result {_RAISES_DOUBLE}; autograd.grad(result, inputs) {tail}"
                    for name in ("vjp", "jacobian")
                    for tail in (_NOT_USED, _RAISES_DOUBLE)
                ),
                ("functional_vjp_create_graph", "functional_jacobian_create_graph"),
                EVERY_VERSION,
            ),
            (
                "the torch.func transforms are right over a compiled callable",
                "correct",
                ("func_grad", "func_jacrev", "func_jacfwd", "func_hessian", "func_jvp", "func_vjp"),
                EVERY_VERSION,
            ),
            ("a compiled function differentiating twice in its own body raises", _RAISES_DOUBLE, _INSIDE, _BEFORE_2_15),
            ("the same raises in five of the six recorded shapes", _RAISES_DOUBLE, _INSIDE[1:], _SINCE_2_15),
            (
                "a penalty over a plain nn.Sequential, differentiated twice inside a compiled function, matches eager",
                "every parameter's grad equal to eager",
                _INSIDE[:1],
                _SINCE_2_15,
            ),
            (
                "after a torch.func transform ran it, autograd.functional.hessian is right (call order)",
                "after torch.func.hessian: autograd.functional.hessian correct",
                ("func_then_functional_hessian",),
                EVERY_VERSION,
            ),
        )
    ),
    Claim(
        "CAL001",
        "torch.compiler.disable around a compiled callable: the compiled one inside still drops the tangent",
        _facts(_DB, "tangent None", "disable_around_compiled_forward_ad"),
        _BEFORE_2_14,
    ),
    Claim(
        "CAL001",
        "torch.compiler.disable around a compiled callable: its first dual call graph-breaks",
        _facts(_DB, "correct", "disable_around_compiled_forward_ad"),
        _SINCE_2_14,
    ),
    *(
        Claim("CAL005", what, _facts(_DB, outcome, *cases))
        for what, outcome, cases in (
            (
                "a leaf only an unused output depends on gets zeros, not None; resetting .grad restores None",
                "eager None; compiled zeros; compiled + .grad = None after backward: None",
                ("unused_output_inductor",),
            ),
            (
                "the same with aot_eager and a dict result",
                "eager None; compiled zeros",
                ("unused_output_aot_eager", "unused_output_dict"),
            ),
            (
                "the eager backend and returning only what the loss uses give None",
                ("eager None; compiled None",),
                ("unused_output_eager_backend", "fix_return_only_used"),
            ),
            (
                "autograd.grad returns zeros for the unused leaf",
                "allow_unused=True: eager None, compiled zeros; without it: eager raises RuntimeError: The differentiated "
                "Tensor at index 1 appears to not have been used in the graph, compiled zeros",
                ("unused_output_autograd_grad",),
            ),
            (
                "AdamW's weight decay moves an unused auxiliary head",
                "eager None; compiled zeros; AdamW(weight_decay=0.1) step moves the aux head: eager no, compiled yes",
                ("module_aux_head",),
            ),
            (
                "logits and loss both used: every gradient equals eager",
                "every parameter's grad equal to eager; none None, none all-zero",
                ("module_logits_and_loss",),
            ),
        )
    ),
    Claim(
        "ALL",
        "torch.compile(...) and a project module's .compile() compile on every version",
        _facts(
            _SCOPE,
            "compiled",
            "project module .compile() in place",
            "torch.compile(built-in nn.Linear)",
            "torch.compile(project module)",
        ),
    ),
)


def claimed(series: Series) -> Iterable[tuple[str, Fact]]:
    """Every fact that a row or claim holding for ``series`` rests on, with a name for the row: what
    the recorded file of that series must show."""
    for row in FORWARD_AD_ROWS:
        if row.versions.holds_for(series):
            name = f"forward-AD row ({row.kind.value}, {row.order.value}, fullgraph={row.fullgraph}, {row.versions})"
            yield from ((name, fact) for fact in row.facts)
    for scope in IN_PLACE_COMPILE_ROWS:
        if scope.versions.holds_for(series):
            yield from ((f"in-place compile row ({scope.versions})", fact) for fact in scope.facts)
    for claim in CLAIMS:
        if claim.versions.holds_for(series):
            yield from ((f"{claim.rule}: {claim.what}", fact) for fact in claim.facts)
