"""forge: settings of the pinn experiment.

Module experiments/pinn/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("phi")
    config.training.steps = 1000
    config.optimizer.lr = 0.00050
    config.metrics.names = ("loss_meter", "throughput")
    return config


BATCH_SIZE = 4
SEQ_LEN = 512
