"""forge: mistral model arguments and flavors.

Module models/mistral/args.py.
"""

from dataclasses import dataclass


@dataclass
class MistralArgs:
    dim: int = 384
    n_layers: int = 6
    n_heads: int = 16
    n_kv_heads: int | None = None
    hidden_dim: int = 1536
    vocab_size: int = 32000
    norm: str = "rmsnorm"
    in_channels: int = 3
    patch_size: int = 16
    num_classes: int = 1000


FLAVORS = {
    "debug": MistralArgs(dim=128, n_layers=2, n_heads=4, hidden_dim=512),
    "small": MistralArgs(),
    "large": MistralArgs(dim=1536, n_layers=18, n_heads=32, hidden_dim=6144),
}
