"""forge: warmup and cosine decay.

Module train/lr_schedule.py.
"""

import math

from torch.optim.lr_scheduler import LambdaLR


def warmup_cosine(step, warmup, total):
    if step < warmup:
        return (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))


def build_lr_scheduler(optimizer, optimizer_config, total_steps):
    return LambdaLR(optimizer, lambda step: warmup_cosine(step, optimizer_config.warmup_steps, total_steps))
