"""forge: the sparse_attn model variant.

Module experiments/sparse_attn/model.py.
"""

import torch
from torch import nn

from forge.models.falcon.args import FLAVORS
from forge.models.falcon.model import FalconModel


class SparseAttnModel(nn.Module):
    def __init__(self, flavor="debug"):
        super().__init__()
        self.backbone = FalconModel(FLAVORS[flavor])
        self.extra = nn.Linear(FLAVORS[flavor].vocab_size, 35)

    def forward(self, inputs):
        return self.extra(self.backbone(inputs))


def build(flavor="debug"):
    return SparseAttnModel(flavor)
