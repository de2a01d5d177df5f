import torch

from forge.models.qwen.args import FLAVORS
from forge.models.qwen.model import QwenModel


def test_qwen_forward_backward():
    model = QwenModel(FLAVORS["debug"])
    inputs = torch.randint(0, 32000, (2, 16))
    out = model(inputs)
    out.float().pow(2).mean().backward()  # ok: eager
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)
