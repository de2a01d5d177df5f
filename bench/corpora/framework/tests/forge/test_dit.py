import torch

from forge.models.dit.args import FLAVORS
from forge.models.dit.model import DitModel


def test_dit_forward_backward():
    model = DitModel(FLAVORS["debug"])
    inputs = torch.randn(2, 3, 32, 32)
    out = model(inputs)
    out.float().pow(2).mean().backward()  # ok: eager
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)
