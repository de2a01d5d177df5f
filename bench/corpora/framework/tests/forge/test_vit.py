import torch

from forge.models.vit.args import FLAVORS
from forge.models.vit.model import VitModel


def test_vit_forward_backward():
    model = VitModel(FLAVORS["debug"])
    inputs = torch.randn(2, 3, 32, 32)
    out = model(inputs)
    out.float().pow(2).mean().backward()  # ok: eager
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)
