"""forge: settings of the sparse_attn experiment.

Module experiments/sparse_attn/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("falcon")
    config.training.steps = 4000
    config.optimizer.lr = 0.00050
    config.metrics.names = ("loss_meter", "wer")
    return config


BATCH_SIZE = 16
SEQ_LEN = 2048
