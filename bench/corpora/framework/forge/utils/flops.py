"""forge: model FLOP utilization.

Module utils/flops.py.
"""

from forge.models.common.utils import flops_per_token

PEAK_FLOPS = {"a100": 312e12, "h100": 989e12, "cpu": 1e12}


def mfu(n_params, n_layers, dim, seq_len, tokens_per_second, device="h100"):
    return flops_per_token(n_params, n_layers, dim, seq_len) * tokens_per_second / PEAK_FLOPS[device]
