"""A rectified-flow transformer with joint text-image blocks and rotary positions (compact)."""

import torch
from torch import nn

from ...configuration_utils import register_to_config
from ..attention import FeedForward
from ..attention_processor import Attention
from ..embeddings import PixArtAlphaTextProjection, TimestepEmbedding, Timesteps, get_1d_rotary_pos_embed
from ..modeling_utils import ModelMixin
from ..normalization import AdaLayerNormZero, RMSNorm
from .transformer_2d import Transformer2DModelOutput


class FluxTransformerBlock(nn.Module):
    def __init__(self, dim, num_attention_heads, attention_head_dim):
        super().__init__()
        self.norm1 = AdaLayerNormZero(dim)
        self.norm1_context = AdaLayerNormZero(dim)
        self.attn = Attention(dim, heads=num_attention_heads, dim_head=attention_head_dim, qk_norm="layer_norm")
        self.norm2 = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-6)
        self.ff = FeedForward(dim, dim_out=dim, activation_fn="gelu-approximate")
        self.norm2_context = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-6)
        self.ff_context = FeedForward(dim, dim_out=dim, activation_fn="gelu-approximate")

    def forward(self, hidden_states, encoder_hidden_states, temb):
        norm_hidden, gate_msa, shift_mlp, scale_mlp, gate_mlp = self.norm1(hidden_states, emb=temb)
        norm_context, c_gate_msa, c_shift_mlp, c_scale_mlp, c_gate_mlp = self.norm1_context(
            encoder_hidden_states, emb=temb
        )
        joint = torch.cat([norm_context, norm_hidden], dim=1)
        attn_output = self.attn(joint)
        context_attn, attn_output = attn_output.split([norm_context.shape[1], norm_hidden.shape[1]], dim=1)
        hidden_states = hidden_states + gate_msa.unsqueeze(1) * attn_output
        norm_hidden = self.norm2(hidden_states) * (1 + scale_mlp[:, None]) + shift_mlp[:, None]
        hidden_states = hidden_states + gate_mlp.unsqueeze(1) * self.ff(norm_hidden)
        encoder_hidden_states = encoder_hidden_states + c_gate_msa.unsqueeze(1) * context_attn
        norm_context = self.norm2_context(encoder_hidden_states) * (1 + c_scale_mlp[:, None]) + c_shift_mlp[:, None]
        encoder_hidden_states = encoder_hidden_states + c_gate_mlp.unsqueeze(1) * self.ff_context(norm_context)
        if encoder_hidden_states.dtype == torch.float16:
            encoder_hidden_states = encoder_hidden_states.clip(-65504, 65504)
        return encoder_hidden_states, hidden_states


class FluxTransformer2DModel(ModelMixin):
    _supports_gradient_checkpointing = True
    _repeated_blocks = ("transformer_blocks",)

    @register_to_config
    def __init__(
        self,
        patch_size=1,
        in_channels=64,
        num_layers=19,
        attention_head_dim=128,
        num_attention_heads=24,
        joint_attention_dim=4096,
        pooled_projection_dim=768,
        guidance_embeds=False,
    ):
        super().__init__()
        self.inner_dim = num_attention_heads * attention_head_dim
        self.time_proj = Timesteps(256, flip_sin_to_cos=True, downscale_freq_shift=0)
        self.timestep_embedder = TimestepEmbedding(256, self.inner_dim)
        self.guidance_embedder = TimestepEmbedding(256, self.inner_dim) if guidance_embeds else None
        self.text_embedder = PixArtAlphaTextProjection(pooled_projection_dim, self.inner_dim, act_fn="silu")
        self.context_embedder = nn.Linear(joint_attention_dim, self.inner_dim)
        self.x_embedder = nn.Linear(in_channels, self.inner_dim)
        self.transformer_blocks = nn.ModuleList(
            [FluxTransformerBlock(self.inner_dim, num_attention_heads, attention_head_dim) for _ in range(num_layers)]
        )
        self.norm_out = RMSNorm(self.inner_dim)
        self.proj_out = nn.Linear(self.inner_dim, patch_size * patch_size * in_channels)

    def rotary_positions(self, ids):
        return get_1d_rotary_pos_embed(self.config.attention_head_dim, ids)

    def forward(
        self, hidden_states, encoder_hidden_states, pooled_projections, timestep, guidance=None, return_dict=True
    ):
        hidden_states = self.x_embedder(hidden_states)
        temb = self.timestep_embedder(self.time_proj(timestep * 1000).to(hidden_states.dtype))
        if self.guidance_embedder is not None and guidance is not None:
            temb = temb + self.guidance_embedder(self.time_proj(guidance * 1000).to(hidden_states.dtype))
        temb = temb + self.text_embedder(pooled_projections)
        encoder_hidden_states = self.context_embedder(encoder_hidden_states)
        for block in self.transformer_blocks:
            encoder_hidden_states, hidden_states = self._checkpointed(block, hidden_states, encoder_hidden_states, temb)
        output = self.proj_out(self.norm_out(hidden_states))
        if not return_dict:
            return (output,)
        return Transformer2DModelOutput(sample=output)
