"""forge: gemma model arguments and flavors.

Module models/gemma/args.py.
"""

from dataclasses import dataclass


@dataclass
class GemmaArgs:
    dim: int = 448
    n_layers: int = 7
    n_heads: int = 8
    n_kv_heads: int | None = 4
    hidden_dim: int = 1792
    vocab_size: int = 32000
    norm: str = "rmsnorm"
    in_channels: int = 3
    patch_size: int = 16
    num_classes: int = 1000


FLAVORS = {
    "debug": GemmaArgs(dim=128, n_layers=2, n_heads=4, hidden_dim=512),
    "small": GemmaArgs(),
    "large": GemmaArgs(dim=1792, n_layers=19, n_heads=32, hidden_dim=7168),
}
