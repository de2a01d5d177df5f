"""forge: training for reward_model (subclass).

Module experiments/reward_model/train.py.
"""

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from forge.experiments.reward_model.config import BATCH_SIZE, experiment_config
from forge.experiments.reward_model.model import build
from forge.data import build_dataloader
from forge.utils.logging import logger
from forge.utils.seed import set_seed


from forge.train.trainer import Trainer


class RewardModelTrainer(Trainer):
    def build_model(self):
        model = super().build_model()
        logger.info("reward_model: %d parameters", sum(p.numel() for p in model.parameters()))
        return model


def main():
    config = experiment_config()
    set_seed(config.training.seed)
    trainer = RewardModelTrainer(config)
    trainer.train()
    return trainer
