"""Attention with swappable processors (plain scaled-dot-product, LoRA-augmented, fused projections)."""

import torch
import torch.nn.functional as F
from torch import nn

from ..utils.logging import get_logger

logger = get_logger(__name__)


class AttnProcessor2_0:
    """Scaled dot-product attention through ``F.scaled_dot_product_attention``."""

    def __call__(self, attn, hidden_states, encoder_hidden_states=None, attention_mask=None, temb=None):
        residual = hidden_states
        if attn.spatial_norm is not None:
            hidden_states = attn.spatial_norm(hidden_states, temb)
        input_ndim = hidden_states.ndim
        if input_ndim == 4:
            batch, channels, height, width = hidden_states.shape
            hidden_states = hidden_states.view(batch, channels, height * width).transpose(1, 2)
        batch_size = hidden_states.shape[0]
        if attn.group_norm is not None:
            hidden_states = attn.group_norm(hidden_states.transpose(1, 2)).transpose(1, 2)
        query = attn.to_q(hidden_states)
        context = hidden_states if encoder_hidden_states is None else encoder_hidden_states
        if attn.norm_cross is not None and encoder_hidden_states is not None:
            context = attn.norm_cross(context)
        key = attn.to_k(context)
        value = attn.to_v(context)
        head_dim = key.shape[-1] // attn.heads
        query = query.view(batch_size, -1, attn.heads, head_dim).transpose(1, 2)
        key = key.view(batch_size, -1, attn.heads, head_dim).transpose(1, 2)
        value = value.view(batch_size, -1, attn.heads, head_dim).transpose(1, 2)
        if attn.norm_q is not None:
            query = attn.norm_q(query)
        if attn.norm_k is not None:
            key = attn.norm_k(key)
        hidden_states = F.scaled_dot_product_attention(query, key, value, attn_mask=attention_mask, dropout_p=0.0)
        hidden_states = hidden_states.transpose(1, 2).reshape(batch_size, -1, attn.heads * head_dim)
        hidden_states = hidden_states.to(query.dtype)
        hidden_states = attn.to_out[1](attn.to_out[0](hidden_states))
        if input_ndim == 4:
            hidden_states = hidden_states.transpose(-1, -2).reshape(batch, channels, height, width)
        if attn.residual_connection:
            hidden_states = hidden_states + residual
        return hidden_states / attn.rescale_output_factor


class LoRAAttnProcessor2_0(AttnProcessor2_0):
    """The same attention with low-rank updates of the four projections (``scale`` weighs them)."""

    def __init__(self, hidden_size, cross_attention_dim=None, rank=4, network_alpha=None):
        from .lora import LoRALinearLayer

        self.to_q_lora = LoRALinearLayer(hidden_size, hidden_size, rank, network_alpha)
        self.to_k_lora = LoRALinearLayer(cross_attention_dim or hidden_size, hidden_size, rank, network_alpha)
        self.to_v_lora = LoRALinearLayer(cross_attention_dim or hidden_size, hidden_size, rank, network_alpha)
        self.to_out_lora = LoRALinearLayer(hidden_size, hidden_size, rank, network_alpha)
        self.scale = 1.0

    def parameters(self):
        for layer in (self.to_q_lora, self.to_k_lora, self.to_v_lora, self.to_out_lora):
            yield from layer.parameters()

    def __call__(self, attn, hidden_states, encoder_hidden_states=None, attention_mask=None, temb=None):
        attn.to_q.lora_layer = self.to_q_lora
        attn.to_k.lora_layer = self.to_k_lora
        attn.to_v.lora_layer = self.to_v_lora
        attn.to_out[0].lora_layer = self.to_out_lora
        return super().__call__(attn, hidden_states, encoder_hidden_states, attention_mask, temb)


class Attention(nn.Module):
    def __init__(
        self,
        query_dim,
        cross_attention_dim=None,
        heads=8,
        dim_head=64,
        dropout=0.0,
        bias=False,
        norm_num_groups=None,
        spatial_norm_dim=None,
        qk_norm=None,
        cross_attention_norm=None,
        out_bias=True,
        residual_connection=False,
        rescale_output_factor=1.0,
        processor=None,
    ):
        super().__init__()
        inner_dim = dim_head * heads
        cross_attention_dim = cross_attention_dim or query_dim
        self.heads = heads
        self.residual_connection = residual_connection
        self.rescale_output_factor = rescale_output_factor
        self.group_norm = nn.GroupNorm(norm_num_groups, query_dim, eps=1e-5) if norm_num_groups else None
        self.spatial_norm = None
        if spatial_norm_dim is not None:
            from .normalization import SpatialNorm

            self.spatial_norm = SpatialNorm(query_dim, spatial_norm_dim)
        self.norm_q = nn.LayerNorm(dim_head, eps=1e-6) if qk_norm == "layer_norm" else None
        self.norm_k = nn.LayerNorm(dim_head, eps=1e-6) if qk_norm == "layer_norm" else None
        self.norm_cross = nn.LayerNorm(cross_attention_dim) if cross_attention_norm == "layer_norm" else None
        self.to_q = nn.Linear(query_dim, inner_dim, bias=bias)
        self.to_k = nn.Linear(cross_attention_dim, inner_dim, bias=bias)
        self.to_v = nn.Linear(cross_attention_dim, inner_dim, bias=bias)
        self.to_out = nn.ModuleList([nn.Linear(inner_dim, query_dim, bias=out_bias), nn.Dropout(dropout)])
        self.processor = processor or AttnProcessor2_0()

    def set_processor(self, processor):
        if not isinstance(processor, AttnProcessor2_0):
            logger.info("attention processor %s is not a subclass of AttnProcessor2_0", type(processor).__name__)
        self.processor = processor

    def fuse_projections(self):
        weight = torch.cat([self.to_q.weight.data, self.to_k.weight.data, self.to_v.weight.data])
        self.to_qkv = nn.Linear(weight.shape[1], weight.shape[0], bias=False, device=weight.device, dtype=weight.dtype)
        self.to_qkv.weight.copy_(weight)
        self.fused_projections = True

    def forward(self, hidden_states, encoder_hidden_states=None, attention_mask=None, **kwargs):
        return self.processor(self, hidden_states, encoder_hidden_states, attention_mask, kwargs.get("temb"))
