"""forge: the gptj model.

Module models/gptj/model.py.
"""

import torch
from torch import nn

from forge.models.common.embedding import TokenEmbedding
from forge.models.common.init import init_block
from forge.models.common.norms import build_norm
from forge.models.gptj.layers import GptjBlock


class GptjModel(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.tok_embeddings = TokenEmbedding(args.vocab_size, args.dim)
        self.layers = nn.ModuleDict()
        for layer_id in range(args.n_layers):
            self.layers[str(layer_id)] = GptjBlock(layer_id, args)
        self.norm = build_norm(args.norm, args.dim)
        self.output = nn.Linear(args.dim, args.vocab_size, bias=False)

    def init_weights(self, buffer_device=None):
        for layer_id, block in self.layers.items():
            init_block(block, int(layer_id))

    def forward(self, tokens):
        h = self.tok_embeddings(tokens)
        for layer in self.layers.values():
            h = layer(h)
        return self.output(self.norm(h))
