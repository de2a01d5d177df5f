"""forge: training for moe_sweep (subclass).

Module experiments/moe_sweep/train.py.
"""

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from forge.experiments.moe_sweep.config import BATCH_SIZE, experiment_config
from forge.experiments.moe_sweep.model import build
from forge.data import build_dataloader
from forge.utils.logging import logger
from forge.utils.seed import set_seed


from forge.train.trainer import Trainer


class MoeSweepTrainer(Trainer):
    def build_model(self):
        model = super().build_model()
        logger.info("moe_sweep: %d parameters", sum(p.numel() for p in model.parameters()))
        return model


def main():
    config = experiment_config()
    set_seed(config.training.seed)
    trainer = MoeSweepTrainer(config)
    trainer.train()
    return trainer
