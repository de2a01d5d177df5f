"""CAL003: a misspelled value ("of") in config.patch around the compiled call."""

import torch
import torch._functorch.config as fc


def region(x, w):
    return (x @ w).tanh().sum()


compiled = torch.compile(region, backend="aot_eager")


def run():
    torch.manual_seed(0)
    x = torch.randn(16, 16)
    w = torch.randn(16, 16, requires_grad=True)
    with fc.patch(backward_pass_autocast="of"):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = compiled(x, w)
    loss.backward()
    grad = w.grad.clone()
    w.grad = None
    with torch.autocast("cpu", dtype=torch.bfloat16):
        reference = region(x, w)
    reference.backward()
    return {"grad": grad, "eager": w.grad}
