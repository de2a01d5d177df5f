"""CAL001: a function compiled with inductor, called on dual tensors inside dual_level()."""

import torch
import torch.autograd.forward_ad as fwAD


def scaled_sine(x):
    return torch.sin(x) * x


fast = torch.compile(scaled_sine)


def reference(x):
    return torch.sin(x) * x


def run():
    torch.manual_seed(0)
    x, t = torch.randn(8), torch.randn(8)
    with fwAD.dual_level():
        out = fast(fwAD.make_dual(x, t))  # the tangent is dropped
        tangent = fwAD.unpack_dual(out).tangent
    with fwAD.dual_level():
        eager = fwAD.unpack_dual(reference(fwAD.make_dual(x, t))).tangent
    return {"tangent": tangent, "eager": eager}
