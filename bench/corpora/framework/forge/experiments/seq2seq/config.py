"""forge: settings of the seq2seq experiment.

Module experiments/seq2seq/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("clip")
    config.training.steps = 2600
    config.optimizer.lr = 0.00030
    config.metrics.names = ("loss_meter", "precision_recall")
    return config


BATCH_SIZE = 4
SEQ_LEN = 512
