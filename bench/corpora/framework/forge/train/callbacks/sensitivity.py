"""forge: the sensitivity callback.

Module train/callbacks/sensitivity.py.
"""

import torch

from forge.train.hooks import Callback
from forge.utils.logging import logger
class SensitivityCallback(Callback):
    every = 50

    def run(self, trainer, loss):
        _prepare(loss)
        inputs, _ = next(iter(trainer.dataloader))
        logger.info('sensitivity %.4f', float(trainer.probe_sensitivity(inputs).abs().mean()))
