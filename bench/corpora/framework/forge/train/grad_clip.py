"""forge: gradient clipping variants.

Module train/grad_clip.py.
"""

import torch


def clip_by_value(parameters, limit):
    for param in parameters:
        if param.grad is not None:
            param.grad.clamp_(-limit, limit)


def global_norm(parameters):
    norms = [p.grad.detach().norm() for p in parameters if p.grad is not None]
    return torch.stack(norms).norm() if norms else torch.tensor(0.0)
