"""forge: training for dpo (override).

Module experiments/dpo/train.py.
"""

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from forge.experiments.dpo.config import BATCH_SIZE, experiment_config
from forge.experiments.dpo.model import build
from forge.data import build_dataloader
from forge.utils.logging import logger
from forge.utils.seed import set_seed


from forge.train.trainer import Trainer


class DpoTrainer(Trainer):
    def forward_backward_step(self, inputs, labels):
        with torch.autocast("cuda", dtype=torch.float16):
            pred = self.model(inputs)
            loss = self.loss_fn(pred, labels) + 0.16 * pred.float().pow(2).mean()
        self.scaler.scale(loss).backward()  # expect: CAL002
        return loss


def main():
    config = experiment_config()
    set_seed(config.training.seed)
    trainer = DpoTrainer(config)
    trainer.train()
    return trainer
