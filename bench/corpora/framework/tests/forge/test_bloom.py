import torch

from forge.models.bloom.args import FLAVORS
from forge.models.bloom.model import BloomModel


def test_bloom_forward_backward():
    model = BloomModel(FLAVORS["debug"])
    inputs = torch.randint(0, 32000, (2, 16))
    out = model(inputs)
    out.float().pow(2).mean().backward()  # ok: eager
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)
