from .autoencoders import AutoencoderKL, VQModel
from .controlnets import ControlNetModel
from .modeling_utils import ModelMixin
from .transformers import DiTTransformer2DModel, FluxTransformer2DModel, Transformer2DModel
from .unets import UNet2DConditionModel, UNet2DModel

__all__ = [
    "AutoencoderKL",
    "ControlNetModel",
    "DiTTransformer2DModel",
    "FluxTransformer2DModel",
    "ModelMixin",
    "Transformer2DModel",
    "UNet2DConditionModel",
    "UNet2DModel",
    "VQModel",
]
