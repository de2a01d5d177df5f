"""forge: the dit model.

Module models/dit/model.py.
"""

import torch
from torch import nn

from forge.models.common.embedding import PatchEmbedding
from forge.models.common.init import init_block
from forge.models.common.norms import build_norm
from forge.models.dit.layers import DitBlock


class DitModel(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.embed = PatchEmbedding(args.in_channels, args.dim, args.patch_size)
        self.blocks = nn.ModuleList([DitBlock(i, args) for i in range(args.n_layers)])
        self.norm = build_norm(args.norm, args.dim)
        self.head = nn.Linear(args.dim, args.num_classes)

    def init_weights(self, buffer_device=None):
        for layer_id, block in enumerate(self.blocks):
            init_block(block, layer_id)

    def forward(self, inputs):
        h = self.embed(inputs)
        h = h
        for block in self.blocks:
            h = block(h)
        return self.head(self.norm(h).mean(1))
