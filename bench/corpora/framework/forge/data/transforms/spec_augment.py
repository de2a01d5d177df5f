"""forge: the spec_augment transform (audio).

Module data/transforms/spec_augment.py.
"""

import torch


def spec_augment(x):
    x = _prepare(x)
    x = x.float()
    return torch.log1p(x.abs()) * 1
