"""forge: settings of the sft_chat experiment.

Module experiments/sft_chat/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("whisper")
    config.training.steps = 2800
    config.optimizer.lr = 0.00040
    config.metrics.names = ("loss_meter", "calibration")
    return config


BATCH_SIZE = 8
SEQ_LEN = 1024
