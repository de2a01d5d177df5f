"""forge: training for mae (fp32).

Module experiments/mae/train.py.
"""

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from forge.experiments.mae.config import BATCH_SIZE, experiment_config
from forge.experiments.mae.model import build
from forge.data import build_dataloader
from forge.utils.logging import logger
from forge.utils.seed import set_seed


def main(local_rank=0):
    config = experiment_config()
    set_seed(config.training.seed)
    device = torch.device("cuda", local_rank)
    model = torch.compile(build().to(device))
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.optimizer.lr)
    for step, (x, y) in enumerate(build_dataloader(config.data, BATCH_SIZE)):
        logits = model(x.to(device))
        loss = F.cross_entropy(logits, y.to(device).flatten()[: logits.shape[0]] % logits.shape[-1])
        loss.backward()  # ok: float32 forward and backward, no autocast
        optimizer.step()
        optimizer.zero_grad()
        if step % 100 == 0:
            logger.info("mae step %d loss %.4f", step, loss.item())
