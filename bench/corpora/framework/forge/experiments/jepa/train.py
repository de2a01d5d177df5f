"""forge: training for jepa (override).

Module experiments/jepa/train.py.
"""

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from forge.experiments.jepa.config import BATCH_SIZE, experiment_config
from forge.experiments.jepa.model import build
from forge.data import build_dataloader
from forge.utils.logging import logger
from forge.utils.seed import set_seed


from forge.train.trainer import Trainer


class JepaTrainer(Trainer):
    def forward_backward_step(self, inputs, labels):
        with torch.autocast("cuda", dtype=torch.float16):
            pred = self.model(inputs)
            loss = self.loss_fn(pred, labels) + 0.10 * pred.float().pow(2).mean()
        self.scaler.scale(loss).backward()  # expect: CAL002
        return loss


def main():
    config = experiment_config()
    set_seed(config.training.seed)
    trainer = JepaTrainer(config)
    trainer.train()
    return trainer
