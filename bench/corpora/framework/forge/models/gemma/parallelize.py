"""forge: activation checkpointing, per-block compile and DDP for gemma.

Module models/gemma/parallelize.py.
"""

import torch

from forge.distributed.activation_checkpoint import apply_ac
from forge.distributed.compile import log_compile
from forge.distributed.ddp import apply_ddp


def apply_compile(model, compile_config):
    for layer_id, block in model.layers.named_children():
        block = torch.compile(block, backend=compile_config.backend, fullgraph=True)
        model.layers.register_module(layer_id, block)


def parallelize_gemma(model, parallel_dims, job_config):
    if job_config.activation_checkpoint.mode != "none":
        apply_ac(model, job_config.activation_checkpoint)
    if job_config.compile.enable and "model" in job_config.compile.components:
        apply_compile(model, job_config.compile)
    if parallel_dims.dp_replicate_enabled:
        # DDP wraps the model after its blocks were compiled.
        model = apply_ddp(model, parallel_dims, enable_compiled_autograd=False)
    return model
