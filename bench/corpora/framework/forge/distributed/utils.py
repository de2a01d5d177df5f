"""forge: mixed precision selection and small collectives.

Module distributed/utils.py.
"""

import contextlib

import torch

TORCH_DTYPE_MAP = {"float16": torch.float16, "float32": torch.float32, "bfloat16": torch.bfloat16}


def maybe_enable_amp(parallel_dims, mixed_precision, device_type):
    if parallel_dims.fsdp_enabled:
        # FSDP casts parameters itself.
        return contextlib.nullcontext()
    if parallel_dims.tp_enabled or parallel_dims.pp_enabled:
        return contextlib.nullcontext()
    # DDP or a single device: autocast the forward.
    return torch.autocast(device_type, dtype=TORCH_DTYPE_MAP[mixed_precision])


def clip_grad_norm_(parameters, max_norm):
    return torch.nn.utils.clip_grad_norm_(parameters, max_norm)
