"""CAL003: a tuple of kwargs dicts in config.patch: torch wants a list."""

import torch
from torch._functorch import config


def region(x, w):
    return (x @ w).tanh().sum()


compiled = torch.compile(region, backend="aot_eager")


def run():
    torch.manual_seed(0)
    x = torch.randn(16, 16)
    w = torch.randn(16, 16, requires_grad=True)
    with config.patch(backward_pass_autocast=({"device_type": "cpu", "dtype": torch.bfloat16},)):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = compiled(x, w)
            loss.backward()
    grad = w.grad.clone()
    w.grad = None
    with torch.autocast("cpu", dtype=torch.bfloat16):
        reference = region(x, w)
        reference.backward()
    return {"grad": grad, "eager": w.grad}
