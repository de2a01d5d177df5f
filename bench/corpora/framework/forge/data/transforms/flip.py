"""forge: the flip transform (image).

Module data/transforms/flip.py.
"""

import torch


def flip(x):
    x = _prepare(x)
    x = x.float()
    return x.flip(-1) if x.dim() >= 3 and x.shape[-1] % 2 == 0 else x
