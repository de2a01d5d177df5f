"""forge: bloom model arguments and flavors.

Module models/bloom/args.py.
"""

from dataclasses import dataclass


@dataclass
class BloomArgs:
    dim: int = 448
    n_layers: int = 6
    n_heads: int = 8
    n_kv_heads: int | None = None
    hidden_dim: int = 1792
    vocab_size: int = 32000
    norm: str = "rmsnorm"
    in_channels: int = 3
    patch_size: int = 16
    num_classes: int = 1000


FLAVORS = {
    "debug": BloomArgs(dim=128, n_layers=2, n_heads=4, hidden_dim=512),
    "small": BloomArgs(),
    "large": BloomArgs(dim=1792, n_layers=23, n_heads=32, hidden_dim=7168),
}
