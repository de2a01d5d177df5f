"""forge: the gradient scaler for float16.

Module train/grad_scaler.py.
"""

import torch


def build_grad_scaler(training_config):
    # A no-op scaler unless the forward runs in float16.
    return torch.amp.GradScaler(training_config.device_type, enabled=training_config.mixed_precision == "float16")
