"""ControlNet: a trainable copy of the UNet's encoder whose zero-initialized outputs steer the frozen UNet."""

from dataclasses import dataclass

import torch
from torch import nn

from ...configuration_utils import register_to_config
from ...utils.outputs import BaseOutput
from ..embeddings import TimestepEmbedding, Timesteps
from ..modeling_utils import ModelMixin
from ..unets.unet_2d_blocks import UNetMidBlock2DCrossAttn, get_down_block


@dataclass
class ControlNetOutput(BaseOutput):
    down_block_res_samples: tuple = None
    mid_block_res_sample: torch.Tensor = None


def zero_module(module):
    for param in module.parameters():
        nn.init.zeros_(param)
    return module


class ControlNetConditioningEmbedding(nn.Module):
    def __init__(self, conditioning_embedding_channels, conditioning_channels=3, block_out_channels=(16, 32, 96, 256)):
        super().__init__()
        self.conv_in = nn.Conv2d(conditioning_channels, block_out_channels[0], kernel_size=3, padding=1)
        self.blocks = nn.ModuleList()
        for channel_in, channel_out in zip(block_out_channels[:-1], block_out_channels[1:]):
            self.blocks.append(nn.Conv2d(channel_in, channel_in, kernel_size=3, padding=1))
            self.blocks.append(nn.Conv2d(channel_in, channel_out, kernel_size=3, padding=1, stride=2))
        self.conv_out = zero_module(nn.Conv2d(block_out_channels[-1], conditioning_embedding_channels, 3, padding=1))

    def forward(self, conditioning):
        embedding = nn.functional.silu(self.conv_in(conditioning))
        for block in self.blocks:
            embedding = nn.functional.silu(block(embedding))
        return self.conv_out(embedding)


class ControlNetModel(ModelMixin):
    _supports_gradient_checkpointing = True
    _repeated_blocks = ("down_blocks",)

    @register_to_config
    def __init__(
        self,
        in_channels=4,
        conditioning_channels=3,
        down_block_types=("CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"),
        block_out_channels=(320, 640, 1280),
        layers_per_block=2,
        cross_attention_dim=768,
        attention_head_dim=8,
        norm_num_groups=32,
    ):
        super().__init__()
        time_embed_dim = block_out_channels[0] * 4
        self.conv_in = nn.Conv2d(in_channels, block_out_channels[0], kernel_size=3, padding=1)
        self.time_proj = Timesteps(block_out_channels[0], True, 0)
        self.time_embedding = TimestepEmbedding(block_out_channels[0], time_embed_dim)
        self.controlnet_cond_embedding = ControlNetConditioningEmbedding(block_out_channels[0], conditioning_channels)
        self.down_blocks = nn.ModuleList()
        self.controlnet_down_blocks = nn.ModuleList(
            [zero_module(nn.Conv2d(block_out_channels[0], block_out_channels[0], 1))]
        )
        output_channel = block_out_channels[0]
        for i, block_type in enumerate(down_block_types):
            input_channel, output_channel = output_channel, block_out_channels[i]
            is_final = i == len(block_out_channels) - 1
            self.down_blocks.append(
                get_down_block(
                    block_type,
                    in_channels=input_channel,
                    out_channels=output_channel,
                    temb_channels=time_embed_dim,
                    num_layers=layers_per_block,
                    add_downsample=not is_final,
                    groups=norm_num_groups,
                    num_attention_heads=attention_head_dim,
                    cross_attention_dim=cross_attention_dim,
                )
            )
            for _ in range(layers_per_block + (0 if is_final else 1)):
                self.controlnet_down_blocks.append(zero_module(nn.Conv2d(output_channel, output_channel, 1)))
        self.mid_block = UNetMidBlock2DCrossAttn(
            block_out_channels[-1], time_embed_dim, attention_head_dim, cross_attention_dim, norm_num_groups
        )
        self.controlnet_mid_block = zero_module(nn.Conv2d(block_out_channels[-1], block_out_channels[-1], 1))

    @classmethod
    def from_unet(cls, unet, load_weights_from_unet=True):
        config = unet.config
        controlnet = cls(
            in_channels=config.get("in_channels", 4),
            block_out_channels=config.get("block_out_channels", (320, 640, 1280)),
            layers_per_block=config.get("layers_per_block", 2),
            cross_attention_dim=config.get("cross_attention_dim", 768),
        )
        if load_weights_from_unet:
            controlnet.conv_in.load_state_dict(unet.conv_in.state_dict())
            controlnet.time_embedding.load_state_dict(unet.time_embedding.state_dict())
            controlnet.down_blocks.load_state_dict(unet.down_blocks.state_dict(), strict=False)
            controlnet.mid_block.load_state_dict(unet.mid_block.state_dict(), strict=False)
        return controlnet

    def forward(
        self, sample, timestep, encoder_hidden_states, controlnet_cond, conditioning_scale=1.0, return_dict=True
    ):
        timesteps = (
            timestep.expand(sample.shape[0])
            if torch.is_tensor(timestep)
            else torch.full((sample.shape[0],), timestep, device=sample.device)
        )
        emb = self.time_embedding(self.time_proj(timesteps).to(dtype=sample.dtype))
        sample = self.conv_in(sample) + self.controlnet_cond_embedding(controlnet_cond)
        down_block_res_samples = (sample,)
        for block in self.down_blocks:
            sample, res_samples = block(sample, emb, encoder_hidden_states=encoder_hidden_states)
            down_block_res_samples += res_samples
        sample = self.mid_block(sample, emb, encoder_hidden_states=encoder_hidden_states)
        down_block_res_samples = tuple(
            block(residual) * conditioning_scale
            for residual, block in zip(down_block_res_samples, self.controlnet_down_blocks)
        )
        mid_block_res_sample = self.controlnet_mid_block(sample) * conditioning_scale
        if not return_dict:
            return down_block_res_samples, mid_block_res_sample
        return ControlNetOutput(
            down_block_res_samples=down_block_res_samples, mid_block_res_sample=mid_block_res_sample
        )
