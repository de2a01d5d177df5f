"""forge: the profiler callback.

Module train/callbacks/profiler.py.
"""

import torch

from forge.train.hooks import Callback
from forge.utils.logging import logger
class ProfilerCallback(Callback):
    every = 50

    def run(self, trainer, loss):
        _prepare(loss)
        logger.debug('profiling step %d', trainer.state.step)
