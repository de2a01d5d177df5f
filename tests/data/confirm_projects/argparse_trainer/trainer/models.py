"""A mixture-of-experts classifier with an auxiliary head.

The router computes its logits in float32 with autocast disabled, as MoE routers do for stable
softmax statistics: an fp32 island inside the autocast region.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Router(nn.Module):
    def __init__(self, dim, experts):
        super().__init__()
        self.gate = nn.Linear(dim, experts, bias=False)

    def forward(self, x):
        with torch.autocast(device_type=x.device.type, enabled=False):
            return F.softmax(self.gate(x.float()), dim=-1)


class MixtureClassifier(nn.Module):
    def __init__(self, features, hidden, classes, experts=4):
        super().__init__()
        self.embed = nn.Linear(features, hidden)
        self.router = Router(hidden, experts)
        self.experts = nn.ModuleList([nn.Linear(hidden, hidden) for _ in range(experts)])
        self.head = nn.Linear(hidden, classes)
        self.aux_head = nn.Linear(hidden, classes)

    def forward(self, x):
        h = torch.tanh(self.embed(x))
        weights = self.router(h)
        mixed = sum(weights[:, i : i + 1] * torch.tanh(expert(h)) for i, expert in enumerate(self.experts))
        return self.head(mixed), self.aux_head(h)
