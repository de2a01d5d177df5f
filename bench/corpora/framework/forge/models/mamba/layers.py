"""forge: the mamba block.

Module models/mamba/layers.py.
"""

from forge.models.common.block import TransformerBlock


class MambaBlock(TransformerBlock):
    def __init__(self, layer_id, args):
        super().__init__(layer_id, args.dim, args.n_heads, args.hidden_dim, norm=args.norm, n_kv_heads=args.n_kv_heads)
        self.residual_scale = 1.0

    def forward(self, x):
        x = x + self.residual_scale * self.attention(self.attention_norm(x))
        return x + self.feed_forward(self.ffn_norm(x))
