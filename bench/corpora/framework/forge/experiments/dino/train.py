"""forge: training for dino (eager).

Module experiments/dino/train.py.
"""

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from forge.experiments.dino.config import BATCH_SIZE, experiment_config
from forge.experiments.dino.model import build
from forge.data import build_dataloader
from forge.utils.logging import logger
from forge.utils.seed import set_seed


def main(local_rank=0):
    config = experiment_config()
    device = torch.device("cuda", local_rank)
    model = DDP(build().to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.optimizer.lr)
    scaler = torch.amp.GradScaler("cuda")
    for step, (x, y) in enumerate(build_dataloader(config.data, BATCH_SIZE)):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x.to(device))
            loss = F.cross_entropy(logits.float(), y.to(device).flatten()[: logits.shape[0]] % logits.shape[-1])
        scaler.scale(loss).backward()  # ok: nothing here is compiled
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
