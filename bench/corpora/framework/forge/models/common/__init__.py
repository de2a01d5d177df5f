from forge.models.common.attention import Attention
from forge.models.common.block import TransformerBlock
from forge.models.common.embedding import PatchEmbedding, TokenEmbedding
from forge.models.common.mlp import FeedForward
from forge.models.common.norms import RMSNorm, build_norm
from forge.models.common.rope import RotaryEmbedding

__all__ = ["Attention", "FeedForward", "PatchEmbedding", "RMSNorm", "RotaryEmbedding", "TokenEmbedding", "TransformerBlock", "build_norm"]
