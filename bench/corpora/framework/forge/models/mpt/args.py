"""forge: mpt model arguments and flavors.

Module models/mpt/args.py.
"""

from dataclasses import dataclass


@dataclass
class MptArgs:
    dim: int = 384
    n_layers: int = 5
    n_heads: int = 16
    n_kv_heads: int | None = 8
    hidden_dim: int = 1536
    vocab_size: int = 32000
    norm: str = "rmsnorm"
    in_channels: int = 3
    patch_size: int = 16
    num_classes: int = 1000


FLAVORS = {
    "debug": MptArgs(dim=128, n_layers=2, n_heads=4, hidden_dim=512),
    "small": MptArgs(),
    "large": MptArgs(dim=1536, n_layers=22, n_heads=32, hidden_dim=6144),
}
