"""forge: settings of the dino experiment.

Module experiments/dino/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("gptj")
    config.training.steps = 1800
    config.optimizer.lr = 0.00040
    config.metrics.names = ("loss_meter", "token_count")
    return config


BATCH_SIZE = 4
SEQ_LEN = 512
