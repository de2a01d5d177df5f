"""The PyTorch spellings the analysis recognizes, by fully qualified name."""

from __future__ import annotations

from dataclasses import dataclass

#: Packages that are always treated as external, even when their sources are part of the checked
#: tree (linting torch's own sources must not turn ``torch.compile`` into a project function).
EXTERNAL_ROOTS = frozenset({"torch", "functools", "contextlib", "re", "builtins"})

COMPILE = frozenset({"torch.compile"})
DYNAMO_OPTIMIZE = frozenset({"torch._dynamo.optimize"})
PARTIAL = frozenset({"functools.partial"})
DISABLE = frozenset({"torch.compiler.disable", "torch._dynamo.disable"})

DUAL_LEVEL = frozenset({"torch.autograd.forward_ad.dual_level"})
MAKE_DUAL = frozenset({"torch.autograd.forward_ad.make_dual"})
UNPACK_DUAL = frozenset({"torch.autograd.forward_ad.unpack_dual"})

#: autocast spelling -> (fixed device, default dtype); None device means "first argument".
AUTOCAST = {
    "torch.autocast": (None, None),
    "torch.amp.autocast": (None, None),
    "torch.amp.autocast_mode.autocast": (None, None),
    "torch.cuda.amp.autocast": ("cuda", "float16"),
    "torch.cpu.amp.autocast": ("cpu", "bfloat16"),
}
#: autocast's default dtype per device when ``dtype=`` is not given.
AUTOCAST_DEFAULT_DTYPE = {"cuda": "float16", "cpu": "bfloat16", "xpu": "bfloat16", "mps": "float16"}

FUNCTORCH_CONFIG = "torch._functorch.config"
CONFIG_KEY = "backward_pass_autocast"
CONFIG_PATCH = frozenset({f"{FUNCTORCH_CONFIG}.patch"})
VALID_CONFIG_STRINGS = ("same_as_forward", "off")

NULL_CONTEXT = frozenset({"contextlib.nullcontext"})

#: Calls that build a collection from their arguments' elements (``nn.ModuleList([...])``, ``list(x)``).
COLLECTION_OF_ELEMENTS = frozenset(
    {
        "torch.nn.ModuleList",
        "torch.nn.ModuleDict",
        "torch.nn.ParameterList",
        "builtins.list",
        "builtins.tuple",
        "builtins.set",
        "builtins.sorted",
        "builtins.reversed",
        "builtins.enumerate",
        "builtins.zip",
        "builtins.iter",
    }
)
#: ``nn.Sequential(a, b, ...)``: a collection that calls its items in turn.
SEQUENTIAL = frozenset({"torch.nn.Sequential"})
#: Tensor methods whose result carries neither autograd history nor tangents.
DETACHING_METHODS = frozenset({"detach", "detach_", "item", "tolist", "numpy"})
BACKWARD_FUNCTIONS = {"torch.autograd.backward": "tensors", "torch.autograd.grad": "outputs"}
#: Positional index of ``create_graph`` (torch/autograd/__init__.py ``backward``/``grad``,
#: torch/_tensor.py ``Tensor.backward(gradient, retain_graph, create_graph)``) (CAL004).
CREATE_GRAPH_POSITION = {"torch.autograd.backward": 3, "torch.autograd.grad": 4, "Tensor.backward": 2}


@dataclass(frozen=True)
class FunctionalSpec:
    """A ``torch.autograd.functional`` function: whether it always differentiates twice (the
    double-backward trick) or only with ``create_graph=True``, and what it does over a compiled
    callable (torch 2.13 CPU, ``facts/double_backward_and_unused_outputs.py``)."""

    always_second_order: bool
    #: Positional index of ``create_graph`` in torch/autograd/functional.py's signature.
    create_graph_position: int
    outcome: str


_DOUBLE_BACKWARD = "raises RuntimeError: torch.compile with aot_autograd does not currently support double backward"
_GRAPH_THROUGH_COMPILED = (
    "its result's graph goes through the compiled backward, so a backward through it raises RuntimeError "
    "(torch.compile with aot_autograd does not currently support double backward)"
)
#: ``torch.autograd.functional`` functions that may differentiate a function twice (CAL004);
#: ``jacobian``'s forward-mode strategy is a CAL001 question, first-order ``vjp``/``jacobian`` are fine.
AUTOGRAD_FUNCTIONAL = {
    "torch.autograd.functional.jvp": FunctionalSpec(True, 3, _DOUBLE_BACKWARD),
    "torch.autograd.functional.hvp": FunctionalSpec(True, 3, _DOUBLE_BACKWARD),
    "torch.autograd.functional.vhp": FunctionalSpec(True, 3, _DOUBLE_BACKWARD),
    "torch.autograd.functional.hessian": FunctionalSpec(True, 2, "returns an all-zero Hessian with no error"),
    "torch.autograd.functional.vjp": FunctionalSpec(False, 3, _GRAPH_THROUGH_COMPILED),
    "torch.autograd.functional.jacobian": FunctionalSpec(False, 2, _GRAPH_THROUGH_COMPILED),
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
# ``tests/test_reach.py`` has a case per row.


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
#: Container methods returning one element (``dict.get``/``pop``/``setdefault``, ``list.pop``).
CONTAINER_ELEMENT_METHODS = frozenset({"get", "pop", "setdefault", "popitem", "__getitem__"})
#: Calls that build an empty container a registry starts from.
EMPTY_CONTAINER_FACTORIES = frozenset({"builtins.dict", "collections.OrderedDict", "collections.defaultdict"})

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
