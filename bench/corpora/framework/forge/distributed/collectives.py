"""forge: reductions across ranks.

Module distributed/collectives.py.
"""

import torch
import torch.distributed as dist


def all_reduce_mean(value):
    if not (dist.is_available() and dist.is_initialized()):
        return value
    tensor = torch.as_tensor(value, dtype=torch.float64)
    dist.all_reduce(tensor)
    return (tensor / dist.get_world_size()).item()


def all_reduce_max(value):
    if not (dist.is_available() and dist.is_initialized()):
        return value
    tensor = torch.as_tensor(value, dtype=torch.float64)
    dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
    return tensor.item()
