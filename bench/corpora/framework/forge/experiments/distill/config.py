"""forge: settings of the distill experiment.

Module experiments/distill/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("gemma")
    config.training.steps = 800
    config.optimizer.lr = 0.00040
    config.metrics.names = ("loss_meter", "loss_meter")
    return config


BATCH_SIZE = 16
SEQ_LEN = 2048
