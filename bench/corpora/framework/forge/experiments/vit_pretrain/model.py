"""forge: the vit_pretrain model variant.

Module experiments/vit_pretrain/model.py.
"""

import torch
from torch import nn

from forge.models.mpt.args import FLAVORS
from forge.models.mpt.model import MptModel


class VitPretrainModel(nn.Module):
    def __init__(self, flavor="debug"):
        super().__init__()
        self.backbone = MptModel(FLAVORS[flavor])
        self.extra = nn.Linear(FLAVORS[flavor].vocab_size, 22)

    def forward(self, inputs):
        return self.extra(self.backbone(inputs))


def build(flavor="debug"):
    return VitPretrainModel(flavor)
