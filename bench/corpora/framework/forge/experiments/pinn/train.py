"""forge: training for pinn (forward_ad).

Module experiments/pinn/train.py.
"""

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from forge.experiments.pinn.config import BATCH_SIZE, experiment_config
from forge.experiments.pinn.model import build
from forge.data import build_dataloader
from forge.utils.logging import logger
from forge.utils.seed import set_seed


import torch.autograd.forward_ad as fwAD
from torch import nn


class Field(nn.Module):
    def __init__(self, width=128):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh(), nn.Linear(width, 1))

    def forward(self, xt):
        return self.net(xt)


class PinnSolver(nn.Module):
    def __init__(self):
        super().__init__()
        self.u = torch.compile(Field())

    def forward(self, xt):
        return self.u(xt)

    def time_derivative(self, xt):
        direction = torch.zeros_like(xt)
        direction[:, 1] = 1.0
        with fwAD.dual_level():
            out = self.u(fwAD.make_dual(xt, direction))  # expect: CAL001
            return fwAD.unpack_dual(out).tangent


def main(steps=1000):
    set_seed(0)
    solver = PinnSolver()
    optimizer = torch.optim.Adam(solver.parameters(), lr=1e-3)
    for step in range(steps):
        xt = torch.rand(256, 2, requires_grad=True)
        residual = solver.time_derivative(xt) - solver(xt)
        loss = residual.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            logger.info("pinn step %d residual %.4e", step, loss.item())
