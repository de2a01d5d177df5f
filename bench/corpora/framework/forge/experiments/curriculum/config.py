"""forge: settings of the curriculum experiment.

Module experiments/curriculum/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("mistral")
    config.training.steps = 3400
    config.optimizer.lr = 0.00020
    config.metrics.names = ("loss_meter", "iou")
    return config


BATCH_SIZE = 4
SEQ_LEN = 512
