"""forge: settings of the fwd_grad experiment.

Module experiments/fwd_grad/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("falcon")
    config.training.steps = 1200
    config.optimizer.lr = 0.00010
    config.metrics.names = ("loss_meter", "mfu")
    return config


BATCH_SIZE = 8
SEQ_LEN = 1024
