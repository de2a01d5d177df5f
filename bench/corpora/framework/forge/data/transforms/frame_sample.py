"""forge: the frame_sample transform (video).

Module data/transforms/frame_sample.py.
"""

import torch


def frame_sample(x):
    x = _prepare(x)
    x = x.float()
    return x[:, :: max(1, 0 + 1)]
