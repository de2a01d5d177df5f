"""forge: memory statistics.

Module utils/memory.py.
"""

import torch


def peak_memory_gib():
    if not torch.cuda.is_available():
        return 0.0
    return torch.cuda.max_memory_allocated() / 2**30


def reset_peak():
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
