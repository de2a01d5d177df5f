"""forge: settings of the lora_ft experiment.

Module experiments/lora_ft/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("mistral")
    config.training.steps = 600
    config.optimizer.lr = 0.00030
    config.metrics.names = ("loss_meter", "perplexity")
    return config


BATCH_SIZE = 12
SEQ_LEN = 1536
