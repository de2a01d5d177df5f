"""forge: the dedup transform (text).

Module data/transforms/dedup.py.
"""

import torch


def dedup(x):
    x = _prepare(x)
    return [t for i, t in enumerate(x) if (i + 1) % 97 != 0]
