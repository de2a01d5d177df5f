"""The vector-quantized autoencoder (VQ-GAN's generator)."""

from dataclasses import dataclass

import torch
from torch import nn

from ...configuration_utils import register_to_config
from ...utils.outputs import BaseOutput
from ..modeling_utils import ModelMixin
from .vae import Decoder, Encoder


@dataclass
class VQEncoderOutput(BaseOutput):
    latents: torch.Tensor = None


class VectorQuantizer(nn.Module):
    def __init__(self, n_e, vq_embed_dim, beta=0.25, legacy=True):
        super().__init__()
        self.n_e = n_e
        self.beta = beta
        self.legacy = legacy
        self.embedding = nn.Embedding(n_e, vq_embed_dim)
        self.embedding.weight.data.uniform_(-1.0 / n_e, 1.0 / n_e)

    def forward(self, z):
        z = z.permute(0, 2, 3, 1).contiguous()
        z_flattened = z.view(-1, z.shape[-1])
        min_encoding_indices = torch.argmin(torch.cdist(z_flattened, self.embedding.weight), dim=1)
        z_q = self.embedding(min_encoding_indices).view(z.shape)
        if self.legacy:
            loss = torch.mean((z_q.detach() - z) ** 2) + self.beta * torch.mean((z_q - z.detach()) ** 2)
        else:
            loss = self.beta * torch.mean((z_q.detach() - z) ** 2) + torch.mean((z_q - z.detach()) ** 2)
        z_q = z + (z_q - z).detach()  # straight-through estimator
        return z_q.permute(0, 3, 1, 2).contiguous(), loss, min_encoding_indices


class VQModel(ModelMixin):
    @register_to_config
    def __init__(
        self,
        in_channels=3,
        out_channels=3,
        block_out_channels=(64,),
        layers_per_block=1,
        latent_channels=3,
        num_vq_embeddings=256,
        vq_embed_dim=None,
        norm_num_groups=32,
    ):
        super().__init__()
        vq_embed_dim = vq_embed_dim or latent_channels
        self.encoder = Encoder(
            in_channels, latent_channels, block_out_channels, layers_per_block, norm_num_groups, double_z=False
        )
        self.quant_conv = nn.Conv2d(latent_channels, vq_embed_dim, 1)
        self.quantize = VectorQuantizer(num_vq_embeddings, vq_embed_dim)
        self.post_quant_conv = nn.Conv2d(vq_embed_dim, latent_channels, 1)
        self.decoder = Decoder(latent_channels, out_channels, block_out_channels, layers_per_block, norm_num_groups)

    def encode(self, x, return_dict=True):
        h = self.quant_conv(self.encoder(x))
        if not return_dict:
            return (h,)
        return VQEncoderOutput(latents=h)

    def decode(self, h, force_not_quantize=False):
        quant, commit_loss, _ = self.quantize(h) if not force_not_quantize else (h, torch.zeros(()), None)
        return self.decoder(self.post_quant_conv(quant)), commit_loss

    def forward(self, sample, return_dict=True):
        dec, commit_loss = self.decode(self.encode(sample).latents)
        if not return_dict:
            return dec, commit_loss
        return dec, commit_loss
