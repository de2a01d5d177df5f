"""forge: the tubelet transform (video).

Module data/transforms/tubelet.py.
"""

import torch


def tubelet(x):
    x = _prepare(x)
    x = x.float()
    return x[:, :: max(1, 2 + 1)]
