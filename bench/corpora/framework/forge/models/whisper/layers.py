"""forge: the whisper block.

Module models/whisper/layers.py.
"""

from torch import nn

from forge.models.common.attention import Attention
from forge.models.common.mlp import MLP


class WhisperBlock(nn.Module):
    def __init__(self, layer_id, args):
        super().__init__()
        self.norm1 = nn.LayerNorm(args.dim)
        self.attn = Attention(args.dim, args.n_heads, rope=False)
        self.norm2 = nn.LayerNorm(args.dim)
        self.mlp = MLP(args.dim, args.hidden_dim)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))
