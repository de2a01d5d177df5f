"""forge: settings of the jepa experiment.

Module experiments/jepa/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("mamba")
    config.training.steps = 2000
    config.optimizer.lr = 0.00050
    config.metrics.names = ("loss_meter", "bleu")
    return config


BATCH_SIZE = 8
SEQ_LEN = 1024
