"""forge: settings of the contrastive experiment.

Module experiments/contrastive/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("vit")
    config.training.steps = 2200
    config.optimizer.lr = 0.00010
    config.metrics.names = ("loss_meter", "rouge")
    return config


BATCH_SIZE = 12
SEQ_LEN = 1536
