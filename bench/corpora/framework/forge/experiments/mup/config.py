"""forge: settings of the mup experiment.

Module experiments/mup/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("gemma")
    config.training.steps = 3600
    config.optimizer.lr = 0.00030
    config.metrics.names = ("loss_meter", "psnr")
    return config


BATCH_SIZE = 8
SEQ_LEN = 1024
