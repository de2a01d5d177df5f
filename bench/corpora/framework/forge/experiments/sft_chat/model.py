"""forge: the sft_chat model variant.

Module experiments/sft_chat/model.py.
"""

import torch
from torch import nn

from forge.models.whisper.args import FLAVORS
from forge.models.whisper.model import WhisperModel


class SftChatModel(nn.Module):
    def __init__(self, flavor="debug"):
        super().__init__()
        self.backbone = WhisperModel(FLAVORS[flavor])
        self.extra = nn.Linear(FLAVORS[flavor].num_classes, 29)

    def forward(self, inputs):
        return self.extra(self.backbone(inputs))


def build(flavor="debug"):
    return SftChatModel(flavor)
