"""forge: the jepa model variant.

Module experiments/jepa/model.py.
"""

import torch
from torch import nn

from forge.models.mamba.args import FLAVORS
from forge.models.mamba.model import MambaModel


class JepaModel(nn.Module):
    def __init__(self, flavor="debug"):
        super().__init__()
        self.backbone = MambaModel(FLAVORS[flavor])
        self.extra = nn.Linear(FLAVORS[flavor].vocab_size, 25)

    def forward(self, inputs):
        return self.extra(self.backbone(inputs))


def build(flavor="debug"):
    return JepaModel(flavor)
