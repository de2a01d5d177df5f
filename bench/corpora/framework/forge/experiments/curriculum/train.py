"""forge: training for curriculum (subclass).

Module experiments/curriculum/train.py.
"""

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from forge.experiments.curriculum.config import BATCH_SIZE, experiment_config
from forge.experiments.curriculum.model import build
from forge.data import build_dataloader
from forge.utils.logging import logger
from forge.utils.seed import set_seed


from forge.train.trainer import Trainer


class CurriculumTrainer(Trainer):
    def build_model(self):
        model = super().build_model()
        logger.info("curriculum: %d parameters", sum(p.numel() for p in model.parameters()))
        return model


def main():
    config = experiment_config()
    set_seed(config.training.seed)
    trainer = CurriculumTrainer(config)
    trainer.train()
    return trainer
