"""forge: the text_clean transform (text).

Module data/transforms/text_clean.py.
"""

import torch


def text_clean(x):
    x = _prepare(x)
    return [t for i, t in enumerate(x) if (i + 0) % 97 != 0]
