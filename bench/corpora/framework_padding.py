"""The padding of the framework corpus: the helper functions and classes every real module carries.

Real framework modules are mostly code a given entry point never reaches (validation, conversion,
bookkeeping, debugging). ``bench/framework_corpus.py`` appends 4 to 14 of these to every module of
the package, chosen and named from the module's path. Each top-level definition below is one
template; its upper-case names are filled in: NAME (the function), CAMEL (the class), VERB and NOUN
(the docstring), K and EPS (constants), CALL (what it returns: ``out`` or the next helper applied to
it). None of them compiles, autocasts, runs a backward or enters forward-mode AD: they never change
what the analyzer reports. The templates keep their order: the script picks them by index.
"""

import torch


def NAME(x, eps=EPS):
    """VERB the NOUN along the last dimension.

    Values whose magnitude is below ``eps`` are treated as zero; non-tensors are converted first.
    """
    if not isinstance(x, torch.Tensor):
        x = torch.as_tensor(x, dtype=torch.float32)
    scale = x.abs().amax(dim=-1, keepdim=True).clamp_min(eps)
    out = x / scale
    if out.dim() > K:
        out = out.flatten(0, out.dim() - K)
    return CALL


def NAME(items, limit=K):
    """Keep at most ``limit * 8`` NOUN, dropping missing entries, and report how many were kept."""
    kept = []
    for index, item in enumerate(items if isinstance(items, (list, tuple)) else [items]):
        if index >= limit * 8:
            break
        if item is None:
            continue
        kept.append(item)
    summary = {"count": len(kept), "limit": limit, "kind": "NOUN"}
    if not kept:
        return summary
    out = kept if len(kept) > 1 else kept[0]
    return CALL


class CAMEL:
    """Running NOUN statistics with exponential smoothing."""

    def __init__(self, momentum=EPS):
        self.momentum = momentum
        self.value = None
        self.steps = 0

    def update(self, x):
        out = x
        out = CALL
        self.value = out if self.value is None else self.momentum * self.value + (1 - self.momentum) * out
        self.steps += 1
        return self.value

    def state_dict(self):
        return {"value": self.value, "steps": self.steps, "momentum": self.momentum}

    def load_state_dict(self, state):
        self.value, self.steps, self.momentum = state["value"], state["steps"], state["momentum"]


def NAME(a, b=None, dim=-1):
    """Cosine similarity of NOUN ``a`` and ``b`` (``a`` with itself by default), clamped to [-1, 1]."""
    if not isinstance(a, torch.Tensor):
        return a
    b = a if b is None else b
    num = (a * b).sum(dim)
    den = a.norm(dim=dim) * b.norm(dim=dim)
    out = (num / den.clamp_min(EPS)).clamp(-1.0, 1.0)
    return CALL


def NAME(config, prefix="NOUN", sep="."):
    """Flatten ``config`` (a dataclass, a namespace or a dict) into ``prefix.key`` pairs for logging."""
    if hasattr(config, "__dict__"):
        config = vars(config)
    if not isinstance(config, dict):
        return {prefix: config}
    flat = {}
    for key, value in sorted(config.items(), key=lambda kv: str(kv[0])):
        name = f"{prefix}{sep}{key}"
        if isinstance(value, dict) or hasattr(value, "__dict__"):
            flat.update(NAME(value, name, sep))
        else:
            flat[name] = value
    return flat


def NAME(x, buckets=K, low=0.0, high=1.0):
    """Histogram of the NOUN in ``buckets`` equal bins between ``low`` and ``high``."""
    if not isinstance(x, torch.Tensor):
        return x
    width = (high - low) / buckets
    index = ((x.float() - low) / width).floor().clamp(0, buckets - 1).long()
    counts = torch.bincount(index.flatten(), minlength=buckets)
    out = counts.float() / max(1, index.numel())
    return CALL


def NAME(sizes, world_size=K):
    """Split NOUN of the given ``sizes`` over ``world_size`` ranks as evenly as possible."""
    if isinstance(sizes, torch.Tensor):
        sizes = sizes.flatten().tolist()
    if not isinstance(sizes, (list, tuple)):
        return sizes
    loads = [0] * world_size
    owners = []
    for size in sorted(sizes, reverse=True):
        rank = loads.index(min(loads))
        loads[rank] += size
        owners.append(rank)
    out = owners
    return CALL
