"""forge: vit model arguments and flavors.

Module models/vit/args.py.
"""

from dataclasses import dataclass


@dataclass
class VitArgs:
    dim: int = 384
    n_layers: int = 4
    n_heads: int = 16
    n_kv_heads: int | None = None
    hidden_dim: int = 1536
    vocab_size: int = 32000
    norm: str = "layernorm"
    in_channels: int = 3
    patch_size: int = 16
    num_classes: int = 1000


FLAVORS = {
    "debug": VitArgs(dim=128, n_layers=2, n_heads=4, hidden_dim=512),
    "small": VitArgs(),
    "large": VitArgs(dim=1536, n_layers=26, n_heads=32, hidden_dim=6144),
}
