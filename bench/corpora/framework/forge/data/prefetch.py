"""forge: moving batches to the device ahead of time.

Module data/prefetch.py.
"""

import torch


class Prefetcher:
    def __init__(self, loader, device):
        self.loader = loader
        self.device = device

    def __iter__(self):
        for inputs, labels in self.loader:
            yield inputs.to(self.device, non_blocking=True), labels.to(self.device, non_blocking=True)
