import torch

from forge.models.falcon.args import FLAVORS
from forge.models.falcon.model import FalconModel


def test_falcon_forward_backward():
    model = FalconModel(FLAVORS["debug"])
    inputs = torch.randint(0, 32000, (2, 16))
    out = model(inputs)
    out.float().pow(2).mean().backward()  # ok: eager
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)
