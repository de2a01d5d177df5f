"""forge: optimizers.

Module train/optim.py.
"""

import torch


def param_groups(model, weight_decay):
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        (no_decay if param.dim() < 2 or "norm" in name else decay).append(param)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def build_optimizer(model, optimizer_config):
    groups = param_groups(model, optimizer_config.weight_decay)
    if optimizer_config.name == "SGD":
        return torch.optim.SGD(groups, lr=optimizer_config.lr, momentum=0.9)
    return torch.optim.AdamW(groups, lr=optimizer_config.lr, betas=(0.9, 0.95), fused=False)
