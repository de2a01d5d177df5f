"""forge: settings of the vit_pretrain experiment.

Module experiments/vit_pretrain/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("mpt")
    config.training.steps = 1400
    config.optimizer.lr = 0.00020
    config.metrics.names = ("loss_meter", "grad_norm")
    return config


BATCH_SIZE = 12
SEQ_LEN = 1536
