"""forge: the speech_ctc model variant.

Module experiments/speech_ctc/model.py.
"""

import torch
from torch import nn

from forge.models.dit.args import FLAVORS
from forge.models.dit.model import DitModel


class SpeechCtcModel(nn.Module):
    def __init__(self, flavor="debug"):
        super().__init__()
        self.backbone = DitModel(FLAVORS[flavor])
        self.extra = nn.Linear(FLAVORS[flavor].num_classes, 27)

    def forward(self, inputs):
        return self.extra(self.backbone(inputs))


def build(flavor="debug"):
    return SpeechCtcModel(flavor)
