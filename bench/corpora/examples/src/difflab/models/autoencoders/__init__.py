from .autoencoder_kl import AutoencoderKL, AutoencoderKLOutput
from .vq_model import VQModel

__all__ = ["AutoencoderKL", "AutoencoderKLOutput", "VQModel"]
