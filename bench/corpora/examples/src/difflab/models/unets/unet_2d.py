"""The unconditional pixel-space UNet (DDPM)."""

from dataclasses import dataclass

import torch
from torch import nn

from ...configuration_utils import register_to_config
from ...utils.outputs import BaseOutput
from ..embeddings import TimestepEmbedding, Timesteps
from ..modeling_utils import ModelMixin
from .unet_2d_blocks import get_down_block, get_up_block


@dataclass
class UNet2DOutput(BaseOutput):
    sample: torch.Tensor = None


class UNet2DModel(ModelMixin):
    _supports_gradient_checkpointing = True
    _repeated_blocks = ("down_blocks", "up_blocks")

    @register_to_config
    def __init__(
        self,
        sample_size=64,
        in_channels=3,
        out_channels=3,
        block_out_channels=(128, 256, 256, 512),
        layers_per_block=2,
        norm_num_groups=32,
        num_class_embeds=None,
    ):
        super().__init__()
        time_embed_dim = block_out_channels[0] * 4
        self.conv_in = nn.Conv2d(in_channels, block_out_channels[0], kernel_size=3, padding=1)
        self.time_proj = Timesteps(block_out_channels[0], True, 0)
        self.time_embedding = TimestepEmbedding(block_out_channels[0], time_embed_dim)
        self.class_embedding = nn.Embedding(num_class_embeds, time_embed_dim) if num_class_embeds else None
        self.down_blocks = nn.ModuleList()
        output_channel = block_out_channels[0]
        for i, channels in enumerate(block_out_channels):
            input_channel, output_channel = output_channel, channels
            self.down_blocks.append(
                get_down_block(
                    "DownBlock2D",
                    in_channels=input_channel,
                    out_channels=output_channel,
                    temb_channels=time_embed_dim,
                    num_layers=layers_per_block,
                    add_downsample=i < len(block_out_channels) - 1,
                    groups=norm_num_groups,
                )
            )
        self.up_blocks = nn.ModuleList()
        reversed_channels = list(reversed(block_out_channels))
        output_channel = reversed_channels[0]
        for i, channels in enumerate(reversed_channels):
            prev_output_channel, output_channel = output_channel, channels
            input_channel = reversed_channels[min(i + 1, len(block_out_channels) - 1)]
            self.up_blocks.append(
                get_up_block(
                    "UpBlock2D",
                    in_channels=input_channel,
                    prev_output_channel=prev_output_channel,
                    out_channels=output_channel,
                    temb_channels=time_embed_dim,
                    num_layers=layers_per_block + 1,
                    add_upsample=i < len(block_out_channels) - 1,
                    groups=norm_num_groups,
                )
            )
        self.conv_norm_out = nn.GroupNorm(norm_num_groups, block_out_channels[0], eps=1e-5)
        self.conv_act = nn.SiLU()
        self.conv_out = nn.Conv2d(block_out_channels[0], out_channels, kernel_size=3, padding=1)

    def forward(self, sample, timestep, class_labels=None, return_dict=True):
        timesteps = timestep if torch.is_tensor(timestep) else torch.tensor([timestep], device=sample.device)
        timesteps = timesteps * torch.ones(sample.shape[0], dtype=timesteps.dtype, device=timesteps.device)
        emb = self.time_embedding(self.time_proj(timesteps).to(dtype=self.dtype))
        if self.class_embedding is not None:
            if class_labels is None:
                raise ValueError("class_labels are required when the model has class embeddings")
            emb = emb + self.class_embedding(class_labels).to(dtype=self.dtype)
        skip = sample
        sample = self.conv_in(sample)
        down_block_res_samples = (sample,)
        for block in self.down_blocks:
            sample, res_samples = block(sample, emb)
            down_block_res_samples += res_samples
        for block in self.up_blocks:
            res_samples = down_block_res_samples[-len(block.resnets) :]
            down_block_res_samples = down_block_res_samples[: -len(block.resnets)]
            sample = block(sample, res_samples, emb)
        sample = self.conv_out(self.conv_act(self.conv_norm_out(sample)))
        if skip.shape == sample.shape and self.config.get("residual_input", False):
            sample = sample + skip
        if not return_dict:
            return (sample,)
        return UNet2DOutput(sample=sample)
