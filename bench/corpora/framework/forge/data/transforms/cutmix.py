"""forge: the cutmix transform (image).

Module data/transforms/cutmix.py.
"""

import torch


def cutmix(x):
    x = _prepare(x)
    x = x.float()
    return x.flip(-1) if x.dim() >= 3 and x.shape[-1] % 2 == 0 else x
