"""forge: the ema_update callback.

Module train/callbacks/ema_update.py.
"""

import torch

from forge.train.hooks import Callback
from forge.utils.logging import logger
class EmaUpdateCallback(Callback):
    every = 1

    def run(self, trainer, loss):
        _prepare(loss)
        trainer.state.losses.append(float(loss))
