"""Encoder, decoder and the diagonal Gaussian of the variational autoencoders."""

import torch
from torch import nn

from ..resnet import Downsample2D, ResnetBlock2D, Upsample2D


class Encoder(nn.Module):
    def __init__(
        self,
        in_channels=3,
        out_channels=4,
        block_out_channels=(128, 256, 512, 512),
        layers_per_block=2,
        norm_num_groups=32,
        double_z=True,
    ):
        super().__init__()
        self.conv_in = nn.Conv2d(in_channels, block_out_channels[0], kernel_size=3, padding=1)
        blocks = []
        channels = block_out_channels[0]
        for i, out in enumerate(block_out_channels):
            for _ in range(layers_per_block):
                blocks.append(ResnetBlock2D(channels, out, temb_channels=None, groups=norm_num_groups))
                channels = out
            if i < len(block_out_channels) - 1:
                blocks.append(Downsample2D(channels, padding=0))
        self.down_blocks = nn.ModuleList(blocks)
        self.mid_block = ResnetBlock2D(channels, channels, temb_channels=None, groups=norm_num_groups)
        self.conv_norm_out = nn.GroupNorm(norm_num_groups, channels, eps=1e-6)
        self.conv_act = nn.SiLU()
        self.conv_out = nn.Conv2d(channels, 2 * out_channels if double_z else out_channels, 3, padding=1)
        self.gradient_checkpointing = False

    def forward(self, sample):
        sample = self.conv_in(sample)
        for block in self.down_blocks:
            sample = (
                block(sample) if not isinstance(block, Downsample2D) else block(nn.functional.pad(sample, (0, 1, 0, 1)))
            )
        sample = self.mid_block(sample)
        return self.conv_out(self.conv_act(self.conv_norm_out(sample)))


class Decoder(nn.Module):
    def __init__(
        self,
        in_channels=4,
        out_channels=3,
        block_out_channels=(128, 256, 512, 512),
        layers_per_block=2,
        norm_num_groups=32,
    ):
        super().__init__()
        channels = block_out_channels[-1]
        self.conv_in = nn.Conv2d(in_channels, channels, kernel_size=3, padding=1)
        self.mid_block = ResnetBlock2D(channels, channels, temb_channels=None, groups=norm_num_groups)
        blocks = []
        for i, out in enumerate(reversed(block_out_channels)):
            for _ in range(layers_per_block + 1):
                blocks.append(ResnetBlock2D(channels, out, temb_channels=None, groups=norm_num_groups))
                channels = out
            if i < len(block_out_channels) - 1:
                blocks.append(Upsample2D(channels))
        self.up_blocks = nn.ModuleList(blocks)
        self.conv_norm_out = nn.GroupNorm(norm_num_groups, channels, eps=1e-6)
        self.conv_act = nn.SiLU()
        self.conv_out = nn.Conv2d(channels, out_channels, 3, padding=1)

    def forward(self, z):
        sample = self.mid_block(self.conv_in(z))
        upscale_dtype = next(iter(self.up_blocks.parameters())).dtype
        sample = sample.to(upscale_dtype)
        for block in self.up_blocks:
            sample = block(sample)
        return self.conv_out(self.conv_act(self.conv_norm_out(sample)))


class DiagonalGaussianDistribution:
    def __init__(self, parameters, deterministic=False):
        self.parameters = parameters
        self.mean, self.logvar = torch.chunk(parameters, 2, dim=1)
        self.logvar = torch.clamp(self.logvar, -30.0, 20.0)
        self.deterministic = deterministic
        self.std = torch.exp(0.5 * self.logvar)
        self.var = torch.exp(self.logvar)
        if deterministic:
            self.var = self.std = torch.zeros_like(self.mean)

    def sample(self, generator=None):
        noise = torch.randn(
            self.mean.shape, generator=generator, device=self.parameters.device, dtype=self.parameters.dtype
        )
        return self.mean + self.std * noise

    def kl(self, other=None):
        if self.deterministic:
            return torch.tensor([0.0])
        if other is None:
            return 0.5 * torch.sum(self.mean.pow(2) + self.var - 1.0 - self.logvar, dim=[1, 2, 3])
        return 0.5 * torch.sum(
            (self.mean - other.mean).pow(2) / other.var + self.var / other.var - 1.0 - self.logvar + other.logvar,
            dim=[1, 2, 3],
        )

    def mode(self):
        return self.mean
