"""forge: the lr_monitor callback.

Module train/callbacks/lr_monitor.py.
"""

import torch

from forge.train.hooks import Callback
from forge.utils.logging import logger
class LrMonitorCallback(Callback):
    every = 100

    def run(self, trainer, loss):
        _prepare(loss)
        logger.info('lr %.6f', trainer.lr_scheduler.get_last_lr()[0])
