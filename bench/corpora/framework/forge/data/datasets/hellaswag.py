"""forge: the hellaswag dataset (text).

Module data/datasets/hellaswag.py.
"""

import os

import torch
from torch.utils.data import Dataset

from forge.data.registry import register_dataset
from forge.data.transforms.dedup import dedup
from forge.data.transforms.mask_tokens import mask_tokens
from forge.utils.io import read_json
from forge.utils.logging import logger

ROOT = os.environ.get("HELLASWAG_ROOT", "/datasets/hellaswag")


class HellaswagDataset(Dataset):
    def __init__(self, split="train", tokenizer=None):
        self.split = split
        self.tokenizer = tokenizer
        index_file = os.path.join(ROOT, f"{split}.json")
        self.records = read_json(index_file) if os.path.exists(index_file) else []
        logger.info("hellaswag: %d records (%s)", len(self.records), split)

    def __len__(self):
        return len(self.records)

    def __getitem__(self, index):
        sample = self.tokenizer.encode(self.records[index]["text"])
        sample = _prepare(sample)
        return {"input_ids": dedup(mask_tokens(sample))}


register_dataset("hellaswag", HellaswagDataset)
