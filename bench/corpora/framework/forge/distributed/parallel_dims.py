"""forge: the parallelism degrees of a job.

Module distributed/parallel_dims.py.
"""

from dataclasses import dataclass

from forge.config.env_vars import world_size


@dataclass
class ParallelDims:
    dp_replicate: int
    dp_shard: int
    tp: int
    pp: int

    @classmethod
    def from_config(cls, parallel):
        shard = parallel.data_parallel_shard_degree
        if shard < 0:
            shard = max(1, world_size() // (parallel.data_parallel_replicate_degree * parallel.tensor_parallel_degree))
        return cls(parallel.data_parallel_replicate_degree, shard, parallel.tensor_parallel_degree, parallel.pipeline_parallel_degree)

    @property
    def dp_replicate_enabled(self):
        return self.dp_replicate > 1

    @property
    def fsdp_enabled(self):
        return self.dp_shard > 1

    @property
    def tp_enabled(self):
        return self.tp > 1

    @property
    def pp_enabled(self):
        return self.pp > 1
