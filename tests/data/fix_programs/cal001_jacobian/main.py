"""CAL001: jacobian(strategy="forward-mode") over a compiled function."""

import torch
from torch.autograd.functional import jacobian


def layer(x):
    return torch.tanh(x) * x.sum()


compiled_layer = torch.compile(layer)


def run():
    torch.manual_seed(0)
    x = torch.randn(4)
    found = jacobian(compiled_layer, x, strategy="forward-mode", vectorize=True)
    return {"jacobian": found, "eager": jacobian(layer, x)}
