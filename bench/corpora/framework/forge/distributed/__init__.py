from forge.distributed.parallel_dims import ParallelDims
from forge.distributed.utils import maybe_enable_amp

__all__ = ["ParallelDims", "maybe_enable_amp"]
