"""forge: the save_checkpoint callback.

Module train/callbacks/save_checkpoint.py.
"""

import torch

from forge.train.hooks import Callback
from forge.utils.logging import logger
class SaveCheckpointCallback(Callback):
    every = 10

    def run(self, trainer, loss):
        _prepare(loss)
        trainer.checkpointer.save(trainer.state.step)
