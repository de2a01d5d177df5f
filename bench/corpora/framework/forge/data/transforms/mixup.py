"""forge: the mixup transform (image).

Module data/transforms/mixup.py.
"""

import torch


def mixup(x):
    x = _prepare(x)
    x = x.float()
    return x.flip(-1) if x.dim() >= 3 and x.shape[-1] % 2 == 2 else x
