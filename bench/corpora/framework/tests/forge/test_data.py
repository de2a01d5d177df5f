from forge.data.collate import collate_tokens
from forge.data.packing import pack


def test_pack_and_collate():
    packed = pack([[1, 2, 3], [4, 5]], 3, 0)
    inputs, labels = collate_tokens([{"input_ids": p} for p in packed])
    assert inputs.shape[0] == len(packed)
