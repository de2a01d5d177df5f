"""forge: parameter counting and FLOP estimates.

Module models/common/utils.py.
"""

def count_parameters(model, exclude_embeddings=False):
    total = 0
    for name, param in model.named_parameters():
        if exclude_embeddings and "embedding" in name:
            continue
        total += param.numel()
    return total


def flops_per_token(n_params, n_layers, dim, seq_len):
    return 6 * n_params + 12 * n_layers * dim * seq_len
