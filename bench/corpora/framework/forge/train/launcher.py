"""forge: the entry point: config, logger, seed, Trainer.

Module train/launcher.py.
"""

from forge.config import parse_args
from forge.train.trainer import Trainer
from forge.utils.logging import init_logger
from forge.utils.seed import set_seed


def main(argv=None):
    config = parse_args(argv)
    init_logger()
    set_seed(config.training.seed)
    trainer = Trainer(config)
    trainer.train()
    return trainer
