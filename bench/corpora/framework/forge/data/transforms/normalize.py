"""forge: the normalize transform (image).

Module data/transforms/normalize.py.
"""

import torch


def normalize(x):
    x = _prepare(x)
    x = x.float()
    return x.flip(-1) if x.dim() >= 3 and x.shape[-1] % 2 == 2 else x
