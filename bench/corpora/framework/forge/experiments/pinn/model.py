"""forge: the pinn model variant.

Module experiments/pinn/model.py.
"""

import torch
from torch import nn

from forge.models.phi.args import FLAVORS
from forge.models.phi.model import PhiModel


class PinnModel(nn.Module):
    def __init__(self, flavor="debug"):
        super().__init__()
        self.backbone = PhiModel(FLAVORS[flavor])
        self.extra = nn.Linear(FLAVORS[flavor].vocab_size, 20)

    def forward(self, inputs):
        return self.extra(self.backbone(inputs))


def build(flavor="debug"):
    return PinnModel(flavor)
