"""A spatial transformer over the feature map of a UNet block (image tokens attend to text)."""

from dataclasses import dataclass

import torch
from torch import nn

from ...utils.outputs import BaseOutput
from ..attention import BasicTransformerBlock


@dataclass
class Transformer2DModelOutput(BaseOutput):
    sample: torch.Tensor = None


class Transformer2DModel(nn.Module):
    def __init__(
        self,
        num_attention_heads,
        attention_head_dim,
        in_channels,
        num_layers=1,
        cross_attention_dim=None,
        norm_num_groups=32,
    ):
        super().__init__()
        inner_dim = num_attention_heads * attention_head_dim
        self.norm = nn.GroupNorm(norm_num_groups, in_channels, eps=1e-6, affine=True)
        self.proj_in = nn.Linear(in_channels, inner_dim)
        self.transformer_blocks = nn.ModuleList(
            [
                BasicTransformerBlock(inner_dim, num_attention_heads, attention_head_dim, cross_attention_dim)
                for _ in range(num_layers)
            ]
        )
        self.proj_out = nn.Linear(inner_dim, in_channels)
        self.gradient_checkpointing = False

    def forward(self, hidden_states, encoder_hidden_states=None, timestep=None, return_dict=True):
        batch, _, height, width = hidden_states.shape
        residual = hidden_states
        hidden_states = self.norm(hidden_states)
        hidden_states = hidden_states.permute(0, 2, 3, 1).reshape(batch, height * width, -1)
        hidden_states = self.proj_in(hidden_states)
        for block in self.transformer_blocks:
            if self.gradient_checkpointing and torch.is_grad_enabled():
                hidden_states = torch.utils.checkpoint.checkpoint(
                    block, hidden_states, encoder_hidden_states, timestep, use_reentrant=False
                )
            else:
                hidden_states = block(hidden_states, encoder_hidden_states=encoder_hidden_states, timestep=timestep)
        hidden_states = self.proj_out(hidden_states)
        hidden_states = hidden_states.reshape(batch, height, width, -1).permute(0, 3, 1, 2).contiguous()
        output = hidden_states + residual
        if not return_dict:
            return (output,)
        return Transformer2DModelOutput(sample=output)
