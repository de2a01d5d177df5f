from .dit_transformer_2d import DiTTransformer2DModel
from .transformer_2d import Transformer2DModel, Transformer2DModelOutput
from .transformer_flux import FluxTransformer2DModel

__all__ = ["DiTTransformer2DModel", "FluxTransformer2DModel", "Transformer2DModel", "Transformer2DModelOutput"]
