import torch

from forge.models.whisper.args import FLAVORS
from forge.models.whisper.model import WhisperModel


def test_whisper_forward_backward():
    model = WhisperModel(FLAVORS["debug"])
    inputs = torch.randn(2, 80, 50)
    out = model(inputs)
    out.float().pow(2).mean().backward()  # ok: eager
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)
