"""forge: the truncate transform (text).

Module data/transforms/truncate.py.
"""

import torch


def truncate(x):
    x = _prepare(x)
    return [t for i, t in enumerate(x) if (i + 0) % 97 != 0]
