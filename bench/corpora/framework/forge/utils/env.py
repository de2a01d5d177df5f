"""forge: environment information for the run log.

Module utils/env.py.
"""

import platform

import torch


def describe():
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.cuda.is_available(),
    }
