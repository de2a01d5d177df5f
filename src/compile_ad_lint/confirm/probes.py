"""Synthetic probes: minimal programs built from a finding's evidence, for findings with no runnable entry point.

They answer "does the installed torch have this hazard at all" with the finding's backend, config and
autocast contexts as written (device types included: an autocast for cuda cannot show on cpu tensors;
an unknown one stands for the device being checked). Each probe defines ``probe()`` and marks its sites with
``# SITE`` (the flagged call) and ``# CALL`` (the compiled call, for CAL002's matching-config run).
"""

from __future__ import annotations

import re

from ..core.findings import Evidence
from ..facts import AutocastState
from ..rules.backward_autocast_mismatch import Cal002Evidence
from ..rules.compiled_callable_in_dual_level import Cal001Evidence
from ..rules.double_backward_through_compiled import Cal004Evidence, Cal004FunctionalEvidence, Cal004InsideEvidence
from ..rules.unused_compiled_output_zero_grad import Cal005Evidence
from ..summary.model import LiteralValue

_SAFE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


def _backend(evidence: Evidence) -> str:
    backend = getattr(evidence, "backend", "inductor")
    return backend if isinstance(backend, str) and _SAFE_NAME.match(backend) else "inductor"


def _program(imports: str, evidence: Evidence, body: str, definitions: str = "") -> str:
    """A probe module: ``imports``, the finding's backend as ``BACKEND``, ``definitions``, then
    ``probe()``, which seeds torch and runs ``body`` (indented already)."""
    return f"""{imports}
BACKEND = {_backend(evidence)!r}


{definitions}def probe():
    torch.manual_seed(0)
{body}"""


def cal001_probe(evidence: Cal001Evidence) -> str:
    if evidence.expected == "raises":
        make = "torch.compile(torch.nn.Linear(4, 4), backend=BACKEND)"
    else:
        make = "torch.compile(lambda a: torch.sin(a) * a, backend=BACKEND)"
    imports = """import torch
import torch.autograd.forward_ad as fwAD
"""
    return _program(
        imports,
        evidence,
        f"""    fn = {make}
    x, t = torch.randn(4), torch.randn(4)
    with fwAD.dual_level():
        out = fn(fwAD.make_dual(x, t))  # SITE
        fwAD.unpack_dual(out)
""",
    )


def config_json(value: LiteralValue, device: str) -> object:
    """A ``backward_pass_autocast`` value (a ``ConfigState.value``: a string, ``(device, dtype)``
    pairs, None when not known statically; or a CAL002 matching config, its device None when not
    known) as the child forces it: a string, or a list of kwargs dicts with the autocast devices as written (an
    unknown one: ``device``) and each dtype as written, else autocast's default for its device.

    A value not known statically stands for the default, ``"same_as_forward"``.
    """
    if isinstance(value, str):
        return value
    entries = []
    for item in value if isinstance(value, tuple) else ():
        if isinstance(item, tuple) and len(item) == 2:
            target = _device(item[0], device)
            entries.append({"device_type": target, "dtype": _dtype(item[1], target)})
    return entries or "same_as_forward"


def _device(value: object, device: str) -> str:
    return value if isinstance(value, str) and value in ("cpu", "cuda") else device


def _dtype(value: object, target: str) -> str:
    """The dtype as written, else autocast's default for ``target`` (float16 on cuda, bfloat16 on cpu)."""
    text = str(value or "").replace("torch.", "")
    if text in ("bfloat16", "float16", "half", "float32"):
        return "torch." + ("float16" if text == "half" else text)
    return "torch.float16" if target == "cuda" else "torch.bfloat16"


def _autocast_state(state: AutocastState, device: str) -> tuple[bool, str, str]:
    """(enabled, device_type, dtype) of an autocast state; an unknown device or dtype stands for ``device``'s."""
    if not state.active:
        return False, device, _dtype(None, device)
    target = _device(state.device, device)
    return True, target, _dtype(state.dtype, target)


def autocast_devices(evidence: Cal002Evidence) -> set[str]:
    """The device types the finding's autocast contexts and config lists name (unknown ones excluded)."""
    found = set()
    for state in (evidence.forward_autocast, evidence.backward_autocast):
        enabled, target, _ = _autocast_state(state, "?")
        if enabled and target != "?":
            found.add(target)
    for value in (evidence.config.value, evidence.matching_config):
        entries = config_json(value, "?")
        if isinstance(entries, list):
            found.update(entry["device_type"] for entry in entries if entry["device_type"] in ("cpu", "cuda"))
    return found


def _function_name(evidence: Evidence) -> str:
    """The ``torch.autograd.functional`` function a CAL004 finding names (empty for a backward)."""
    return evidence.function.rsplit(".", 1)[-1] if isinstance(evidence, Cal004FunctionalEvidence) else ""


def describe(evidence: Evidence, device: str) -> str:
    """What a probe for ``evidence`` ran, for the verdict's detail."""
    if isinstance(evidence, Cal001Evidence):
        return f"backend={_backend(evidence)!r}, {'compiled nn.Linear' if evidence.expected == 'raises' else 'compiled function'}"
    if isinstance(evidence, Cal004InsideEvidence):
        return f"grad(create_graph=True), then a second backward, inside a function compiled with backend={_backend(evidence)!r}"
    if isinstance(evidence, Cal004Evidence):
        name = _function_name(evidence)
        how = (
            f"torch.autograd.functional.{name}"
            if name in _FUNCTIONAL_CALLS
            else "grad(create_graph=True), then a second backward"
        )
        return f"{how} over a function compiled with backend={_backend(evidence)!r}"
    if isinstance(evidence, Cal005Evidence):
        return f"two outputs of a function compiled with backend={_backend(evidence)!r}, only the first in the loss"
    assert isinstance(evidence, Cal002Evidence)
    forward = _autocast_state(evidence.forward_autocast, device)
    backward = _autocast_state(evidence.backward_autocast, device)

    def text(state: tuple[bool, str, str]) -> str:
        return f"autocast({state[1]!r}, {state[2]})" if state[0] else "no autocast"

    return (
        f"fp32-island region compiled with backend={_backend(evidence)!r} and backward_pass_autocast={evidence.config_text()}, "
        f"forward under {text(forward)}, backward under {text(backward)}"
    )


def _literal(value: object) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(f'{{"device_type": {e["device_type"]!r}, "dtype": {e["dtype"]}}}' for e in value) + "]"
    return repr(value)


def cal002_probe(evidence: Cal002Evidence, device: str) -> str:
    written = config_json(evidence.config.value, device)
    forward_on, forward_device, forward_dtype = _autocast_state(evidence.forward_autocast, device)
    backward_on, backward_device, backward_dtype = _autocast_state(evidence.backward_autocast, device)
    imports = """import torch
import torch._functorch.config as functorch_config
"""
    island = """def island(x, w):
    # An fp32 island: autocast would cast its backward matmul if the backward ran under autocast.
    with torch.autocast(torch.get_default_device().type, enabled=False):
        y = x.float() @ w.float()
    return y.pow(2).sum()


"""
    return _program(
        imports,
        evidence,
        f"""    fn = torch.compile(island, backend=BACKEND)
    x = torch.randn(128, 128)
    w = torch.randn(128, 128, requires_grad=True)
    with functorch_config.patch(backward_pass_autocast={_literal(written)}):
        with torch.autocast({forward_device!r}, dtype={forward_dtype}, enabled={forward_on}):
            z = fn(x, w)  # CALL
    with torch.autocast({backward_device!r}, dtype={backward_dtype}, enabled={backward_on}):
        z.backward()  # SITE
""",
        island,
    )


_FUNCTIONAL_CALLS = {
    "jvp": "functional.jvp(field, x, v)",
    "vjp": "functional.vjp(field, x, v, create_graph=True)[1].sum().backward()",
    "jacobian": "functional.jacobian(field, x, create_graph=True).sum().backward()",
    "hvp": "functional.hvp(scalar, x, v)",
    "vhp": "functional.vhp(scalar, x, v)",
    "hessian": "functional.hessian(scalar, x)",
}


def cal004_probe(evidence: Cal004Evidence) -> str:
    """A second-order use of a compiled callable: the finding's ``torch.autograd.functional`` call, or a
    ``create_graph=True`` gradient differentiated again (a gradient penalty)."""
    name = _function_name(evidence)
    if isinstance(evidence, Cal004InsideEvidence):  # both backwards inside the compiled function
        return _program(
            "import torch\n",
            evidence,
            """    x = torch.randn(4)
    update(x)
""",
            """def update(a):
    a = a.detach().requires_grad_(True)
    (g,) = torch.autograd.grad((a * a * a).sin().sum(), a, create_graph=True)  # SITE
    g.square().sum().backward()


update = torch.compile(update, backend=BACKEND)


""",
        )
    if name in _FUNCTIONAL_CALLS:
        body = f"    {_FUNCTIONAL_CALLS[name]}  # SITE"
    else:
        body = "    (g,) = torch.autograd.grad(field(x).sum(), x, create_graph=True)  # SITE\n    g.square().sum().backward()"
    imports = """import torch
from torch.autograd import functional
"""
    return _program(
        imports,
        evidence,
        f"""    field = torch.compile(lambda a: (a * a * a).sin(), backend=BACKEND)
    scalar = torch.compile(lambda a: (a * a * a).sin().sum(), backend=BACKEND)
    x = torch.randn(4, requires_grad=True)
    v = torch.randn(4)
{body}
""",
    )


def cal005_probe(evidence: Cal005Evidence) -> str:
    """Two outputs of a compiled function, only the first in the loss (the facts script's case)."""
    return _program(
        "import torch\n",
        evidence,
        """    two = torch.compile(lambda a, u, w: (a @ u, a @ w), backend=BACKEND)
    u, w = torch.nn.Parameter(torch.randn(3, 3)), torch.nn.Parameter(torch.randn(3, 3))
    used, unused = two(torch.randn(3, 3), u, w)
    used.sum().backward()  # SITE
""",
    )


def marked_line(source: str, marker: str) -> int:
    for number, line in enumerate(source.splitlines(), start=1):
        if line.rstrip().endswith(f"# {marker}"):
            return number
    raise ValueError(marker)
