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
    {"torch.nn.ModuleList", "torch.nn.ModuleDict", "torch.nn.ParameterList", "builtins.list", "builtins.tuple",
     "builtins.set", "builtins.sorted", "builtins.reversed", "builtins.enumerate", "builtins.zip", "builtins.iter"}
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
