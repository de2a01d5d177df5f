"""forge: training for retrieval (subclass).

Module experiments/retrieval/train.py.
"""

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from forge.experiments.retrieval.config import BATCH_SIZE, experiment_config
from forge.experiments.retrieval.model import build
from forge.data import build_dataloader
from forge.utils.logging import logger
from forge.utils.seed import set_seed


from forge.train.trainer import Trainer


class RetrievalTrainer(Trainer):
    def build_model(self):
        model = super().build_model()
        logger.info("retrieval: %d parameters", sum(p.numel() for p in model.parameters()))
        return model


def main():
    config = experiment_config()
    set_seed(config.training.seed)
    trainer = RetrievalTrainer(config)
    trainer.train()
    return trainer
