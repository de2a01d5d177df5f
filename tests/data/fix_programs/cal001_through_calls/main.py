"""CAL001 through a call chain and the other compile spellings: torch._dynamo.optimize reached
through a helper, functools.partial(torch.compile, ...) called directly."""

import functools

import torch
import torch._dynamo
import torch.autograd.forward_ad as fwAD


def rms(x):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


rms_fast = torch._dynamo.optimize("inductor")(rms)
compile_fast = functools.partial(torch.compile, mode="max-autotune-no-cudagraphs")
cube = compile_fast(lambda x: x * x * x)


def normalize(x):
    return rms_fast(x) + 1


def rms_reference(x):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) + 1


def run():
    torch.manual_seed(0)
    x, t = torch.randn(8), torch.randn(8)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t)
        a = normalize(dual)
        b = cube(dual)
        tangents = [fwAD.unpack_dual(a).tangent, fwAD.unpack_dual(b).tangent]
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t)
        eager = [fwAD.unpack_dual(rms_reference(dual)).tangent, fwAD.unpack_dual(dual * dual * dual).tangent]
    return {"rms": tangents[0], "cube": tangents[1], "rms_eager": eager[0], "cube_eager": eager[1]}
