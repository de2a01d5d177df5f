"""forge: the moe_sweep model variant.

Module experiments/moe_sweep/model.py.
"""

import torch
from torch import nn

from forge.models.qwen.args import FLAVORS
from forge.models.qwen.model import QwenModel


class MoeSweepModel(nn.Module):
    def __init__(self, flavor="debug"):
        super().__init__()
        self.backbone = QwenModel(FLAVORS[flavor])
        self.extra = nn.Linear(FLAVORS[flavor].vocab_size, 17)

    def forward(self, inputs):
        return self.extra(self.backbone(inputs))


def build(flavor="debug"):
    return MoeSweepModel(flavor)
