"""forge: settings of the long_context experiment.

Module experiments/long_context/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("llama")
    config.training.steps = 200
    config.optimizer.lr = 0.00010
    config.metrics.names = ("loss_meter", "accuracy")
    return config


BATCH_SIZE = 4
SEQ_LEN = 512
