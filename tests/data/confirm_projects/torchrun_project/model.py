"""A small sequence regressor. Its output head runs in float32 with autocast disabled, as regression
heads often do so that the prediction keeps full precision: an fp32 island inside the autocast region."""

import torch
import torch.nn as nn


class Float32Head(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(1, dim) / dim**0.5)
        self.bias = nn.Parameter(torch.zeros(1))

    def forward(self, h):
        with torch.autocast(device_type=h.device.type, enabled=False):
            return (h.float() @ self.weight.float().t() + self.bias.float()).squeeze(-1)


class Regressor(nn.Module):
    def __init__(self, features, dim=32):
        super().__init__()
        self.inp = nn.Linear(features, dim)
        self.mix = nn.Linear(dim, dim)
        self.head = Float32Head(dim)

    def forward(self, x):
        h = torch.tanh(self.inp(x))
        h = h + torch.tanh(self.mix(h))
        return self.head(h.mean(dim=1))
