"""forge: gptj model arguments and flavors.

Module models/gptj/args.py.
"""

from dataclasses import dataclass


@dataclass
class GptjArgs:
    dim: int = 256
    n_layers: int = 7
    n_heads: int = 16
    n_kv_heads: int | None = None
    hidden_dim: int = 1024
    vocab_size: int = 32000
    norm: str = "rmsnorm"
    in_channels: int = 3
    patch_size: int = 16
    num_classes: int = 1000


FLAVORS = {
    "debug": GptjArgs(dim=128, n_layers=2, n_heads=4, hidden_dim=512),
    "small": GptjArgs(),
    "large": GptjArgs(dim=1024, n_layers=24, n_heads=32, hidden_dim=4096),
}
