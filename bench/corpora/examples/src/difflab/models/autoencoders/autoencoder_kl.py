"""The KL-regularized autoencoder of latent diffusion, with sliced and tiled decoding for large images."""

from dataclasses import dataclass

import torch
from torch import nn

from ...configuration_utils import register_to_config
from ...utils.outputs import BaseOutput
from ..modeling_utils import ModelMixin
from .vae import Decoder, DiagonalGaussianDistribution, Encoder


@dataclass
class AutoencoderKLOutput(BaseOutput):
    latent_dist: DiagonalGaussianDistribution = None


@dataclass
class DecoderOutput(BaseOutput):
    sample: torch.Tensor = None


class AutoencoderKL(ModelMixin):
    _supports_gradient_checkpointing = True

    @register_to_config
    def __init__(
        self,
        in_channels=3,
        out_channels=3,
        block_out_channels=(128, 256, 512, 512),
        layers_per_block=2,
        latent_channels=4,
        norm_num_groups=32,
        scaling_factor=0.18215,
        shift_factor=None,
    ):
        super().__init__()
        self.encoder = Encoder(in_channels, latent_channels, block_out_channels, layers_per_block, norm_num_groups)
        self.decoder = Decoder(latent_channels, out_channels, block_out_channels, layers_per_block, norm_num_groups)
        self.quant_conv = nn.Conv2d(2 * latent_channels, 2 * latent_channels, 1)
        self.post_quant_conv = nn.Conv2d(latent_channels, latent_channels, 1)
        self.use_slicing = False
        self.use_tiling = False
        self.tile_sample_min_size = 512

    def enable_slicing(self):
        self.use_slicing = True

    def enable_tiling(self, use_tiling=True):
        self.use_tiling = use_tiling

    def encode(self, x, return_dict=True):
        if self.use_slicing and x.shape[0] > 1:
            h = torch.cat([self.encoder(x_slice) for x_slice in x.split(1)])
        else:
            h = self.encoder(x)
        posterior = DiagonalGaussianDistribution(self.quant_conv(h))
        if not return_dict:
            return (posterior,)
        return AutoencoderKLOutput(latent_dist=posterior)

    def _decode(self, z):
        if self.use_tiling and (z.shape[-1] * 8 > self.tile_sample_min_size):
            return self.tiled_decode(z)
        return self.decoder(self.post_quant_conv(z))

    def tiled_decode(self, z, overlap=0.25):
        tile = self.tile_sample_min_size // 8
        stride = int(tile * (1 - overlap))
        rows = []
        for i in range(0, z.shape[2], stride):
            row = []
            for j in range(0, z.shape[3], stride):
                row.append(self.decoder(self.post_quant_conv(z[:, :, i : i + tile, j : j + tile])))
            rows.append(torch.cat(row, dim=3))
        return torch.cat(rows, dim=2)

    def decode(self, z, return_dict=True, generator=None):
        if self.use_slicing and z.shape[0] > 1:
            decoded = torch.cat([self._decode(z_slice) for z_slice in z.split(1)])
        else:
            decoded = self._decode(z)
        if not return_dict:
            return (decoded,)
        return DecoderOutput(sample=decoded)

    def forward(self, sample, sample_posterior=False, return_dict=True, generator=None):
        posterior = self.encode(sample).latent_dist
        z = posterior.sample(generator=generator) if sample_posterior else posterior.mode()
        return self.decode(z, return_dict=return_dict)
