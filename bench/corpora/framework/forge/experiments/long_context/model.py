"""forge: the long_context model variant.

Module experiments/long_context/model.py.
"""

import torch
from torch import nn

from forge.models.llama.args import FLAVORS
from forge.models.llama.model import LlamaModel


class LongContextModel(nn.Module):
    def __init__(self, flavor="debug"):
        super().__init__()
        self.backbone = LlamaModel(FLAVORS[flavor])
        self.extra = nn.Linear(FLAVORS[flavor].vocab_size, 16)

    def forward(self, inputs):
        return self.extra(self.backbone(inputs))


def build(flavor="debug"):
    return LongContextModel(flavor)
