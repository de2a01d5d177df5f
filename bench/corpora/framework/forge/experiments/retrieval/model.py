"""forge: the retrieval model variant.

Module experiments/retrieval/model.py.
"""

import torch
from torch import nn

from forge.models.mpt.args import FLAVORS
from forge.models.mpt.model import MptModel


class RetrievalModel(nn.Module):
    def __init__(self, flavor="debug"):
        super().__init__()
        self.backbone = MptModel(FLAVORS[flavor])
        self.extra = nn.Linear(FLAVORS[flavor].vocab_size, 36)

    def forward(self, inputs):
        return self.extra(self.backbone(inputs))


def build(flavor="debug"):
    return RetrievalModel(flavor)
