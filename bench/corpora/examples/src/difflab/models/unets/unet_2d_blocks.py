"""Down, mid and up blocks of the UNets, with and without cross-attention."""

import torch
from torch import nn

from ..resnet import Downsample2D, ResnetBlock2D, Upsample2D
from ..transformers.transformer_2d import Transformer2DModel


class DownBlock2D(nn.Module):
    def __init__(self, in_channels, out_channels, temb_channels, num_layers=2, add_downsample=True, groups=32):
        super().__init__()
        self.resnets = nn.ModuleList(
            [
                ResnetBlock2D(in_channels if i == 0 else out_channels, out_channels, temb_channels, groups=groups)
                for i in range(num_layers)
            ]
        )
        self.downsamplers = nn.ModuleList([Downsample2D(out_channels)]) if add_downsample else None
        self.gradient_checkpointing = False

    def forward(self, hidden_states, temb=None, encoder_hidden_states=None):
        output_states = ()
        for resnet in self.resnets:
            hidden_states = resnet(hidden_states, temb)
            output_states += (hidden_states,)
        if self.downsamplers is not None:
            for downsampler in self.downsamplers:
                hidden_states = downsampler(hidden_states)
            output_states += (hidden_states,)
        return hidden_states, output_states


class CrossAttnDownBlock2D(DownBlock2D):
    def __init__(
        self,
        in_channels,
        out_channels,
        temb_channels,
        num_layers=2,
        add_downsample=True,
        groups=32,
        num_attention_heads=8,
        cross_attention_dim=768,
    ):
        super().__init__(in_channels, out_channels, temb_channels, num_layers, add_downsample, groups)
        self.attentions = nn.ModuleList(
            [
                Transformer2DModel(
                    num_attention_heads,
                    out_channels // num_attention_heads,
                    out_channels,
                    cross_attention_dim=cross_attention_dim,
                    norm_num_groups=groups,
                )
                for _ in range(num_layers)
            ]
        )

    def forward(self, hidden_states, temb=None, encoder_hidden_states=None):
        output_states = ()
        for resnet, attn in zip(self.resnets, self.attentions):
            hidden_states = resnet(hidden_states, temb)
            hidden_states = attn(hidden_states, encoder_hidden_states=encoder_hidden_states).sample
            output_states += (hidden_states,)
        if self.downsamplers is not None:
            for downsampler in self.downsamplers:
                hidden_states = downsampler(hidden_states)
            output_states += (hidden_states,)
        return hidden_states, output_states


class UNetMidBlock2DCrossAttn(nn.Module):
    def __init__(self, in_channels, temb_channels, num_attention_heads=8, cross_attention_dim=768, groups=32):
        super().__init__()
        self.resnets = nn.ModuleList(
            [ResnetBlock2D(in_channels, in_channels, temb_channels, groups=groups) for _ in range(2)]
        )
        self.attentions = nn.ModuleList(
            [
                Transformer2DModel(
                    num_attention_heads,
                    in_channels // num_attention_heads,
                    in_channels,
                    cross_attention_dim=cross_attention_dim,
                    norm_num_groups=groups,
                )
            ]
        )

    def forward(self, hidden_states, temb=None, encoder_hidden_states=None):
        hidden_states = self.resnets[0](hidden_states, temb)
        for attn, resnet in zip(self.attentions, self.resnets[1:]):
            hidden_states = attn(hidden_states, encoder_hidden_states=encoder_hidden_states).sample
            hidden_states = resnet(hidden_states, temb)
        return hidden_states


class UpBlock2D(nn.Module):
    def __init__(
        self, in_channels, prev_output_channel, out_channels, temb_channels, num_layers=3, add_upsample=True, groups=32
    ):
        super().__init__()
        resnets = []
        for i in range(num_layers):
            skip = in_channels if i == num_layers - 1 else out_channels
            resnet_in = prev_output_channel if i == 0 else out_channels
            resnets.append(ResnetBlock2D(resnet_in + skip, out_channels, temb_channels, groups=groups))
        self.resnets = nn.ModuleList(resnets)
        self.upsamplers = nn.ModuleList([Upsample2D(out_channels)]) if add_upsample else None

    def forward(self, hidden_states, res_hidden_states_tuple, temb=None, encoder_hidden_states=None):
        for resnet in self.resnets:
            res_hidden_states = res_hidden_states_tuple[-1]
            res_hidden_states_tuple = res_hidden_states_tuple[:-1]
            hidden_states = torch.cat([hidden_states, res_hidden_states], dim=1)
            hidden_states = resnet(hidden_states, temb)
        if self.upsamplers is not None:
            for upsampler in self.upsamplers:
                hidden_states = upsampler(hidden_states)
        return hidden_states


class CrossAttnUpBlock2D(UpBlock2D):
    def __init__(
        self,
        in_channels,
        prev_output_channel,
        out_channels,
        temb_channels,
        num_layers=3,
        add_upsample=True,
        groups=32,
        num_attention_heads=8,
        cross_attention_dim=768,
    ):
        super().__init__(
            in_channels, prev_output_channel, out_channels, temb_channels, num_layers, add_upsample, groups
        )
        self.attentions = nn.ModuleList(
            [
                Transformer2DModel(
                    num_attention_heads,
                    out_channels // num_attention_heads,
                    out_channels,
                    cross_attention_dim=cross_attention_dim,
                    norm_num_groups=groups,
                )
                for _ in range(num_layers)
            ]
        )

    def forward(self, hidden_states, res_hidden_states_tuple, temb=None, encoder_hidden_states=None):
        for resnet, attn in zip(self.resnets, self.attentions):
            res_hidden_states = res_hidden_states_tuple[-1]
            res_hidden_states_tuple = res_hidden_states_tuple[:-1]
            hidden_states = torch.cat([hidden_states, res_hidden_states], dim=1)
            hidden_states = resnet(hidden_states, temb)
            hidden_states = attn(hidden_states, encoder_hidden_states=encoder_hidden_states).sample
        if self.upsamplers is not None:
            for upsampler in self.upsamplers:
                hidden_states = upsampler(hidden_states)
        return hidden_states


DOWN_BLOCKS = {"DownBlock2D": DownBlock2D, "CrossAttnDownBlock2D": CrossAttnDownBlock2D}
UP_BLOCKS = {"UpBlock2D": UpBlock2D, "CrossAttnUpBlock2D": CrossAttnUpBlock2D}


def get_down_block(name, **kwargs):
    if name not in DOWN_BLOCKS:
        raise ValueError(f"{name} does not exist")
    if name == "DownBlock2D":
        kwargs.pop("num_attention_heads", None)
        kwargs.pop("cross_attention_dim", None)
    return DOWN_BLOCKS[name](**kwargs)


def get_up_block(name, **kwargs):
    if name not in UP_BLOCKS:
        raise ValueError(f"{name} does not exist")
    if name == "UpBlock2D":
        kwargs.pop("num_attention_heads", None)
        kwargs.pop("cross_attention_dim", None)
    return UP_BLOCKS[name](**kwargs)
