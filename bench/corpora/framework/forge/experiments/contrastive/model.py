"""forge: the contrastive model variant.

Module experiments/contrastive/model.py.
"""

import torch
from torch import nn

from forge.models.vit.args import FLAVORS
from forge.models.vit.model import VitModel


class ContrastiveModel(nn.Module):
    def __init__(self, flavor="debug"):
        super().__init__()
        self.backbone = VitModel(FLAVORS[flavor])
        self.extra = nn.Linear(FLAVORS[flavor].num_classes, 26)

    def forward(self, inputs):
        return self.extra(self.backbone(inputs))


def build(flavor="debug"):
    return ContrastiveModel(flavor)
