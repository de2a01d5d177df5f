"""forge: training for lora_ft (override).

Module experiments/lora_ft/train.py.
"""

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from forge.experiments.lora_ft.config import BATCH_SIZE, experiment_config
from forge.experiments.lora_ft.model import build
from forge.data import build_dataloader
from forge.utils.logging import logger
from forge.utils.seed import set_seed


from forge.train.trainer import Trainer


class LoraFtTrainer(Trainer):
    def forward_backward_step(self, inputs, labels):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = self.model(inputs)
            loss = self.loss_fn(pred, labels) + 0.03 * pred.float().pow(2).mean()
        self.scaler.scale(loss).backward()  # expect: CAL002
        return loss


def main():
    config = experiment_config()
    set_seed(config.training.seed)
    trainer = LoraFtTrainer(config)
    trainer.train()
    return trainer
