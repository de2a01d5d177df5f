"""CAL001: @torch.compile and @torch.compile(mode=...) on functions called inside dual_level()."""

import torch
import torch.autograd.forward_ad as fwAD


@torch.compile
def swish(x):
    return x * torch.sigmoid(x)


@torch.compile(mode="max-autotune-no-cudagraphs", dynamic=False)
def softplus(x):
    return torch.log1p(torch.exp(-x.abs())) + x.clamp(min=0)


def swish_reference(x):
    return x * torch.sigmoid(x)


def softplus_reference(x):
    return torch.log1p(torch.exp(-x.abs())) + x.clamp(min=0)


def run():
    torch.manual_seed(0)
    x, t = torch.randn(8), torch.randn(8)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t)
        a = swish(dual)
        b = softplus(dual)
        tangents = [fwAD.unpack_dual(a).tangent, fwAD.unpack_dual(b).tangent]
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t)
        eager = [fwAD.unpack_dual(swish_reference(dual)).tangent, fwAD.unpack_dual(softplus_reference(dual)).tangent]
    return {"swish": tangents[0], "softplus": tangents[1], "swish_eager": eager[0], "softplus_eager": eager[1]}
