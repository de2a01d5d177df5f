import torch

from forge.models.gemma.args import FLAVORS
from forge.models.gemma.model import GemmaModel


def test_gemma_forward_backward():
    model = GemmaModel(FLAVORS["debug"])
    inputs = torch.randint(0, 32000, (2, 16))
    out = model(inputs)
    out.float().pow(2).mean().backward()  # ok: eager
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)
