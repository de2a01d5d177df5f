"""forge: sharded data parallelism (placeholder policy).

Module distributed/fsdp.py.
"""

def fsdp_policy(model, min_params=1_000_000):
    return [name for name, module in model.named_modules() if sum(p.numel() for p in module.parameters(recurse=False)) >= min_params]
