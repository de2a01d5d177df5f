"""The base class of every model: config, loading and saving weights, gradient checkpointing, regional compile."""

import os

import torch
from torch import nn

from ..configuration_utils import ConfigMixin
from ..utils.constants import WEIGHTS_NAME
from ..utils.logging import get_logger

logger = get_logger(__name__)


class ModelMixin(nn.Module, ConfigMixin):
    #: Names of the attributes holding the repeated blocks that compile_repeated_blocks compiles.
    _repeated_blocks = ()
    _supports_gradient_checkpointing = False
    _no_split_modules = ()

    def __init__(self):
        super().__init__()
        self.gradient_checkpointing = False

    @property
    def dtype(self):
        return next(self.parameters()).dtype

    @property
    def device(self):
        return next(self.parameters()).device

    def num_parameters(self, only_trainable=False, exclude_embeddings=False):
        total = 0
        for name, param in self.named_parameters():
            if only_trainable and not param.requires_grad:
                continue
            if exclude_embeddings and "embed" in name:
                continue
            total += param.numel()
        return total

    def enable_gradient_checkpointing(self):
        if not self._supports_gradient_checkpointing:
            raise ValueError(f"{type(self).__name__} does not support gradient checkpointing")
        self.gradient_checkpointing = True
        for module in self.modules():
            if hasattr(module, "gradient_checkpointing"):
                module.gradient_checkpointing = True

    def disable_gradient_checkpointing(self):
        for module in self.modules():
            if hasattr(module, "gradient_checkpointing"):
                module.gradient_checkpointing = False

    def _checkpointed(self, block, *args):
        if self.gradient_checkpointing and torch.is_grad_enabled():
            return torch.utils.checkpoint.checkpoint(block, *args, use_reentrant=False)
        return block(*args)

    def repeated_blocks(self):
        blocks = []
        for name in self._repeated_blocks:
            blocks.extend(getattr(self, name))
        return blocks

    def compile_repeated_blocks(self, *args, **kwargs):
        """Compile each repeated block in place (regional compilation): the blocks share one graph, so it
        compiles once and much faster than the whole model."""
        blocks = self.repeated_blocks()
        if not blocks:
            raise ValueError(f"{type(self).__name__} names no repeated blocks to compile")
        for block in blocks:
            block.compile(*args, **kwargs)
        logger.info("compiled %d repeated blocks of %s", len(blocks), type(self).__name__)

    def save_pretrained(self, folder, is_main_process=True, save_function=None):
        if not is_main_process:
            return
        os.makedirs(folder, exist_ok=True)
        self.save_config(folder)
        (save_function or torch.save)(self.state_dict(), os.path.join(folder, WEIGHTS_NAME))

    @classmethod
    def from_pretrained(cls, folder, subfolder=None, torch_dtype=None, revision=None, variant=None, **kwargs):
        config = cls.load_config(folder, subfolder=subfolder)
        model = cls.from_config(config, **kwargs)
        path = os.path.join(folder, subfolder or "", WEIGHTS_NAME)
        if os.path.exists(path):
            state = torch.load(path, map_location="cpu", weights_only=True)
            missing, unexpected = model.load_state_dict(state, strict=False)
            if missing or unexpected:
                logger.warning("%s: %d missing and %d unexpected keys", cls.__name__, len(missing), len(unexpected))
        else:
            logger.warning("no weights at %s: %s is randomly initialized", path, cls.__name__)
        if torch_dtype is not None:
            model = model.to(torch_dtype)
        return model.eval()
