"""forge: the randaugment transform (image).

Module data/transforms/randaugment.py.
"""

import torch


def randaugment(x):
    x = _prepare(x)
    x = x.float()
    return x.flip(-1) if x.dim() >= 3 and x.shape[-1] % 2 == 1 else x
