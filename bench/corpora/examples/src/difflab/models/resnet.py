"""Residual blocks and resampling layers of the convolutional backbones."""

import torch
import torch.nn.functional as F
from torch import nn

from .activations import get_activation
from .normalization import AdaGroupNorm


class Downsample2D(nn.Module):
    def __init__(self, channels, use_conv=True, out_channels=None, padding=1):
        super().__init__()
        out_channels = out_channels or channels
        if use_conv:
            self.conv = nn.Conv2d(channels, out_channels, 3, stride=2, padding=padding)
        else:
            self.conv = nn.AvgPool2d(kernel_size=2, stride=2)

    def forward(self, hidden_states):
        return self.conv(hidden_states)


class Upsample2D(nn.Module):
    def __init__(self, channels, use_conv=True, out_channels=None, interpolate=True):
        super().__init__()
        self.interpolate = interpolate
        self.conv = nn.Conv2d(channels, out_channels or channels, 3, padding=1) if use_conv else None

    def forward(self, hidden_states, output_size=None):
        dtype = hidden_states.dtype
        if dtype == torch.bfloat16:
            # upsample_nearest2d has no bfloat16 kernel on some devices
            hidden_states = hidden_states.to(torch.float32)
        if self.interpolate:
            if output_size is None:
                hidden_states = F.interpolate(hidden_states, scale_factor=2.0, mode="nearest")
            else:
                hidden_states = F.interpolate(hidden_states, size=output_size, mode="nearest")
        if dtype == torch.bfloat16:
            hidden_states = hidden_states.to(dtype)
        if self.conv is not None:
            hidden_states = self.conv(hidden_states)
        return hidden_states


class ResnetBlock2D(nn.Module):
    def __init__(
        self,
        in_channels,
        out_channels=None,
        temb_channels=512,
        groups=32,
        eps=1e-6,
        dropout=0.0,
        non_linearity="swish",
        time_embedding_norm="default",
        output_scale_factor=1.0,
    ):
        super().__init__()
        out_channels = out_channels or in_channels
        self.time_embedding_norm = time_embedding_norm
        self.output_scale_factor = output_scale_factor
        if time_embedding_norm == "ada_group":
            self.norm1 = AdaGroupNorm(temb_channels, in_channels, groups, eps=eps)
        else:
            self.norm1 = nn.GroupNorm(groups, in_channels, eps=eps, affine=True)
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=1, padding=1)
        if temb_channels is None or time_embedding_norm == "ada_group":
            self.time_emb_proj = None
        elif time_embedding_norm == "scale_shift":
            self.time_emb_proj = nn.Linear(temb_channels, 2 * out_channels)
        else:
            self.time_emb_proj = nn.Linear(temb_channels, out_channels)
        self.norm2 = nn.GroupNorm(groups, out_channels, eps=eps, affine=True)
        self.dropout = nn.Dropout(dropout)
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=3, stride=1, padding=1)
        self.nonlinearity = get_activation(non_linearity)
        self.conv_shortcut = (
            nn.Conv2d(in_channels, out_channels, kernel_size=1) if in_channels != out_channels else None
        )

    def forward(self, input_tensor, temb=None):
        hidden_states = input_tensor
        if self.time_embedding_norm == "ada_group":
            hidden_states = self.norm1(hidden_states, temb)
        else:
            hidden_states = self.norm1(hidden_states)
        hidden_states = self.conv1(self.nonlinearity(hidden_states))
        if self.time_emb_proj is not None and temb is not None:
            temb = self.time_emb_proj(self.nonlinearity(temb))[:, :, None, None]
            if self.time_embedding_norm == "scale_shift":
                scale, shift = torch.chunk(temb, 2, dim=1)
                hidden_states = self.norm2(hidden_states) * (1 + scale) + shift
            else:
                hidden_states = self.norm2(hidden_states + temb)
        else:
            hidden_states = self.norm2(hidden_states)
        hidden_states = self.conv2(self.dropout(self.nonlinearity(hidden_states)))
        if self.conv_shortcut is not None:
            input_tensor = self.conv_shortcut(input_tensor)
        return (input_tensor + hidden_states) / self.output_scale_factor
