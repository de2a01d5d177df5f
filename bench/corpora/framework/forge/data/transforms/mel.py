"""forge: the mel transform (audio).

Module data/transforms/mel.py.
"""

import torch


def mel(x):
    x = _prepare(x)
    x = x.float()
    return torch.log1p(x.abs()) * 2
