"""CAL002: the module sets backward_pass_autocast = "off", but forward and backward both run
inside autocast: the matching config at the call is "same_as_forward"."""

import torch
import torch._functorch.config as fc

fc.backward_pass_autocast = "off"


def region(x, w):
    with torch.autocast("cpu", enabled=False):
        y = x.float() @ w.float()
    return y.pow(2).sum()


compiled = torch.compile(region)


def run():
    torch.manual_seed(0)
    x = torch.randn(48, 48)
    w = torch.randn(48, 48, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = compiled(x, w)
        loss.backward()
    grad = w.grad.clone()
    w.grad = None
    with torch.autocast("cpu", dtype=torch.bfloat16):
        reference = region(x, w)
        reference.backward()
    return {"grad": grad, "eager": w.grad}
