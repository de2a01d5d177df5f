"""forge: the throughput callback.

Module train/callbacks/throughput.py.
"""

import torch

from forge.train.hooks import Callback
from forge.utils.logging import logger
class ThroughputCallback(Callback):
    every = 100

    def run(self, trainer, loss):
        _prepare(loss)
        trainer.metrics['throughput'].update(trainer.job_config.training.batch_size)
