"""forge: the nan_guard callback.

Module train/callbacks/nan_guard.py.
"""

import torch

from forge.train.hooks import Callback
from forge.utils.logging import logger
class NanGuardCallback(Callback):
    every = 10

    def run(self, trainer, loss):
        _prepare(loss)
        if not torch.isfinite(loss):
            raise FloatingPointError(f'loss is {loss} at step {trainer.state.step}')
