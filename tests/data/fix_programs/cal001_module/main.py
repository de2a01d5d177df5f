"""CAL001: a compiled nn.Module with parameters inside dual_level(): NotImplementedError."""

import torch
import torch.autograd.forward_ad as fwAD


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.proj(x).tanh()


def run():
    torch.manual_seed(0)
    head = Head()
    model = torch.compile(head)
    x, t = torch.randn(2, 4), torch.randn(2, 4)
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(model(fwAD.make_dual(x, t))).tangent
    with fwAD.dual_level():
        eager = fwAD.unpack_dual(head(fwAD.make_dual(x, t))).tangent
    return {"tangent": tangent, "eager": eager}
