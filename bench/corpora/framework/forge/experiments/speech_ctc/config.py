"""forge: settings of the speech_ctc experiment.

Module experiments/speech_ctc/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("dit")
    config.training.steps = 2400
    config.optimizer.lr = 0.00020
    config.metrics.names = ("loss_meter", "f1")
    return config


BATCH_SIZE = 16
SEQ_LEN = 2048
