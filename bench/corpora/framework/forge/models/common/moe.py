"""forge: a token-choice mixture of experts.

Module models/common/moe.py.
"""

import torch
from torch import nn

from forge.models.common.mlp import FeedForward


class MoE(nn.Module):
    def __init__(self, dim, hidden_dim, num_experts=8, top_k=2):
        super().__init__()
        self.router = nn.Linear(dim, num_experts, bias=False)
        self.experts = nn.ModuleList([FeedForward(dim, hidden_dim) for _ in range(num_experts)])
        self.top_k = top_k

    def forward(self, x):
        scores = self.router(x).softmax(-1)
        weights, chosen = scores.topk(self.top_k, dim=-1)
        out = torch.zeros_like(x)
        for slot in range(self.top_k):
            for index, expert in enumerate(self.experts):
                mask = (chosen[..., slot] == index).unsqueeze(-1)
                out = out + mask * weights[..., slot : slot + 1] * expert(x)
        return out
