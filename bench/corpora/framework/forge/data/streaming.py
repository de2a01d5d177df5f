"""forge: streaming from shards.

Module data/streaming.py.
"""

from torch.utils.data import IterableDataset

from forge.data.packing import pack
from forge.utils.io import list_shards


class ShardStream(IterableDataset):
    def __init__(self, folder, seq_len, eos_id=0):
        self.shards = list_shards(folder)
        self.seq_len = seq_len
        self.eos_id = eos_id

    def __iter__(self):
        for shard in self.shards:
            with open(shard, "rb") as handle:
                tokens = list(handle.read())
            yield from pack([tokens], self.seq_len, self.eos_id)
