"""forge: the curriculum model variant.

Module experiments/curriculum/model.py.
"""

import torch
from torch import nn

from forge.models.mistral.args import FLAVORS
from forge.models.mistral.model import MistralModel


class CurriculumModel(nn.Module):
    def __init__(self, flavor="debug"):
        super().__init__()
        self.backbone = MistralModel(FLAVORS[flavor])
        self.extra = nn.Linear(FLAVORS[flavor].vocab_size, 32)

    def forward(self, inputs):
        return self.extra(self.backbone(inputs))


def build(flavor="debug"):
    return CurriculumModel(flavor)
