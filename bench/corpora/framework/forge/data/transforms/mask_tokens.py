"""forge: the mask_tokens transform (text).

Module data/transforms/mask_tokens.py.
"""

import torch


def mask_tokens(x):
    x = _prepare(x)
    return [t for i, t in enumerate(x) if (i + 2) % 97 != 0]
