"""forge: device selection.

Module utils/device.py.
"""

import torch

from forge.config.env_vars import local_rank


def device_for(device_type):
    if device_type == "cuda" and torch.cuda.is_available():
        return torch.device("cuda", local_rank())
    return torch.device("cpu")
