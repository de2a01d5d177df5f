"""forge: the color_jitter transform (image).

Module data/transforms/color_jitter.py.
"""

import torch


def color_jitter(x):
    x = _prepare(x)
    x = x.float()
    return x.flip(-1) if x.dim() >= 3 and x.shape[-1] % 2 == 1 else x
