"""CAL002 across modules: the fix edits steps.py, where the compiled call is."""

import torch
from steps import forward, region


def run():
    torch.manual_seed(0)
    x = torch.randn(48, 48)
    w = torch.randn(48, 48, requires_grad=True)
    loss = forward(x, w)
    loss.backward()
    grad = w.grad.clone()
    w.grad = None
    with torch.autocast("cpu", dtype=torch.bfloat16):
        reference = region(x, w)
    reference.backward()
    return {"grad": grad, "eager": w.grad}
