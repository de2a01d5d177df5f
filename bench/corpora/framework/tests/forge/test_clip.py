import torch

from forge.models.clip.args import FLAVORS
from forge.models.clip.model import ClipModel


def test_clip_forward_backward():
    model = ClipModel(FLAVORS["debug"])
    inputs = torch.randn(2, 3, 32, 32)
    out = model(inputs)
    out.float().pow(2).mean().backward()  # ok: eager
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)
