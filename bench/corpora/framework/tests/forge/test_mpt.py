import torch

from forge.models.mpt.args import FLAVORS
from forge.models.mpt.model import MptModel


def test_mpt_forward_backward():
    model = MptModel(FLAVORS["debug"])
    inputs = torch.randint(0, 32000, (2, 16))
    out = model(inputs)
    out.float().pow(2).mean().backward()  # ok: eager
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)
