"""forge: the log_metrics callback.

Module train/callbacks/log_metrics.py.
"""

import torch

from forge.train.hooks import Callback
from forge.utils.logging import logger
class LogMetricsCallback(Callback):
    every = 1

    def run(self, trainer, loss):
        _prepare(loss)
        for name, metric in trainer.metrics.items():
            logger.info('%s %.4f', name, metric.compute())
