"""forge: settings of the mae experiment.

Module experiments/mae/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("bloom")
    config.training.steps = 1600
    config.optimizer.lr = 0.00030
    config.metrics.names = ("loss_meter", "param_norm")
    return config


BATCH_SIZE = 16
SEQ_LEN = 2048
