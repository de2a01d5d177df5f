"""forge: an exponential moving average of the weights.

Module train/ema.py.
"""

import copy

import torch


class EMA:
    def __init__(self, model, decay=0.999):
        self.shadow = copy.deepcopy(model).eval()
        self.decay = decay
        for param in self.shadow.parameters():
            param.requires_grad_(False)

    @torch.no_grad()
    def update(self, model):
        for ours, theirs in zip(self.shadow.parameters(), model.parameters()):
            ours.mul_(self.decay).add_(theirs.detach(), alpha=1 - self.decay)
