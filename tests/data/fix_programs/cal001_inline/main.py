"""CAL001: torch.compile(f) created and called in the region."""

import torch
import torch.autograd.forward_ad as fwAD


def bump(x):
    return x.cos() + x


def run():
    torch.manual_seed(0)
    x, t = torch.randn(8), torch.randn(8)
    with fwAD.dual_level():
        out = torch.compile(bump)(fwAD.make_dual(x, t))
        tangent = fwAD.unpack_dual(out).tangent
    return {"tangent": tangent, "eager": (1 - x.sin()) * t}
