"""forge: per-block torch.compile, in place.

Module distributed/compile.py.
"""

import torch

from forge.utils.logging import logger


def apply_compile(model, compile_config):
    # Compile each block in place: the repeated structure makes compilation efficient.
    for block in model.layers.values():
        block.compile(backend=compile_config.backend, fullgraph=compile_config.fullgraph)
    log_compile(model)


def log_compile(model):
    logger.info("compiled %d blocks of %s", len(getattr(model, "layers", ())), type(model).__name__)
