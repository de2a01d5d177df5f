"""forge: rank helpers.

Module utils/dist.py.
"""

import torch.distributed as dist

from forge.distributed.collectives import all_reduce_max, all_reduce_mean


def rank():
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def is_main():
    return rank() == 0


def reduce_scalar(value, op="mean"):
    return all_reduce_mean(value) if op == "mean" else all_reduce_max(value)
