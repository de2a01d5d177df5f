"""forge: settings of the low_precision experiment.

Module experiments/low_precision/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("phi")
    config.training.steps = 3800
    config.optimizer.lr = 0.00040
    config.metrics.names = ("loss_meter", "ssim")
    return config


BATCH_SIZE = 12
SEQ_LEN = 1536
