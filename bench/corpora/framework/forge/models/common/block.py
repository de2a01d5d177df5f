"""forge: the transformer block every family builds on.

Module models/common/block.py.
"""

from torch import nn

from forge.models.common.attention import Attention
from forge.models.common.mlp import FeedForward
from forge.models.common.norms import build_norm


class TransformerBlock(nn.Module):
    def __init__(self, layer_id, dim, n_heads, hidden_dim, norm="rmsnorm", n_kv_heads=None):
        super().__init__()
        self.layer_id = layer_id
        self.attention_norm = build_norm(norm, dim)
        self.attention = Attention(dim, n_heads, n_kv_heads)
        self.ffn_norm = build_norm(norm, dim)
        self.feed_forward = FeedForward(dim, hidden_dim)

    def forward(self, x):
        x = x + self.attention(self.attention_norm(x))
        return x + self.feed_forward(self.ffn_norm(x))
