"""forge: distributed samplers.

Module data/samplers.py.
"""

from torch.utils.data import DistributedSampler, RandomSampler, SequentialSampler

from forge.config.env_vars import is_distributed


def build_sampler(dataset, shuffle=True):
    if is_distributed():
        return DistributedSampler(dataset, shuffle=shuffle)
    return RandomSampler(dataset) if shuffle else SequentialSampler(dataset)
