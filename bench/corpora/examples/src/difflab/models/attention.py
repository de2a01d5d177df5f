"""Transformer blocks with self-attention, cross-attention and a gated feed-forward."""

import torch
from torch import nn

from .activations import GEGLU, GELU, SwiGLU
from .attention_processor import Attention
from .normalization import AdaLayerNorm, AdaLayerNormZero


class FeedForward(nn.Module):
    def __init__(self, dim, dim_out=None, mult=4, dropout=0.0, activation_fn="geglu", bias=True):
        super().__init__()
        inner_dim = int(dim * mult)
        dim_out = dim_out or dim
        if activation_fn == "gelu":
            act = GELU(dim, inner_dim, bias=bias)
        elif activation_fn == "gelu-approximate":
            act = GELU(dim, inner_dim, approximate="tanh", bias=bias)
        elif activation_fn == "swiglu":
            act = SwiGLU(dim, inner_dim, bias=bias)
        else:
            act = GEGLU(dim, inner_dim, bias=bias)
        self.net = nn.ModuleList([act, nn.Dropout(dropout), nn.Linear(inner_dim, dim_out, bias=bias)])

    def forward(self, hidden_states):
        for module in self.net:
            hidden_states = module(hidden_states)
        return hidden_states


class BasicTransformerBlock(nn.Module):
    def __init__(
        self,
        dim,
        num_attention_heads,
        attention_head_dim,
        cross_attention_dim=None,
        activation_fn="geglu",
        num_embeds_ada_norm=None,
        norm_type="layer_norm",
        only_cross_attention=False,
    ):
        super().__init__()
        self.norm_type = norm_type
        if norm_type == "ada_norm":
            self.norm1 = AdaLayerNorm(dim, num_embeds_ada_norm)
        elif norm_type == "ada_norm_zero":
            self.norm1 = AdaLayerNormZero(dim, num_embeds_ada_norm)
        else:
            self.norm1 = nn.LayerNorm(dim, elementwise_affine=True, eps=1e-5)
        self.attn1 = Attention(
            dim,
            cross_attention_dim=cross_attention_dim if only_cross_attention else None,
            heads=num_attention_heads,
            dim_head=attention_head_dim,
        )
        self.norm2 = nn.LayerNorm(dim, eps=1e-5) if cross_attention_dim is not None else None
        self.attn2 = (
            Attention(
                dim, cross_attention_dim=cross_attention_dim, heads=num_attention_heads, dim_head=attention_head_dim
            )
            if cross_attention_dim is not None
            else None
        )
        self.norm3 = nn.LayerNorm(dim, eps=1e-5)
        self.ff = FeedForward(dim, activation_fn=activation_fn)

    def forward(self, hidden_states, encoder_hidden_states=None, timestep=None, class_labels=None):
        if self.norm_type == "ada_norm":
            norm_hidden_states = self.norm1(hidden_states, timestep)
        elif self.norm_type == "ada_norm_zero":
            norm_hidden_states, gate_msa, shift_mlp, scale_mlp, gate_mlp = self.norm1(
                hidden_states, timestep, class_labels
            )
        else:
            norm_hidden_states = self.norm1(hidden_states)
        attn_output = self.attn1(norm_hidden_states)
        if self.norm_type == "ada_norm_zero":
            attn_output = gate_msa.unsqueeze(1) * attn_output
        hidden_states = attn_output + hidden_states
        if self.attn2 is not None:
            norm_hidden_states = self.norm2(hidden_states)
            hidden_states = self.attn2(norm_hidden_states, encoder_hidden_states=encoder_hidden_states) + hidden_states
        norm_hidden_states = self.norm3(hidden_states)
        if self.norm_type == "ada_norm_zero":
            norm_hidden_states = norm_hidden_states * (1 + scale_mlp[:, None]) + shift_mlp[:, None]
        ff_output = self.ff(norm_hidden_states)
        if self.norm_type == "ada_norm_zero":
            ff_output = gate_mlp.unsqueeze(1) * ff_output
        hidden_states = ff_output + hidden_states
        if hidden_states.dtype == torch.float16:
            hidden_states = hidden_states.clip(-65504, 65504)
        return hidden_states
