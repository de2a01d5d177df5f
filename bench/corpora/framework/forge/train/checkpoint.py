"""forge: saving and loading checkpoints.

Module train/checkpoint.py.
"""

import os

import torch

from forge.distributed.ddp import unwrap
from forge.utils.dist import is_main
from forge.utils.retry import retry


class CheckpointManager:
    def __init__(self, folder, model, optimizer, keep=3):
        self.folder = os.path.join(folder, "checkpoints")
        self.model = model
        self.optimizer = optimizer
        self.keep = keep

    def save(self, step, final=False):
        if not is_main():
            return
        os.makedirs(self.folder, exist_ok=True)
        state = {"model": unwrap(self.model).state_dict(), "optimizer": self.optimizer.state_dict(), "step": step}
        path = os.path.join(self.folder, "final.pt" if final else f"step-{step}.pt")
        retry(lambda: torch.save(state, path))

    def load(self, path):
        state = torch.load(path, map_location="cpu", weights_only=True)
        unwrap(self.model).load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        return state["step"]
