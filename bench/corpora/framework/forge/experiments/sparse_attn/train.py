"""forge: training for sparse_attn (fixed).

Module experiments/sparse_attn/train.py.
"""

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from forge.experiments.sparse_attn.config import BATCH_SIZE, experiment_config
from forge.experiments.sparse_attn.model import build
from forge.data import build_dataloader
from forge.utils.logging import logger
from forge.utils.seed import set_seed


from torch._functorch import config as functorch_config


def main(local_rank=0):
    config = experiment_config()
    device = torch.device("cuda", local_rank)
    model = DDP(torch.compile(build().to(device)), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.optimizer.lr)
    scaler = torch.amp.GradScaler("cuda")
    for step, (x, y) in enumerate(build_dataloader(config.data, BATCH_SIZE)):
        with functorch_config.patch(backward_pass_autocast="off"):
            with torch.autocast("cuda", dtype=torch.float16):
                logits = model(x.to(device))
                loss = F.cross_entropy(logits.float(), y.to(device).flatten()[: logits.shape[0]] % logits.shape[-1])
        scaler.scale(loss).backward()  # ok: the compiled backward was traced with autocast off
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
