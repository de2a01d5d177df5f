"""forge: settings of the reward_model experiment.

Module experiments/reward_model/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("llama")
    config.training.steps = 3000
    config.optimizer.lr = 0.00050
    config.metrics.names = ("loss_meter", "auc")
    return config


BATCH_SIZE = 12
SEQ_LEN = 1536
