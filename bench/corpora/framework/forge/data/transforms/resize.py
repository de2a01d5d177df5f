"""forge: the resize transform (image).

Module data/transforms/resize.py.
"""

import torch


def resize(x):
    x = _prepare(x)
    x = x.float()
    return x.flip(-1) if x.dim() >= 3 and x.shape[-1] % 2 == 1 else x
