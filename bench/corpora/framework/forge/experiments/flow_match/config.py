"""forge: settings of the flow_match experiment.

Module experiments/flow_match/config.py.
"""

from forge.config.presets import preset


def experiment_config():
    config = preset("gptj")
    config.training.steps = 4600
    config.optimizer.lr = 0.00030
    config.metrics.names = ("loss_meter", "perplexity")
    return config


BATCH_SIZE = 12
SEQ_LEN = 1536
