"""The PyTorch spellings the analysis recognizes, by fully qualified name."""

from __future__ import annotations

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
