"""The PyTorch spellings the analysis recognizes, by fully qualified name."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..core.plans import BackendEdit
from ..core.torch_versions import EVERY_VERSION, Series, Versions
from .effects import Effect
from .frameworks import FRAMEWORK_PACKAGES
from .second_order import DOUBLE_BACKWARD
from .spelling import Anchor, Preceded

#: Packages that are always treated as external, even when their sources are part of the checked
#: tree (linting torch's own sources must not turn ``torch.compile`` into a project function; the
#: frameworks' classes are known by their rows in ``frameworks``).
EXTERNAL_ROOTS = frozenset({"torch", "functools", "contextlib", "re", "builtins"}) | FRAMEWORK_PACKAGES


@dataclass(frozen=True)
class TorchCall:
    """A torch (or standard library) callable whose meaning the interpreter knows: ``effect`` names the
    one generic behaviour it has (``CALL_EFFECTS``), ``names`` every qualified name it is reached by."""

    effect: Effect
    names: frozenset[str]
    source: str
    #: The text that marks code using it as worth analyzing.
    anchors: tuple[Anchor, ...] = ()
    #: CALL_THROUGH: the keywords the callable takes itself, not passed on to the function it calls.
    own_keywords: frozenset[str] = frozenset()
    #: COLLECTION: an attribute that is not the container's own (``CONTAINER_MEMBERS``) is one of its items.
    items_by_name: bool = False


#: What each effect of a ``TorchCall`` means (one handler each in ``linking/effects/``;
#: ``tests/knowledge/test_knowledge.py`` has a case per row).
CALL_EFFECTS = {
    Effect.COMPILE: "returns the compiled positional argument 0 (backend from ``backend=``), or a compiler without one",
    Effect.COMPILER: "returns a compiler whose backend is positional argument 0 or ``backend=``",
    Effect.PARTIAL: "``partial(<compile>, ...)`` is a compiler; any other partial is its function",
    Effect.DISABLE: "its positional argument 0 runs eagerly, never traced (a decorator without one)",
    Effect.DUAL_LEVEL: "a context manager (and decorator) opening a forward-AD region",
    Effect.MAKE_DUAL: "returns a dual tensor (carries a tangent)",
    Effect.UNPACK_DUAL: "returns the primal: a tensor without a tangent",
    Effect.NULL_CONTEXT: "a context manager that changes nothing",
    Effect.EXIT_STACK: "a context manager whose ``enter_context(cm)`` enters ``cm`` at once, until the stack closes",
    Effect.COLLECTION: "returns a collection of its arguments' elements",
    Effect.SEQUENTIAL: "returns a collection that calls its positional arguments in turn",
    Effect.GETATTR: "``getattr(object, name[, default])``: the attribute, by a constant name when there is one",
    Effect.SETATTR: "``setattr(object, name, value)``: stores the attribute",
    Effect.FUNCTIONAL_CALL: "calls positional argument 0 (a module) on argument 2 (and kwargs 3) with the parameters "
    "of argument 1: dual parameters make the module dual (``linking/analyses/dual_params.py``)",
    Effect.CALL_THROUGH: "returns what positional argument 0 returns, called with the other positional arguments and "
    "the keywords that are not the row's own",
}

TORCH_CALLS: tuple[TorchCall, ...] = (
    TorchCall(
        Effect.COMPILE,
        frozenset({"torch.compile"}),
        "torch/__init__.py: `def compile(model=None, *, fullgraph=False, dynamic=None, backend='inductor', ...)` "
        "returns the compiled model, or a decorator when `model` is None",
    ),
    TorchCall(
        Effect.COMPILER,
        frozenset({"torch._dynamo.optimize"}),
        "torch/_dynamo/eval_frame.py: `def optimize(*args, **kwargs)`: the backend is `args[0]` or `backend=`; "
        "returns a decorator that compiles what it is applied to",
    ),
    TorchCall(
        Effect.PARTIAL,
        frozenset({"functools.partial"}),
        "Python functools.py: `partial(func, /, *args, **keywords)`: `partial(torch.compile, backend=...)` "
        "is a compiler",
    ),
    TorchCall(
        Effect.DISABLE,
        frozenset({"torch.compiler.disable"}),
        "torch/compiler/__init__.py: `def disable(fn=None, recursive=True, *, reason=None)`: `fn` runs eagerly; "
        "without `fn`, a decorator",
    ),
    TorchCall(
        Effect.DISABLE,
        frozenset({"torch._dynamo.disable"}),
        "torch/_dynamo/decorators.py: `def disable(fn=None, recursive=True, *, reason=None, wrapping=True)`",
    ),
    TorchCall(
        Effect.DUAL_LEVEL,
        frozenset({"torch.autograd.forward_ad.dual_level"}),
        "torch/autograd/forward_ad.py: `class dual_level(_DecoratorContextManager)`: enters a forward-AD level; "
        "a context manager and a decorator",
        anchors=(Anchor(("dual_level",), "dual_level"),),
    ),
    TorchCall(
        Effect.MAKE_DUAL,
        frozenset({"torch.autograd.forward_ad.make_dual"}),
        "torch/autograd/forward_ad.py: `def make_dual(tensor, tangent, *, level=None)` returns a dual tensor",
    ),
    TorchCall(
        Effect.UNPACK_DUAL,
        frozenset({"torch.autograd.forward_ad.unpack_dual"}),
        "torch/autograd/forward_ad.py: `def unpack_dual(tensor, *, level=None)` returns "
        "`UnpackedDualTensor(primal, tangent)`; the primal is a view without the tangent",
    ),
    TorchCall(
        Effect.NULL_CONTEXT,
        frozenset({"contextlib.nullcontext"}),
        "Python contextlib.py: `class nullcontext`: `__enter__` returns `enter_result`, nothing else",
    ),
    TorchCall(
        Effect.EXIT_STACK,
        frozenset({"contextlib.ExitStack"}),
        "Python contextlib.py: `class ExitStack`: `enter_context(cm)` calls `cm.__enter__()` at once; "
        "`__exit__` (and `close()`) exits what it entered",
    ),
    TorchCall(
        Effect.COLLECTION,
        frozenset({"torch.nn.ModuleList", "torch.nn.ParameterList"}),
        "torch/nn/modules/container.py: `ModuleList(modules)` and `ParameterList(values)` register their argument's items",
    ),
    TorchCall(
        Effect.COLLECTION,
        frozenset({"torch.nn.ModuleDict"}),
        "torch/nn/modules/container.py: `ModuleDict(modules)` registers the mapping's modules, each an attribute "
        "too (`nn.Module.__getattr__` looks in `_modules`)",
        items_by_name=True,
    ),
    TorchCall(
        Effect.COLLECTION,
        frozenset(
            f"builtins.{name}" for name in ("list", "tuple", "set", "sorted", "reversed", "enumerate", "zip", "iter")
        ),
        "Python builtins: `list`, `tuple`, `set`, `sorted`, `reversed`, `enumerate`, `zip` and `iter` build "
        "from their arguments' elements",
    ),
    TorchCall(
        Effect.SEQUENTIAL,
        frozenset({"torch.nn.Sequential"}),
        "torch/nn/modules/container.py: `class Sequential`: `forward` calls each module on the previous output",
    ),
    TorchCall(Effect.GETATTR, frozenset({"builtins.getattr"}), "Python builtins: `getattr(object, name[, default])`"),
    TorchCall(Effect.SETATTR, frozenset({"builtins.setattr"}), "Python builtins: `setattr(object, name, value)`"),
    TorchCall(
        Effect.FUNCTIONAL_CALL,
        frozenset(
            {
                "torch.func.functional_call",
                "torch._functorch.functional_call.functional_call",
                "torch.nn.utils.stateless.functional_call",
            }
        ),
        "torch/_functorch/functional_call.py: `def functional_call(module, parameter_and_buffer_dicts, args=None, "
        "kwargs=None, *, tie_weights=True, strict=False)` runs `module(*args, **kwargs)` with the given parameters "
        "and buffers; torch/nn/utils/stateless.py `functional_call(module, parameters_and_buffers, args=None, ...)`",
    ),
    TorchCall(
        Effect.CALL_THROUGH,
        frozenset({"torch.utils.checkpoint.checkpoint"}),
        "torch/utils/checkpoint.py: `def checkpoint(function, *args, use_reentrant=None, context_fn=..., "
        "determinism_check='default', debug=False, early_stop=True, **kwargs)`: `preserve_rng_state` is popped "
        "from kwargs; returns `function(*args, **kwargs)` (non-reentrant) or `CheckpointFunction.apply(function, "
        "preserve, *args)`, recomputing it in the backward under the forward's autocast state",
        own_keywords=frozenset(
            {"use_reentrant", "context_fn", "determinism_check", "debug", "early_stop", "preserve_rng_state"}
        ),
    ),
)


def _names(effect: Effect) -> frozenset[str]:
    return frozenset(name for row in TORCH_CALLS if row.effect == effect for name in row.names)


#: The ``torch.compile`` spellings (``compile-wrappers`` in the configuration adds project ones).
COMPILE = _names(Effect.COMPILE)
#: The ``torch.compiler.disable`` spellings (also recognised as bare decorators).
DISABLE = _names(Effect.DISABLE)


@dataclass(frozen=True)
class AutocastConstructor:
    """An autocast context manager (and decorator): where its device, dtype and ``enabled`` come from.

    An argument is ``(keyword, position)``; a position of None means the analysis reads the keyword only.
    """

    names: frozenset[str]
    source: str
    #: The device every region of this spelling runs on; None: read from ``device_argument``.
    device: str | None
    device_argument: tuple[str, int] | None
    dtype_argument: tuple[str, int]
    #: The dtype when ``dtype`` is not given; None: ``AUTOCAST_DEFAULT_DTYPE`` of the device.
    default_dtype: str | None
    enabled_argument: tuple[str, int | None]


AUTOCAST_CONSTRUCTORS: tuple[AutocastConstructor, ...] = (
    AutocastConstructor(
        frozenset({"torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast"}),
        "torch/amp/autocast_mode.py: `class autocast`, `__init__(self, device_type, dtype=None, enabled=True, "
        "cache_enabled=None)`; re-exported as torch.autocast and torch.amp.autocast",
        device=None,
        device_argument=("device_type", 0),
        dtype_argument=("dtype", 1),
        default_dtype=None,
        enabled_argument=("enabled", 2),
    ),
    AutocastConstructor(
        frozenset({"torch.cuda.amp.autocast"}),
        "torch/cuda/amp/autocast_mode.py: `class autocast(torch.amp.autocast_mode.autocast)`, "
        "`__init__(self, enabled=True, dtype=torch.float16, cache_enabled=True)`: device 'cuda'",
        device="cuda",
        device_argument=None,
        dtype_argument=("dtype", 1),
        default_dtype="float16",
        enabled_argument=("enabled", 0),
    ),
    AutocastConstructor(
        frozenset({"torch.cpu.amp.autocast"}),
        "torch/cpu/amp/autocast_mode.py: `class autocast(torch.amp.autocast_mode.autocast)`, "
        "`__init__(self, enabled=True, dtype=torch.bfloat16, cache_enabled=True)`: device 'cpu'",
        device="cpu",
        device_argument=None,
        dtype_argument=("dtype", 1),
        default_dtype="bfloat16",
        enabled_argument=("enabled", 0),
    ),
)
AUTOCAST = {name: row for row in AUTOCAST_CONSTRUCTORS for name in row.names}
#: Callables whose result carries the run-time switches they were chosen under (``autocast =
#: torch.cuda.amp.autocast if use_fp16 else nullcontext``, ``wrap = torch.compile if args.compile
#: else identity``), as the context or compiled value chosen there would.
STAMPED_CALLABLES = frozenset(AUTOCAST) | COMPILE
#: autocast's default dtype per device when ``dtype=`` is not given (torch/amp/autocast_mode.py
#: ``__init__``: ``self.fast_dtype = torch.get_autocast_dtype(device_type)``, whose defaults are these).
AUTOCAST_DEFAULT_DTYPE = {"cuda": "float16", "cpu": "bfloat16", "xpu": "bfloat16", "mps": "float16"}

FUNCTORCH_CONFIG = "torch._functorch.config"
CONFIG_KEY = "backward_pass_autocast"
VALID_CONFIG_STRINGS = ("same_as_forward", "off")


@dataclass(frozen=True)
class ConfigPatch:
    """A config ``patch`` function: ``patch(key=value)``, ``patch("key", value)`` or ``patch({"key": value})``;
    a context manager and a decorator. ``key`` is the setting the analysis follows."""

    names: frozenset[str]
    key: str
    source: str


CONFIG_PATCHES: tuple[ConfigPatch, ...] = (
    ConfigPatch(
        frozenset({f"{FUNCTORCH_CONFIG}.patch"}),
        CONFIG_KEY,
        "torch/utils/_config_module.py: `ConfigModule.patch(arg1=None, arg2=None, **kwargs)` (a dict, a name "
        "and a value, or keywords; returns a ContextDecorator), installed on torch/_functorch/config.py by "
        "`install_config_module(sys.modules[__name__])`",
    ),
)
CONFIG_PATCH_BY_NAME = {name: row for row in CONFIG_PATCHES for name in row.names}
#: Module attributes whose assignment sets the followed config: (module, attribute) -> source.
CONFIG_ATTRIBUTES = {
    (FUNCTORCH_CONFIG, CONFIG_KEY): 'torch/_functorch/config.py: `backward_pass_autocast = "same_as_forward"`, '
    "read when the joint forward/backward graph is traced",
}

#: The keyword that makes a compile refuse graph breaks, by the ``TorchCall`` effect (or in-place
#: method) that compiles: torch/__init__.py ``compile(..., fullgraph=False, ...)`` (``Module.compile``
#: passes its keywords to it); torch/_dynamo/eval_frame.py ``optimize(..., nopython=False, ...)``.
FULLGRAPH_KEYWORDS = {Effect.COMPILE: "fullgraph", Effect.COMPILER: "nopython"}


class CompileHow(enum.Enum):
    """How a callable was compiled: which spelling made it (``Compiled.how``)."""

    CALL = "call"  # ``torch.compile(f)``, ``torch.compile(backend=...)`` applied to ``f``
    DECORATOR = "decorator"  # ``@torch.compile`` without arguments
    OPTIMIZE = "optimize"  # ``torch._dynamo.optimize(backend)`` applied to ``f``
    PARTIAL = "partial"  # ``functools.partial(torch.compile, ...)`` applied to ``f``
    IN_PLACE = "in-place"  # ``module.compile()``: ``IN_PLACE_COMPILE_METHODS``
    IN_PLACE_OVERRIDE = "in-place-override"  # a project class's ``compile`` that calls ``super().compile()``
    WRAPPER = "wrapper"  # a project function named in ``compile-wrappers``, called or as a decorator
    FRAMEWORK = "framework"  # a framework compiles what it prepares (``knowledge.frameworks``)


#: The spellings that compile a module in place: the module object itself is what its calls run, so
#: its attributes, ``forward`` included, are the module's own (``COMPILED_FORWARD``).
IN_PLACE_HOWS = frozenset({CompileHow.IN_PLACE, CompileHow.IN_PLACE_OVERRIDE})

#: Where each spelling takes its backend, for the fix that compiles with another
#: (``fixes/forward_ad.py``): torch/__init__.py ``compile(model=None, *, ..., backend="inductor", ...)``
#: (a bare ``@torch.compile`` has no call to add it to: it becomes one),
#: torch/_dynamo/eval_frame.py ``optimize(*args, **kwargs)`` (``args[0]``), torch/nn/modules/module.py
#: ``Module.compile(*args, **kwargs)`` (passed to ``torch.compile``). A project's wrapper, override
#: or a framework's compile has no backend argument the fix can know.
BACKEND_EDITS: dict[CompileHow, BackendEdit] = {
    CompileHow.CALL: BackendEdit.KEYWORD,
    CompileHow.DECORATOR: BackendEdit.BARE_DECORATOR,
    CompileHow.OPTIMIZE: BackendEdit.POSITIONAL,
    CompileHow.PARTIAL: BackendEdit.KEYWORD,
    CompileHow.IN_PLACE: BackendEdit.KEYWORD,
}

#: ``nn.Module`` methods that compile the module in place, with how findings name them.
IN_PLACE_COMPILE_METHODS = {
    "compile": "torch/nn/modules/module.py: `Module.compile(*args, **kwargs)`: "
    "`self._compiled_call_impl = torch.compile(self._call_impl, *args, **kwargs)`, so calls of the module run compiled",
}

#: Tensor methods whose result carries neither autograd history nor tangents.
DETACHING_METHODS = frozenset({"detach", "detach_", "item", "tolist", "numpy"})


@dataclass(frozen=True)
class BackwardFunction:
    """A function running a backward of ``receiver`` (positional 0 or that keyword) (CAL002, CAL004)."""

    name: str
    receiver: str
    #: Positional index of ``create_graph``.
    create_graph_position: int
    source: str
    #: It returns the gradients instead of accumulating them into ``.grad`` (CAL005 words its
    #: consequence by it).
    returns_gradients: bool = False
    #: The text that marks code calling it (an import of it is an anchor too: ``knowledge.anchors``).
    anchors: tuple[Anchor, ...] = ()


BACKWARD_FUNCTIONS = {
    row.name: row
    for row in (
        BackwardFunction(
            "torch.autograd.backward",
            "tensors",
            3,
            "torch/autograd/__init__.py: `def backward(tensors, grad_tensors=None, retain_graph=None, "
            "create_graph=False, ...)`",
            # ``torch.autograd.backward(`` is the tensor method's anchor; a bare ``backward(`` is the
            # method every autograd.Function defines.
        ),
        BackwardFunction(
            "torch.autograd.grad",
            "outputs",
            4,
            "torch/autograd/__init__.py: `def grad(outputs, inputs, grad_outputs=None, retain_graph=None, "
            "create_graph=False, ...)`: returns the gradients with respect to `inputs`, .grad untouched",
            returns_gradients=True,
            anchors=(
                Anchor(("autograd", ".", "grad"), "grad"),
                Anchor(("grad", "("), "grad", Preceded.WORD_BOUNDARY),
            ),
        ),
    )
}


@dataclass(frozen=True)
class Member:
    """An attribute or method of a torch object whose name the analysis gives a meaning."""

    name: str
    source: str


@dataclass(frozen=True)
class BackwardMethod(Member):
    """A tensor method running a backward of the tensor (CAL002, CAL004, CAL005)."""

    #: Positional index of ``create_graph`` (the receiver not counted).
    create_graph_position: int
    anchors: tuple[Anchor, ...] = ()


TENSOR_BACKWARD = BackwardMethod(
    "backward",
    "torch/_tensor.py: `def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None)` "
    "runs `torch.autograd.backward(self, ...)`",
    create_graph_position=2,
    # Any method call of that name: ``scaler.scale(loss).backward()``, ``accelerator.backward(loss)``.
    anchors=(Anchor(("backward", "("), "backward", Preceded.ATTRIBUTE),),
)
#: The keyword of every backward above (and of ``torch.autograd.functional``'s functions) that keeps
#: the graph of the gradients so that they can be differentiated again (CAL004).
CREATE_GRAPH = Member(
    "create_graph",
    "torch/autograd/__init__.py: `backward(..., create_graph=False, ...)`, `grad(..., create_graph=False, ...)`",
)
#: ``tensor.grad = None``: frees the gradient (``optimizer.zero_grad(set_to_none=True)`` does the same);
#: an optimizer skips a parameter whose ``.grad`` is None: the reset CAL005 suggests.
GRAD = Member("grad", "torch/_tensor.py: `Tensor.grad` (torch/_C/_autograd: settable, None until a backward)")
#: ``requires_grad``: the tensor attribute, the keyword of tensor factories and ``Parameter``, and the
#: argument of ``Module.requires_grad_``.
REQUIRES_GRAD = Member(
    "requires_grad",
    "torch/nn/parameter.py: `Parameter(data=None, requires_grad=True)`; torch/nn/modules/module.py: "
    "`Module.requires_grad_(self, requires_grad=True)`; torch/_tensor.py: `Tensor.requires_grad` (settable on leaves)",
)
#: What calling a module runs: ``module.forward = f`` replaces what its calls run.
FORWARD = Member(
    "forward",
    "torch/nn/modules/module.py: `_call_impl`: `forward_call = (self._slow_forward if ... else self.forward)`",
)
#: Methods a call of the instance itself runs, so that their callers spell no call of their name:
#: ``model(x)`` runs ``forward`` (``FORWARD``), ``obj(x)`` runs ``__call__`` (Python's call protocol).
CALLED_THROUGH_INSTANCE = frozenset({FORWARD.name, "__call__"})
#: ``torch.compile(module).forward(x)`` runs the compiled call, as ``torch.compile(module)(x)`` does;
#: ``forward`` of a module compiled in place is still its own, eager (facts/compile_scope.py).
COMPILED_FORWARD = Member(
    "forward",
    "torch/_dynamo/eval_frame.py: `OptimizedModule._initialize`: `self.forward = "
    "self.dynamo_ctx(self._orig_mod.__call__)`; torch/nn/modules/module.py: `Module.compile` sets "
    "`self._compiled_call_impl` and leaves `forward` alone",
)
#: The original of a compiled module and of a compiled function (what runs uncompiled).
ORIGINAL_MODULE = Member(
    "_orig_mod",
    "torch/_dynamo/eval_frame.py: `OptimizedModule.__init__(self, mod, dynamo_ctx)`: `self._orig_mod = mod`; other "
    "attributes are the original's (`__getattr__` returns `getattr(self._orig_mod, name)`)",
)
ORIGINAL_FUNCTION = Member(
    "__wrapped__",
    "torch/_dynamo/eval_frame.py: `_TorchDynamoContext.__call__`: the compiled function is "
    "`functools.wraps(fn)(compile_wrapper)` (Python functools.py: `wrapper.__wrapped__ = wrapped`)",
)
#: The module a wrapper runs (DDP's and DataParallel's attribute, FSDP's property).
WRAPPED_MODULE = Member(
    "module",
    "torch/nn/parallel/distributed.py and data_parallel.py: `self.module = module`; "
    "torch/distributed/fsdp/fully_sharded_data_parallel.py: `@property def module`",
)
#: ``p.copy_(fwAD.make_dual(p, t))``: the tensor takes its argument's values in place, and in a
#: forward-AD region its tangent too (a module's parameter made dual).
COPY_IN_PLACE = Member(
    "copy_",
    "torch/_tensor_docs.py: `copy_(src, non_blocking=False)`: copies the elements from `src` into the tensor and "
    "returns it; in a dual_level the tensor gets `src`'s tangent (torch 2.13, a parameter under no_grad too)",
)
#: ``stack.enter_context(torch.autocast(...))`` on a ``contextlib.ExitStack``: the context is entered
#: at once and stays entered until the stack exits (OLMo-core's ``_model_forward_context``).
EXIT_STACK_ENTER = Member(
    "enter_context",
    "Python contextlib.py: `ExitStack.enter_context(cm)`: `result = cm.__enter__()`, `cm.__exit__` pushed "
    "to run when the stack closes; returns `result`",
)
#: ``fmap.detach_()`` as a statement: the tensor itself leaves the graph it came from.
DETACH_IN_PLACE = Member(
    "detach_",
    "torch/_tensor.py: `detach_`: detaches the Tensor from the graph that created it, making it a leaf; the "
    "result never has forward mode AD gradients (in place, unlike `detach`)",
)
#: The keyword naming a compile's backend, by the ``TorchCall`` effect that compiles: ``(keyword,
#: position)``, position None when only the keyword gives it (``Module.compile`` and
#: ``partial(torch.compile, ...)`` pass theirs to ``torch.compile``).
BACKEND_ARGUMENTS: dict[Effect, tuple[str, int | None]] = {
    # torch/__init__.py: `def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", ...)`
    Effect.COMPILE: ("backend", None),
    # torch/_dynamo/eval_frame.py: `def optimize(*args, **kwargs)`: the backend is `args[0]` or `backend=`
    Effect.COMPILER: ("backend", 0),
}
#: A backend written in the checked code that returns the graph module it is given, or its
#: ``forward``, compiles as this one does: torch/_dynamo/backends/debugging.py `def eager(gm,
#: fake_tensor_inputs, **kwargs)`: `return gm.forward` (no AOTAutograd: autograd runs as in eager).
#: Tests' counting and printing backends are written so (NVIDIA/physicsnemo's `counting_backend`).
PASS_THROUGH_BACKEND = "eager"
#: What such a backend may return: the graph module itself, or these attributes of it.
PASS_THROUGH_ATTRIBUTES = frozenset({"forward", "__call__"})
#: Every class torch.nn defines is a module (torch/nn/modules/module.py ``class Module``, subclassed by
#: all of torch/nn/modules/), except the tensors ``PARAMETER_FACTORIES`` makes.
TORCH_NN = "torch.nn."


#: torch's own callables never run a backward of their arguments nor keep them where a later backward
#: may find them (``wandb.log(aux)`` or a user's callable might): outputs passed to them do not escape.
TORCH_PACKAGE = Member(
    "torch", "torch/__init__.py: the package; its functions and modules compute, they run no user code"
)


def is_torch(qualified: str) -> bool:
    """``torch.cat``, ``torch.nn.Linear``: a name the torch package defines."""
    return qualified.split(".", 1)[0] == TORCH_PACKAGE.name


def is_torch_nn(qualified: str) -> bool:
    """``torch.nn.Linear``: a name torch.nn defines (a module class, or ``Parameter``)."""
    return qualified.startswith(TORCH_NN)


def short_name(qualified: str) -> str:
    """``torch.nn.LayerNorm`` as messages write it: ``nn.LayerNorm``."""
    return qualified.replace(TORCH_NN, "nn.")


@dataclass(frozen=True)
class FunctionalSpec:
    """A ``torch.autograd.functional`` function: whether it always differentiates twice (the
    double-backward trick) or only with ``create_graph=True``, and what it does over a compiled
    callable (torch 2.13 CPU, ``facts/double_backward_and_unused_outputs.py``)."""

    always_second_order: bool
    #: Positional index of ``create_graph`` in torch/autograd/functional.py's signature.
    create_graph_position: int
    #: What it does over a compiled callable, by the torch series it holds for
    #: (``knowledge.behaviour.CLAIMS`` name the recorded cases).
    outcomes: tuple[tuple[Versions, str], ...]
    source: str = "torch/autograd/functional.py (the function of that name)"

    def outcome_on(self, series: Series) -> str:
        return next(text for versions, text in self.outcomes if versions.holds_for(series))


_DOUBLE_BACKWARD = DOUBLE_BACKWARD
_GRAPH_THROUGH_COMPILED = (
    "its result's graph goes through the compiled backward, so a backward through it raises RuntimeError "
    "(torch.compile with aot_autograd does not currently support double backward)"
)
#: ``torch.autograd.functional`` functions that may differentiate a function twice (CAL004);
#: ``jacobian``'s forward-mode strategy is a CAL001 question, first-order ``vjp``/``jacobian`` are fine.
_EVERY = ((EVERY_VERSION, _DOUBLE_BACKWARD),)
AUTOGRAD_FUNCTIONAL = {
    "torch.autograd.functional.jvp": FunctionalSpec(True, 3, _EVERY),
    "torch.autograd.functional.hvp": FunctionalSpec(True, 3, _EVERY),
    "torch.autograd.functional.vhp": FunctionalSpec(True, 3, _EVERY),
    "torch.autograd.functional.hessian": FunctionalSpec(
        True,
        2,
        (
            (Versions(before=Series(2, 14)), "returns an all-zero Hessian with no error"),
            (Versions(since=Series(2, 14)), "raises RuntimeError"),
        ),
    ),
    "torch.autograd.functional.vjp": FunctionalSpec(False, 3, ((EVERY_VERSION, _GRAPH_THROUGH_COMPILED),)),
    "torch.autograd.functional.jacobian": FunctionalSpec(False, 2, ((EVERY_VERSION, _GRAPH_THROUGH_COMPILED),)),
}
#: ``torch.nn`` classes that hold parameters (requires_grad by default): a leaf CAL005 can name.
PARAMETERIZED_MODULES = frozenset(
    f"torch.nn.{name}"
    for name in (
        "Parameter Linear Bilinear LazyLinear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d "
        "Embedding EmbeddingBag LayerNorm GroupNorm RMSNorm BatchNorm1d BatchNorm2d BatchNorm3d PReLU RNN LSTM GRU "
        "RNNCell LSTMCell GRUCell MultiheadAttention Transformer TransformerEncoder TransformerDecoder "
        "TransformerEncoderLayer TransformerDecoderLayer"
    ).split()
)

#: Backends that never drop forward-mode tangents (CAL001).
TANGENT_SAFE_BACKENDS = frozenset({"eager", "aot_eager", "cudagraphs"})
#: Backends whose backward is plain eager autograd, so ``backward_pass_autocast`` plays no part (CAL002).
EAGER_BACKWARD_BACKENDS = frozenset({"eager"})


@dataclass(frozen=True)
class SafeBackends:
    """The backends a check treats as safe: the tables' plus the project's ``extend-safe-backends``."""

    #: Never drop forward-mode tangents (CAL001, CAL006).
    tangent: frozenset[str]
    #: Run the backward as plain eager autograd (CAL002, CAL004, CAL005).
    eager_backward: frozenset[str]

    @classmethod
    def extended_by(cls, extra: frozenset[str]) -> SafeBackends:
        return cls(TANGENT_SAFE_BACKENDS | extra, EAGER_BACKWARD_BACKENDS | extra)


#: ``torch.nn`` modules without parameters: compiling them drops tangents silently instead of raising.
PARAMETERLESS_MODULES = frozenset(
    f"torch.nn.{name}"
    for name in (
        "ReLU GELU SiLU Tanh Sigmoid Softmax LogSoftmax Softplus Mish Hardtanh LeakyReLU ELU SELU CELU "
        "Identity Flatten Unflatten Dropout Dropout1d Dropout2d Dropout3d AlphaDropout Softsign Tanhshrink "
        "Hardswish Hardsigmoid ReLU6 Threshold Softmin GLU LogSigmoid MaxPool1d MaxPool2d MaxPool3d "
        "AvgPool1d AvgPool2d AvgPool3d AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveAvgPool3d Upsample"
    ).split()
)


def dtype_name(qualified: str | None) -> str | None:
    """``torch.bfloat16`` -> ``bfloat16``; aliases folded (``torch.half`` -> ``float16``)."""
    if not qualified:
        return None
    name = qualified.rsplit(".", 1)[-1]
    return {"half": "float16", "float": "float32", "double": "float64"}.get(name, name)


def is_external_root(qualified: str) -> bool:
    return qualified.split(".", 1)[0] in EXTERNAL_ROOTS


# ---------------------------------------------------------------------------------------------
# Reach (issue 11): how real training code carries a compiled module around. Each row names the
# torch 2.13 source it was read from (paths inside the installed ``torch`` package);
# ``tests/linking/test_reach.py`` has a case per row.


@dataclass(frozen=True)
class ModuleWrapper:
    """A class whose instances wrap a module (argument 0, or ``module=``) and whose calls run it."""

    names: frozenset[str]
    label: str
    source: str


MODULE_WRAPPERS: tuple[ModuleWrapper, ...] = (
    ModuleWrapper(
        frozenset(
            {"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel"}
        ),
        "DistributedDataParallel",
        "torch/nn/parallel/distributed.py: `self.module = module`; `_run_ddp_forward` returns `self.module(*inputs, **kwargs)`",
    ),
    ModuleWrapper(
        frozenset(
            {"torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel"}
        ),
        "DataParallel",
        "torch/nn/parallel/data_parallel.py: `self.module = module`; `forward` returns `self.module(*inputs, **kwargs)` "
        "(one device) or runs replicas of it",
    ),
    ModuleWrapper(
        frozenset(
            {
                "torch.distributed.fsdp.FullyShardedDataParallel",
                "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel",
            }
        ),
        "FullyShardedDataParallel",
        "torch/distributed/fsdp/fully_sharded_data_parallel.py: `forward` runs `self._fsdp_wrapped_module(*args, **kwargs)`; "
        "the `module` property returns the wrapped module",
    ),
    ModuleWrapper(
        frozenset(
            {
                "torch.distributed.algorithms._checkpoint.checkpoint_wrapper.checkpoint_wrapper",
                "torch.distributed.algorithms._checkpoint.checkpoint_wrapper.CheckpointWrapper",
            }
        ),
        "CheckpointWrapper",
        "torch/distributed/algorithms/_checkpoint/checkpoint_wrapper.py: `checkpoint_wrapper(module, ...)` returns "
        "`CheckpointWrapper(module, ...)`, which keeps `self._checkpoint_wrapped_module = mod` and whose `forward` "
        "runs it through `torch.utils.checkpoint.checkpoint`",
    ),
)
WRAPPER_BY_NAME = {name: wrapper for wrapper in MODULE_WRAPPERS for name in wrapper.names}

#: Functions that return their first argument, the same module (FSDP2 shards it in place).
SAME_MODULE_FUNCTIONS = {
    "torch.distributed.fsdp.fully_shard": "torch/distributed/fsdp/_fully_shard/_fully_shard.py: `fully_shard(module, ...)` "
    "changes the module's class in place and returns `module`",
    "torch.distributed._composable.fsdp.fully_shard": "torch/distributed/_composable/fsdp/__init__.py re-exports "
    "`fully_shard` from torch/distributed/fsdp/_fully_shard",
    "copy.deepcopy": "Python's copy.deepcopy: a copy of the same kind (a compiled module's copy is compiled)",
    "copy.copy": "Python's copy.copy: a shallow copy of the same kind",
}

#: ``nn.Module`` methods that return ``self`` (torch/nn/modules/module.py: ``return self`` or
#: ``return self._apply(...)``, which returns ``self``); an ``OptimizedModule`` inherits them, so
#: ``torch.compile(net).cuda()`` is still the compiled module. ``requires_grad_`` also freezes or
#: unfreezes every parameter (its ``requires_grad`` argument, default True).
MODULE_RETURNING_METHODS = {
    "cuda": "Module.cuda: return self._apply(lambda t: t.cuda(device))",
    "cpu": "Module.cpu: return self._apply(lambda t: t.cpu())",
    "xpu": "Module.xpu: return self._apply(...)",
    "ipu": "Module.ipu: return self._apply(...)",
    "mtia": "Module.mtia: return self._apply(...)",
    "to": "Module.to: return self._apply(convert)",
    "to_empty": "Module.to_empty: return self._apply(...)",
    "type": "Module.type: return self._apply(lambda t: t.type(dst_type))",
    "float": "Module.float: return self._apply(...)",
    "double": "Module.double: return self._apply(...)",
    "half": "Module.half: return self._apply(...)",
    "bfloat16": "Module.bfloat16: return self._apply(...)",
    "train": "Module.train: return self",
    "eval": "Module.eval: return self.train(False)",
    "requires_grad_": "Module.requires_grad_: sets p.requires_grad_(requires_grad) on every parameter, return self",
    "share_memory": "Module.share_memory: return self._apply(...)",
    "apply": "Module.apply: calls fn on every submodule, return self",
}
#: ``nn.Module`` methods yielding its submodules (torch/nn/modules/module.py ``children``,
#: ``named_children``, ``modules``, ``named_modules``).
MODULE_CHILDREN_METHODS = frozenset({"children", "named_children", "modules", "named_modules"})
#: ``nn.Module`` methods yielding its parameters (``parameters``, ``named_parameters``): they require grad.
MODULE_PARAMETER_METHODS = frozenset({"parameters", "named_parameters"})
#: ``nn.Module.register_module(name, module)`` / ``add_module``: like ``setattr`` (torch/nn/modules/module.py
#: ``add_module`` stores ``self._modules[name] = module``; ``register_module`` calls it); on an
#: ``nn.ModuleDict`` the module becomes one of its items.
MODULE_REGISTRATION_METHODS = frozenset({"register_module", "add_module"})


#: Decorators making a generator function a context manager whose ``with`` body runs at its ``yield``
#: (Python docs library/contextlib.html ``contextmanager``, ``asynccontextmanager``).
CONTEXT_MANAGER_DECORATORS = frozenset({"contextlib.contextmanager", "contextlib.asynccontextmanager"})

#: Grad-mode context managers and decorators: whether gradients are recorded inside
#: (torch/autograd/grad_mode.py: ``no_grad``, ``enable_grad``, ``inference_mode(mode=True)``,
#: ``set_grad_enabled(mode)``). Outputs computed with grad disabled carry no compiled backward.
GRAD_MODES = {
    "torch.no_grad": False,
    "torch.autograd.no_grad": False,
    "torch.autograd.grad_mode.no_grad": False,
    "torch.enable_grad": True,
    "torch.autograd.enable_grad": True,
    "torch.autograd.grad_mode.enable_grad": True,
    "torch.inference_mode": False,
    "torch.autograd.inference_mode": False,
    "torch.autograd.grad_mode.inference_mode": False,
    "torch.set_grad_enabled": None,
    "torch.autograd.set_grad_enabled": None,
    "torch.autograd.grad_mode.set_grad_enabled": None,
}
#: The argument deciding the mode (``inference_mode(mode)``: False means grad stays as it was).
GRAD_MODE_ARGUMENT = {
    "torch.set_grad_enabled": "mode",
    "torch.autograd.set_grad_enabled": "mode",
    "torch.autograd.grad_mode.set_grad_enabled": "mode",
    "torch.inference_mode": "mode",
    "torch.autograd.inference_mode": "mode",
    "torch.autograd.grad_mode.inference_mode": "mode",
}

#: Creating a parameter: it requires grad (torch/nn/parameter.py ``Parameter(data, requires_grad=True)``).
PARAMETER_FACTORIES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})

#: Functions that run their function argument under forward-mode AD (``dual_level`` + ``make_dual``
#: inside): name -> (keyword, positional index, value) of the argument that selects forward mode,
#: and the argument that must not be False. torch/autograd/functional.py ``jacobian``:
#: ``strategy="forward-mode"`` calls ``_jacfwd``, which needs ``vectorize=True`` (else raises).
FORWARD_MODE_FUNCTIONS = {
    "torch.autograd.functional.jacobian": (("strategy", 5, "forward-mode"), ("vectorize", 4)),
}

#: Decorators making a class whose generated ``__init__`` stores keyword arguments as attributes
#: (Python's dataclasses module; ``typing.NamedTuple`` bases do the same).
DATACLASS_DECORATORS = frozenset({"dataclasses.dataclass"})
KEYWORD_FIELD_BASES = frozenset({"typing.NamedTuple"})

#: Ops autocast runs in float32 whatever the region's dtype (PyTorch docs/source/amp.rst, "CUDA Ops
#: that can autocast to float32" and "CPU Ops that can autocast to float32"; the lists come from
#: aten/src/ATen/autocast_mode.h): a compiled region holding one computes its backward differently
#: under another autocast state. Elementwise math on that list (exp, log, pow, sum, ...) is left out:
#: nearly every region has some, and it rarely decides the numeric effect.
AUTOCAST_FP32_OPS = frozenset(
    {
        "softmax",
        "log_softmax",
        "softmin",
        "layer_norm",
        "group_norm",
        "logsumexp",
        "normalize",
        "cosine_similarity",
        "cdist",
        "pdist",
        "cross_entropy",
        "nll_loss",
        "mse_loss",
        "l1_loss",
        "smooth_l1_loss",
        "huber_loss",
        "kl_div",
        "binary_cross_entropy_with_logits",
        "binary_cross_entropy",
        "poisson_nll_loss",
        "cosine_embedding_loss",
        "hinge_embedding_loss",
        "margin_ranking_loss",
        "multilabel_margin_loss",
        "multi_margin_loss",
        "soft_margin_loss",
        "triplet_margin_loss",
        "multilabel_soft_margin_loss",
    }
)
#: ``torch.nn`` modules whose forward runs one of ``AUTOCAST_FP32_OPS`` (torch/nn/modules/normalization.py,
#: activation.py, loss.py, transformer.py: LayerNorm -> F.layer_norm, Softmax -> F.softmax,
#: MultiheadAttention -> F.multi_head_attention_forward (softmax), Transformer layers -> both).
AUTOCAST_FP32_MODULES = frozenset(
    f"torch.nn.{name}"
    for name in (
        "LayerNorm GroupNorm Softmax LogSoftmax Softmin CrossEntropyLoss NLLLoss MSELoss L1Loss SmoothL1Loss "
        "HuberLoss KLDivLoss BCELoss BCEWithLogitsLoss CosineSimilarity MultiheadAttention Transformer "
        "TransformerEncoder TransformerDecoder TransformerEncoderLayer TransformerDecoderLayer"
    ).split()
)
#: Explicit casts to float32 (torch/_tensor.py, torch/_C ``Tensor.float``/``Tensor.to(dtype)``).
FLOAT32_CAST_METHODS = frozenset({"float"})
FLOAT32_DTYPES = frozenset({"torch.float32", "torch.float"})
