"""Activation layers, some with their own projection (GEGLU, SwiGLU)."""

import torch
import torch.nn.functional as F
from torch import nn

ACTIVATIONS = {"swish": nn.SiLU(), "silu": nn.SiLU(), "mish": nn.Mish(), "gelu": nn.GELU(), "relu": nn.ReLU()}


def get_activation(name):
    name = name.lower()
    if name not in ACTIVATIONS:
        raise ValueError(f"unknown activation {name}")
    return ACTIVATIONS[name]


class GELU(nn.Module):
    def __init__(self, dim_in, dim_out, approximate="none", bias=True):
        super().__init__()
        self.proj = nn.Linear(dim_in, dim_out, bias=bias)
        self.approximate = approximate

    def gelu(self, gate):
        if gate.device.type == "mps" and gate.dtype == torch.float16:
            # mps has no fp16 gelu: compute it in float32.
            return F.gelu(gate.to(torch.float32), approximate=self.approximate).to(gate.dtype)
        return F.gelu(gate, approximate=self.approximate)

    def forward(self, hidden_states):
        return self.gelu(self.proj(hidden_states))


class GEGLU(nn.Module):
    def __init__(self, dim_in, dim_out, bias=True):
        super().__init__()
        self.proj = nn.Linear(dim_in, dim_out * 2, bias=bias)

    def forward(self, hidden_states):
        hidden_states, gate = self.proj(hidden_states).chunk(2, dim=-1)
        return hidden_states * F.gelu(gate)


class SwiGLU(nn.Module):
    def __init__(self, dim_in, dim_out, bias=True):
        super().__init__()
        self.proj = nn.Linear(dim_in, dim_out * 2, bias=bias)
        self.activation = nn.SiLU()

    def forward(self, hidden_states):
        hidden_states, gate = self.proj(hidden_states).chunk(2, dim=-1)
        return hidden_states * self.activation(gate)
