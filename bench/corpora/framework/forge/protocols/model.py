"""forge: what a model of the framework provides.

Module protocols/model.py.
"""

from typing import Protocol

import torch


class ModelProtocol(Protocol):
    def init_weights(self, buffer_device: torch.device | None = None) -> None: ...

    def forward(self, tokens: torch.Tensor) -> torch.Tensor: ...
