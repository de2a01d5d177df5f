"""forge: clip model arguments and flavors.

Module models/clip/args.py.
"""

from dataclasses import dataclass


@dataclass
class ClipArgs:
    dim: int = 256
    n_layers: int = 6
    n_heads: int = 16
    n_kv_heads: int | None = 8
    hidden_dim: int = 1024
    vocab_size: int = 32000
    norm: str = "layernorm"
    in_channels: int = 3
    patch_size: int = 16
    num_classes: int = 1000


FLAVORS = {
    "debug": ClipArgs(dim=128, n_layers=2, n_heads=4, hidden_dim=512),
    "small": ClipArgs(),
    "large": ClipArgs(dim=1024, n_layers=28, n_heads=32, hidden_dim=4096),
}
