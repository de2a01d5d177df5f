"""forge: the fwd_grad model variant.

Module experiments/fwd_grad/model.py.
"""

import torch
from torch import nn

from forge.models.falcon.args import FLAVORS
from forge.models.falcon.model import FalconModel


class FwdGradModel(nn.Module):
    def __init__(self, flavor="debug"):
        super().__init__()
        self.backbone = FalconModel(FLAVORS[flavor])
        self.extra = nn.Linear(FLAVORS[flavor].vocab_size, 21)

    def forward(self, inputs):
        return self.extra(self.backbone(inputs))


def build(flavor="debug"):
    return FwdGradModel(flavor)
