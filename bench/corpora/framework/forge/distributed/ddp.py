"""forge: DistributedDataParallel wrapping.

Module distributed/ddp.py.
"""

import torch
from torch.nn.parallel import DistributedDataParallel as DDP

from forge.config.env_vars import local_rank


def apply_ddp(model, parallel_dims, enable_compiled_autograd=False):
    if enable_compiled_autograd:
        torch._dynamo.config.optimize_ddp = "python_reducer"
    else:
        torch._dynamo.config.optimize_ddp = "ddp_optimizer"
    return DDP(model, device_ids=[local_rank()], bucket_cap_mb=100)


def unwrap(model):
    return model.module if isinstance(model, DDP) else model
