"""The conditional UNet of latent text-to-image models."""

from dataclasses import dataclass

import torch
from torch import nn

from ...configuration_utils import register_to_config
from ...utils.outputs import BaseOutput
from ..embeddings import TimestepEmbedding, Timesteps
from ..modeling_utils import ModelMixin
from .unet_2d_blocks import UNetMidBlock2DCrossAttn, get_down_block, get_up_block


@dataclass
class UNet2DConditionOutput(BaseOutput):
    sample: torch.Tensor = None


class UNet2DConditionModel(ModelMixin):
    _supports_gradient_checkpointing = True
    _repeated_blocks = ("down_blocks", "up_blocks")

    @register_to_config
    def __init__(
        self,
        sample_size=64,
        in_channels=4,
        out_channels=4,
        down_block_types=("CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"),
        block_out_channels=(320, 640, 1280),
        layers_per_block=2,
        cross_attention_dim=768,
        attention_head_dim=8,
        norm_num_groups=32,
        time_cond_proj_dim=None,
        addition_embed_dim=None,
    ):
        super().__init__()
        self.sample_size = sample_size
        time_embed_dim = block_out_channels[0] * 4
        self.conv_in = nn.Conv2d(in_channels, block_out_channels[0], kernel_size=3, padding=1)
        self.time_proj = Timesteps(block_out_channels[0], True, 0)
        self.time_embedding = TimestepEmbedding(block_out_channels[0], time_embed_dim, cond_proj_dim=time_cond_proj_dim)
        self.add_embedding = TimestepEmbedding(addition_embed_dim, time_embed_dim) if addition_embed_dim else None
        self.down_blocks = nn.ModuleList()
        output_channel = block_out_channels[0]
        for i, block_type in enumerate(down_block_types):
            input_channel = output_channel
            output_channel = block_out_channels[i]
            self.down_blocks.append(
                get_down_block(
                    block_type,
                    in_channels=input_channel,
                    out_channels=output_channel,
                    temb_channels=time_embed_dim,
                    num_layers=layers_per_block,
                    add_downsample=i < len(block_out_channels) - 1,
                    groups=norm_num_groups,
                    num_attention_heads=attention_head_dim,
                    cross_attention_dim=cross_attention_dim,
                )
            )
        self.mid_block = UNetMidBlock2DCrossAttn(
            block_out_channels[-1], time_embed_dim, attention_head_dim, cross_attention_dim, norm_num_groups
        )
        self.up_blocks = nn.ModuleList()
        reversed_channels = list(reversed(block_out_channels))
        output_channel = reversed_channels[0]
        for i, block_type in enumerate(up_block_types):
            prev_output_channel = output_channel
            output_channel = reversed_channels[i]
            input_channel = reversed_channels[min(i + 1, len(block_out_channels) - 1)]
            self.up_blocks.append(
                get_up_block(
                    block_type,
                    in_channels=input_channel,
                    prev_output_channel=prev_output_channel,
                    out_channels=output_channel,
                    temb_channels=time_embed_dim,
                    num_layers=layers_per_block + 1,
                    add_upsample=i < len(block_out_channels) - 1,
                    groups=norm_num_groups,
                    num_attention_heads=attention_head_dim,
                    cross_attention_dim=cross_attention_dim,
                )
            )
        self.conv_norm_out = nn.GroupNorm(norm_num_groups, block_out_channels[0], eps=1e-5)
        self.conv_act = nn.SiLU()
        self.conv_out = nn.Conv2d(block_out_channels[0], out_channels, kernel_size=3, padding=1)

    def get_time_embed(self, sample, timestep):
        timesteps = timestep
        if not torch.is_tensor(timesteps):
            dtype = torch.float32 if isinstance(timestep, float) else torch.int64
            timesteps = torch.tensor([timesteps], dtype=dtype, device=sample.device)
        elif timesteps.dim() == 0:
            timesteps = timesteps[None].to(sample.device)
        timesteps = timesteps.expand(sample.shape[0])
        # The projection has no weights and returns float32: cast to the model's dtype for fp16 runs.
        return self.time_proj(timesteps).to(dtype=sample.dtype)

    def forward(
        self,
        sample,
        timestep,
        encoder_hidden_states,
        timestep_cond=None,
        added_cond_kwargs=None,
        down_block_additional_residuals=None,
        mid_block_additional_residual=None,
        return_dict=True,
    ):
        t_emb = self.get_time_embed(sample, timestep)
        emb = self.time_embedding(t_emb, timestep_cond)
        if self.add_embedding is not None and added_cond_kwargs is not None:
            emb = emb + self.add_embedding(added_cond_kwargs["text_embeds"])
        sample = self.conv_in(sample)
        down_block_res_samples = (sample,)
        for block in self.down_blocks:
            sample, res_samples = block(sample, emb, encoder_hidden_states=encoder_hidden_states)
            down_block_res_samples += res_samples
        if down_block_additional_residuals is not None:
            down_block_res_samples = tuple(
                r + extra for r, extra in zip(down_block_res_samples, down_block_additional_residuals)
            )
        sample = self.mid_block(sample, emb, encoder_hidden_states=encoder_hidden_states)
        if mid_block_additional_residual is not None:
            sample = sample + mid_block_additional_residual
        for block in self.up_blocks:
            res_samples = down_block_res_samples[-len(block.resnets) :]
            down_block_res_samples = down_block_res_samples[: -len(block.resnets)]
            sample = block(sample, res_samples, emb, encoder_hidden_states=encoder_hidden_states)
        sample = self.conv_out(self.conv_act(self.conv_norm_out(sample)))
        if not return_dict:
            return (sample,)
        return UNet2DConditionOutput(sample=sample)
