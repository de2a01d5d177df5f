"""forge: the flow_match model variant.

Module experiments/flow_match/model.py.
"""

import torch
from torch import nn

from forge.models.gptj.args import FLAVORS
from forge.models.gptj.model import GptjModel


class FlowMatchModel(nn.Module):
    def __init__(self, flavor="debug"):
        super().__init__()
        self.backbone = GptjModel(FLAVORS[flavor])
        self.extra = nn.Linear(FLAVORS[flavor].vocab_size, 38)

    def forward(self, inputs):
        return self.extra(self.backbone(inputs))


def build(flavor="debug"):
    return FlowMatchModel(flavor)
