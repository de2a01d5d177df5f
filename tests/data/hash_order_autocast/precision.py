"""mlfoundations/open_lm's precision.py: the autocast context manager class itself, or a lambda
making one: which one a training step enters depends on the precision chosen at launch."""

import torch


def get_autocast(precision):
    if precision == "amp":
        return torch.cpu.amp.autocast
    elif precision == "amp_bf16":
        return lambda: torch.cpu.amp.autocast(dtype=torch.bfloat16)
    return torch.cpu.amp.autocast
