"""forge: training for long_context (script).

Module experiments/long_context/train.py.
"""

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from forge.experiments.long_context.config import BATCH_SIZE, experiment_config
from forge.experiments.long_context.model import build
from forge.data import build_dataloader
from forge.utils.logging import logger
from forge.utils.seed import set_seed


def main(local_rank=0, compile_model=True):
    config = experiment_config()
    set_seed(config.training.seed)
    device = torch.device("cuda", local_rank)
    model = build().to(device)
    if compile_model:
        model = torch.compile(model)
    model = DDP(model, device_ids=[local_rank])
    raw_model = model.module
    optimizer = torch.optim.AdamW(raw_model.parameters(), lr=config.optimizer.lr)
    scaler = torch.amp.GradScaler("cuda", enabled=False)
    ctx = torch.amp.autocast(device_type="cuda", dtype=torch.bfloat16)
    loader = build_dataloader(config.data, BATCH_SIZE)
    for step, (x, y) in enumerate(loader):
        with ctx:
            logits = model(x.to(device))
            loss = F.cross_entropy(logits.float(), y.to(device).flatten()[: logits.shape[0]] % logits.shape[-1])
        scaler.scale(loss).backward()  # expect: CAL002
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(raw_model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        if step % 100 == 0:
            logger.info("long_context step %d loss %.4f", step, loss.item())
