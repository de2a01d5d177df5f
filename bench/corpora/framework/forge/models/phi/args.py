"""forge: phi model arguments and flavors.

Module models/phi/args.py.
"""

from dataclasses import dataclass


@dataclass
class PhiArgs:
    dim: int = 256
    n_layers: int = 8
    n_heads: int = 16
    n_kv_heads: int | None = None
    hidden_dim: int = 1024
    vocab_size: int = 32000
    norm: str = "rmsnorm"
    in_channels: int = 3
    patch_size: int = 16
    num_classes: int = 1000


FLAVORS = {
    "debug": PhiArgs(dim=128, n_layers=2, n_heads=4, hidden_dim=512),
    "small": PhiArgs(),
    "large": PhiArgs(dim=1024, n_layers=20, n_heads=32, hidden_dim=4096),
}
