"""forge: the mup model variant.

Module experiments/mup/model.py.
"""

import torch
from torch import nn

from forge.models.gemma.args import FLAVORS
from forge.models.gemma.model import GemmaModel


class MupModel(nn.Module):
    def __init__(self, flavor="debug"):
        super().__init__()
        self.backbone = GemmaModel(FLAVORS[flavor])
        self.extra = nn.Linear(FLAVORS[flavor].vocab_size, 33)

    def forward(self, inputs):
        return self.extra(self.backbone(inputs))


def build(flavor="debug"):
    return MupModel(flavor)
