"""forge: mamba model arguments and flavors.

Module models/mamba/args.py.
"""

from dataclasses import dataclass


@dataclass
class MambaArgs:
    dim: int = 320
    n_layers: int = 8
    n_heads: int = 8
    n_kv_heads: int | None = 4
    hidden_dim: int = 1280
    vocab_size: int = 32000
    norm: str = "rmsnorm"
    in_channels: int = 3
    patch_size: int = 16
    num_classes: int = 1000


FLAVORS = {
    "debug": MambaArgs(dim=128, n_layers=2, n_heads=4, hidden_dim=512),
    "small": MambaArgs(),
    "large": MambaArgs(dim=1280, n_layers=25, n_heads=32, hidden_dim=5120),
}
