"""CAL002: forward under bf16 autocast, backward outside (the AMP pattern), default config; the
compiled region holds an fp32 island, so the gradients really change."""

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
    with torch.autocast("cpu", dtype=torch.bfloat16):
        # the compiled forward; its backward is traced now
        loss = compiled(x, w)
    loss.backward()
    grad = w.grad.clone()
    w.grad = None
    with torch.autocast("cpu", dtype=torch.bfloat16):
        reference = region(x, w)
    reference.backward()
    return {"grad": grad, "eager": w.grad}
