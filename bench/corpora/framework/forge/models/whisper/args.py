"""forge: whisper model arguments and flavors.

Module models/whisper/args.py.
"""

from dataclasses import dataclass


@dataclass
class WhisperArgs:
    dim: int = 320
    n_layers: int = 7
    n_heads: int = 8
    n_kv_heads: int | None = None
    hidden_dim: int = 1280
    vocab_size: int = 32000
    norm: str = "layernorm"
    in_channels: int = 3
    patch_size: int = 16
    num_classes: int = 1000


FLAVORS = {
    "debug": WhisperArgs(dim=128, n_layers=2, n_heads=4, hidden_dim=512),
    "small": WhisperArgs(),
    "large": WhisperArgs(dim=1280, n_layers=29, n_heads=32, hidden_dim=5120),
}
