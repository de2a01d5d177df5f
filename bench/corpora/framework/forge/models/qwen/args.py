"""forge: qwen model arguments and flavors.

Module models/qwen/args.py.
"""

from dataclasses import dataclass


@dataclass
class QwenArgs:
    dim: int = 320
    n_layers: int = 5
    n_heads: int = 8
    n_kv_heads: int | None = None
    hidden_dim: int = 1280
    vocab_size: int = 32000
    norm: str = "rmsnorm"
    in_channels: int = 3
    patch_size: int = 16
    num_classes: int = 1000


FLAVORS = {
    "debug": QwenArgs(dim=128, n_layers=2, n_heads=4, hidden_dim=512),
    "small": QwenArgs(),
    "large": QwenArgs(dim=1280, n_layers=17, n_heads=32, hidden_dim=5120),
}
