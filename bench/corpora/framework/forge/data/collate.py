"""forge: batch collation.

Module data/collate.py.
"""

import torch


def collate_tokens(samples, pad_id=0):
    length = max(len(s["input_ids"]) for s in samples)
    inputs = torch.full((len(samples), length), pad_id, dtype=torch.long)
    labels = torch.full((len(samples), length), -100, dtype=torch.long)
    for row, sample in enumerate(samples):
        ids = torch.as_tensor(sample["input_ids"])
        inputs[row, : len(ids)] = ids
        labels[row, : len(ids) - 1] = ids[1:]
    return inputs, labels
