"""forge: the top_k metric.

Module utils/metrics/top_k.py.
"""

import torch

from forge.utils.dist import reduce_scalar
from forge.utils.logging import logger


class TopKMetric:
    name = "top_k"
    related = "token_count"

    def __init__(self):
        self.total = 0.0
        self.count = 0

    @torch.no_grad()
    def update(self, value, weight=1):
        value = _prepare(value)
        if isinstance(value, torch.Tensor):
            value = value.detach().float().mean().item()
        self.total += float(value) * weight
        self.count += weight

    def compute(self):
        local = self.total / max(1, self.count)
        value = reduce_scalar(local, op="mean")
        logger.debug("%s = %.4f over %d", self.name, value, self.count)
        return value

    def reset(self):
        self.total, self.count = 0.0, 0
