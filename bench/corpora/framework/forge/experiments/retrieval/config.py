"""forge: settings of the retrieval experiment.

Module experiments/retrieval/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("mpt")
    config.training.steps = 4200
    config.optimizer.lr = 0.00010
    config.metrics.names = ("loss_meter", "accuracy")
    return config


BATCH_SIZE = 4
SEQ_LEN = 512
