"""forge: the lora_ft model variant.

Module experiments/lora_ft/model.py.
"""

import torch
from torch import nn

from forge.models.mistral.args import FLAVORS
from forge.models.mistral.model import MistralModel


class LoraFtModel(nn.Module):
    def __init__(self, flavor="debug"):
        super().__init__()
        self.backbone = MistralModel(FLAVORS[flavor])
        self.extra = nn.Linear(FLAVORS[flavor].vocab_size, 18)

    def forward(self, inputs):
        return self.extra(self.backbone(inputs))


def build(flavor="debug"):
    return LoraFtModel(flavor)
