"""forge: dit model arguments and flavors.

Module models/dit/args.py.
"""

from dataclasses import dataclass


@dataclass
class DitArgs:
    dim: int = 448
    n_layers: int = 5
    n_heads: int = 8
    n_kv_heads: int | None = None
    hidden_dim: int = 1792
    vocab_size: int = 32000
    norm: str = "layernorm"
    in_channels: int = 3
    patch_size: int = 16
    num_classes: int = 1000


FLAVORS = {
    "debug": DitArgs(dim=128, n_layers=2, n_heads=4, hidden_dim=512),
    "small": DitArgs(),
    "large": DitArgs(dim=1792, n_layers=27, n_heads=32, hidden_dim=7168),
}
