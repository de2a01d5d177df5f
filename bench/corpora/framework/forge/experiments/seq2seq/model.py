"""forge: the seq2seq model variant.

Module experiments/seq2seq/model.py.
"""

import torch
from torch import nn

from forge.models.clip.args import FLAVORS
from forge.models.clip.model import ClipModel


class Seq2seqModel(nn.Module):
    def __init__(self, flavor="debug"):
        super().__init__()
        self.backbone = ClipModel(FLAVORS[flavor])
        self.extra = nn.Linear(FLAVORS[flavor].num_classes, 28)

    def forward(self, inputs):
        return self.extra(self.backbone(inputs))


def build(flavor="debug"):
    return Seq2seqModel(flavor)
