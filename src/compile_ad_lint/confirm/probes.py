"""Synthetic probes: minimal programs built from a finding's facts, for findings with no runnable entry point.

They answer "does the installed torch have this hazard at all" with the finding's backend, config and
autocast contexts as written (device types included: an autocast for cuda cannot show on cpu tensors;
an unknown one stands for the device being checked). Each probe defines ``probe()`` and marks its sites with
``# SITE`` (the flagged call) and ``# CALL`` (the compiled call, for CAL002's matching-config run).
"""

from __future__ import annotations

import ast
import re

_SAFE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


def _backend(facts: dict) -> str:
    backend = facts.get("backend", "inductor")
    return backend if _SAFE_NAME.match(backend or "") else "inductor"


def cal001_probe(facts: dict) -> str:
    backend = _backend(facts)
    if facts.get("expected") == "raises":
        make = "torch.compile(torch.nn.Linear(4, 4), backend=BACKEND)"
    else:
        make = "torch.compile(lambda a: torch.sin(a) * a, backend=BACKEND)"
    return f"""import torch
import torch.autograd.forward_ad as fwAD

BACKEND = {backend!r}


def probe():
    torch.manual_seed(0)
    fn = {make}
    x, t = torch.randn(4), torch.randn(4)
    with fwAD.dual_level():
        out = fn(fwAD.make_dual(x, t))  # SITE
        fwAD.unpack_dual(out)
"""


def parse_config(text: str | None, device: str) -> object:
    """A ``config``/``matching_config`` fact as a JSON-able value (autocast devices as written; unknown: ``device``)."""
    if text is None:
        return "same_as_forward"
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return "same_as_forward"
    if isinstance(value, str):
        return value
    entries = []
    for item in value if isinstance(value, (list, tuple)) else []:
        if isinstance(item, dict):
            target, dtype = item.get("device_type"), item.get("dtype")
        elif isinstance(item, (list, tuple)) and len(item) == 2:
            target, dtype = item
        else:
            continue
        target = _device(target, device)
        entries.append({"device_type": target, "dtype": _dtype(dtype, target)})
    return entries or "same_as_forward"


def _device(value: object, device: str) -> str:
    return value if value in ("cpu", "cuda") else device


def _dtype(value: object, target: str) -> str:
    """The dtype as written, else autocast's default for ``target`` (float16 on cuda, bfloat16 on cpu)."""
    text = str(value or "").replace("torch.", "")
    if text in ("bfloat16", "float16", "half", "float32"):
        return "torch." + ("float16" if text == "half" else text)
    return "torch.float16" if target == "cuda" else "torch.bfloat16"


def _autocast_state(fact: str | None, device: str) -> tuple[bool, str, str]:
    """(enabled, device_type, dtype) of an autocast fact such as ``cuda/bfloat16``, ``?/float16`` or ``off``."""
    if not fact or fact == "off":
        return False, device, _dtype(None, device)
    target, _, dtype = fact.partition("/")
    target = _device(target, device)
    return True, target, _dtype(dtype if dtype != "?" else None, target)


def autocast_devices(facts: dict) -> set[str]:
    """The device types the finding's autocast contexts and config lists name (unknown ones excluded)."""
    found = set()
    for key in ("forward_autocast", "backward_autocast"):
        enabled, target, _ = _autocast_state(facts.get(key), "?")
        if enabled and target != "?":
            found.add(target)
    for key in ("config", "matching_config"):
        value = parse_config(facts.get(key), "?")
        if isinstance(value, list):
            found.update(entry["device_type"] for entry in value if entry["device_type"] in ("cpu", "cuda"))
    return found


def describe(facts: dict, code: str, device: str) -> str:
    """What a probe for ``facts`` ran, for the verdict's detail."""
    if code == "CAL001":
        return f"backend={_backend(facts)!r}, {'compiled nn.Linear' if facts.get('expected') == 'raises' else 'compiled function'}"
    if code == "CAL004":
        name = facts.get("function", "").rsplit(".", 1)[-1]
        how = (
            f"torch.autograd.functional.{name}"
            if name in _FUNCTIONAL_CALLS
            else "grad(create_graph=True), then a second backward"
        )
        return f"{how} over a function compiled with backend={_backend(facts)!r}"
    if code == "CAL005":
        return f"two outputs of a function compiled with backend={_backend(facts)!r}, only the first in the loss"
    forward = _autocast_state(facts.get("forward_autocast"), device)
    backward = _autocast_state(facts.get("backward_autocast"), device)

    def text(state: tuple[bool, str, str]) -> str:
        return f"autocast({state[1]!r}, {state[2]})" if state[0] else "no autocast"

    return (
        f"fp32-island region compiled with backend={_backend(facts)!r} and backward_pass_autocast={facts.get('config', 'same_as_forward')}, "
        f"forward under {text(forward)}, backward under {text(backward)}"
    )


def _literal(value: object) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(f'{{"device_type": {e["device_type"]!r}, "dtype": {e["dtype"]}}}' for e in value) + "]"
    return repr(value)


def cal002_probe(facts: dict, device: str) -> str:
    backend = _backend(facts)
    written = parse_config(facts.get("config"), device)
    forward_on, forward_device, forward_dtype = _autocast_state(facts.get("forward_autocast"), device)
    backward_on, backward_device, backward_dtype = _autocast_state(facts.get("backward_autocast"), device)
    return f"""import torch
import torch._functorch.config as functorch_config

BACKEND = {backend!r}


def island(x, w):
    # An fp32 island: autocast would cast its backward matmul if the backward ran under autocast.
    with torch.autocast(torch.get_default_device().type, enabled=False):
        y = x.float() @ w.float()
    return y.pow(2).sum()


def probe():
    torch.manual_seed(0)
    fn = torch.compile(island, backend=BACKEND)
    x = torch.randn(128, 128)
    w = torch.randn(128, 128, requires_grad=True)
    with functorch_config.patch(backward_pass_autocast={_literal(written)}):
        with torch.autocast({forward_device!r}, dtype={forward_dtype}, enabled={forward_on}):
            z = fn(x, w)  # CALL
    with torch.autocast({backward_device!r}, dtype={backward_dtype}, enabled={backward_on}):
        z.backward()  # SITE
"""


_FUNCTIONAL_CALLS = {
    "jvp": "functional.jvp(field, x, v)",
    "vjp": "functional.vjp(field, x, v, create_graph=True)[1].sum().backward()",
    "jacobian": "functional.jacobian(field, x, create_graph=True).sum().backward()",
    "hvp": "functional.hvp(scalar, x, v)",
    "vhp": "functional.vhp(scalar, x, v)",
    "hessian": "functional.hessian(scalar, x)",
}


def cal004_probe(facts: dict) -> str:
    """A second-order use of a compiled callable: the finding's ``torch.autograd.functional`` call, or a
    ``create_graph=True`` gradient differentiated again (a gradient penalty)."""
    backend = _backend(facts)
    name = facts.get("function", "").rsplit(".", 1)[-1]
    if name in _FUNCTIONAL_CALLS:
        body = f"    {_FUNCTIONAL_CALLS[name]}  # SITE"
    else:
        body = "    (g,) = torch.autograd.grad(field(x).sum(), x, create_graph=True)  # SITE\n    g.square().sum().backward()"
    return f"""import torch
from torch.autograd import functional

BACKEND = {backend!r}


def probe():
    torch.manual_seed(0)
    field = torch.compile(lambda a: (a * a * a).sin(), backend=BACKEND)
    scalar = torch.compile(lambda a: (a * a * a).sin().sum(), backend=BACKEND)
    x = torch.randn(4, requires_grad=True)
    v = torch.randn(4)
{body}
"""


def cal005_probe(facts: dict) -> str:
    """Two outputs of a compiled function, only the first in the loss (the facts script's case)."""
    backend = _backend(facts)
    return f"""import torch

BACKEND = {backend!r}


def probe():
    torch.manual_seed(0)
    two = torch.compile(lambda a, u, w: (a @ u, a @ w), backend=BACKEND)
    u, w = torch.nn.Parameter(torch.randn(3, 3)), torch.nn.Parameter(torch.randn(3, 3))
    used, unused = two(torch.randn(3, 3), u, w)
    used.sum().backward()  # SITE
"""


def marked_line(source: str, marker: str) -> int:
    for number, line in enumerate(source.splitlines(), start=1):
        if line.rstrip().endswith(f"# {marker}"):
            return number
    raise ValueError(marker)
