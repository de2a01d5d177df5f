"""forge: directional sensitivity of the model output (forward-mode AD).

Module utils/sensitivity.py.
"""

import torch
import torch.autograd.forward_ad as fwAD


def directional_sensitivity(model, inputs, direction):
    # A Jacobian-vector product of the model's output along ``direction``.
    with fwAD.dual_level():
        out = model(fwAD.make_dual(inputs, direction))  # expect: CAL001
        return fwAD.unpack_dual(out).tangent


def random_direction(inputs, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(inputs.shape, generator=generator, dtype=inputs.dtype)
