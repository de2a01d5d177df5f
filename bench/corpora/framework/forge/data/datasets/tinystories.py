"""forge: the tinystories dataset (text).

Module data/datasets/tinystories.py.
"""

import os

import torch
from torch.utils.data import Dataset

from forge.data.registry import register_dataset
from forge.data.transforms.truncate import truncate
from forge.data.transforms.text_clean import text_clean
from forge.utils.io import read_json
from forge.utils.logging import logger

ROOT = os.environ.get("TINYSTORIES_ROOT", "/datasets/tinystories")


class TinystoriesDataset(Dataset):
    def __init__(self, split="train", tokenizer=None):
        self.split = split
        self.tokenizer = tokenizer
        index_file = os.path.join(ROOT, f"{split}.json")
        self.records = read_json(index_file) if os.path.exists(index_file) else []
        logger.info("tinystories: %d records (%s)", len(self.records), split)

    def __len__(self):
        return len(self.records)

    def __getitem__(self, index):
        sample = self.tokenizer.encode(self.records[index]["text"])
        sample = _prepare(sample)
        return {"input_ids": truncate(text_clean(sample))}


register_dataset("tinystories", TinystoriesDataset)
