"""forge: settings of the dpo experiment.

Module experiments/dpo/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("qwen")
    config.training.steps = 3200
    config.optimizer.lr = 0.00010
    config.metrics.names = ("loss_meter", "confusion")
    return config


BATCH_SIZE = 16
SEQ_LEN = 2048
