"""CAL002: forward without autocast, backward inside bf16 autocast: the matching config is the
list of autocast kwargs."""

import torch


def region(x, w):
    with torch.autocast("cpu", enabled=False):
        y = x.float() @ w.float()
    return y.pow(2).sum()


compiled = torch.compile(region)


def run():
    torch.manual_seed(0)
    x = torch.randn(48, 48)
    w = torch.randn(48, 48, requires_grad=True)
    loss = compiled(x, w)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss.backward()
    grad = w.grad.clone()
    w.grad = None
    reference = region(x, w)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        reference.backward()
    return {"grad": grad, "eager": w.grad}
