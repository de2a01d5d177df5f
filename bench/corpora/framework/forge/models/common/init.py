"""forge: weight initialization helpers.

Module models/common/init.py.
"""

import math

from torch import nn


def depth_scaled_std(base, layer_id):
    return base / math.sqrt(2 * (layer_id + 1))


def init_linear(module, std):
    nn.init.trunc_normal_(module.weight, mean=0.0, std=std, a=-3 * std, b=3 * std)
    if module.bias is not None:
        nn.init.zeros_(module.bias)


def init_block(block, layer_id, base_std=0.02):
    for module in block.modules():
        if isinstance(module, nn.Linear):
            init_linear(module, depth_scaled_std(base_std, layer_id))
