"""forge: the diffusion model variant.

Module experiments/diffusion/model.py.
"""

import torch
from torch import nn

from forge.models.bloom.args import FLAVORS
from forge.models.bloom.model import BloomModel


class DiffusionModel(nn.Module):
    def __init__(self, flavor="debug"):
        super().__init__()
        self.backbone = BloomModel(FLAVORS[flavor])
        self.extra = nn.Linear(FLAVORS[flavor].vocab_size, 37)

    def forward(self, inputs):
        return self.extra(self.backbone(inputs))


def build(flavor="debug"):
    return DiffusionModel(flavor)
