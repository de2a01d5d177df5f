"""forge: activation checkpointing of blocks.

Module distributed/activation_checkpoint.py.
"""

from torch.utils.checkpoint import checkpoint


class CheckpointWrapper:
    def __init__(self, block):
        self.block = block

    def __call__(self, *args):
        return checkpoint(self.block, *args, use_reentrant=False)


def apply_ac(model, ac_config):
    if ac_config.mode == "full":
        model.ac_wrappers = [CheckpointWrapper(block) for block in model.modules() if hasattr(block, "feed_forward")]
    return model
