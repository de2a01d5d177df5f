"""forge: settings of the diffusion experiment.

Module experiments/diffusion/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("bloom")
    config.training.steps = 4400
    config.optimizer.lr = 0.00020
    config.metrics.names = ("loss_meter", "top_k")
    return config


BATCH_SIZE = 8
SEQ_LEN = 1024
