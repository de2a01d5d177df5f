"""forge: rotary position embeddings.

Module models/common/rope.py.
"""

import torch
from torch import nn


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim, theta=10000.0, max_seq_len=8192):
        super().__init__()
        freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 2).float() / head_dim))
        angles = torch.outer(torch.arange(max_seq_len).float(), freqs)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, x):
        seqlen = x.shape[1]
        x1, x2 = x[..., ::2], x[..., 1::2]
        cos = self.cos[:seqlen, None, :]
        sin = self.sin[:seqlen, None, :]
        return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)
