"""CAL001: a project module compiled in place with .compile(), parameterless: the tangent is dropped."""

import torch
import torch.autograd.forward_ad as fwAD


class Gate(torch.nn.Module):
    def forward(self, x):
        return torch.tanh(x) * 2


class Reference(torch.nn.Module):
    def forward(self, x):
        return torch.tanh(x) * 2


gate = Gate()
gate.compile()


def run():
    torch.manual_seed(0)
    x, t = torch.randn(8), torch.randn(8)
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(gate(fwAD.make_dual(x, t))).tangent
    with fwAD.dual_level():
        eager = fwAD.unpack_dual(Reference()(fwAD.make_dual(x, t))).tangent
    return {"tangent": tangent, "eager": eager}
