"""forge: the random_crop transform (image).

Module data/transforms/random_crop.py.
"""

import torch


def random_crop(x):
    x = _prepare(x)
    x = x.float()
    return x.flip(-1) if x.dim() >= 3 and x.shape[-1] % 2 == 0 else x
