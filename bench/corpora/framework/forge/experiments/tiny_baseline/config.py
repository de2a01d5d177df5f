"""forge: settings of the tiny_baseline experiment.

Module experiments/tiny_baseline/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("mamba")
    config.training.steps = 4800
    config.optimizer.lr = 0.00040
    config.metrics.names = ("loss_meter", "loss_meter")
    return config


BATCH_SIZE = 16
SEQ_LEN = 2048
