"""forge: settings of the moe_sweep experiment.

Module experiments/moe_sweep/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("qwen")
    config.training.steps = 400
    config.optimizer.lr = 0.00020
    config.metrics.names = ("loss_meter", "top_k")
    return config


BATCH_SIZE = 8
SEQ_LEN = 1024
