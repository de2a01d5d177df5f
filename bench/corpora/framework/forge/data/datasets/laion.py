"""forge: the laion dataset (image).

Module data/datasets/laion.py.
"""

import os

import torch
from torch.utils.data import Dataset

from forge.data.registry import register_dataset
from forge.data.transforms.flip import flip
from forge.data.transforms.color_jitter import color_jitter
from forge.utils.io import read_json
from forge.utils.logging import logger

ROOT = os.environ.get("LAION_ROOT", "/datasets/laion")


class LaionDataset(Dataset):
    def __init__(self, split="train", tokenizer=None):
        self.split = split
        self.tokenizer = tokenizer
        index_file = os.path.join(ROOT, f"{split}.json")
        self.records = read_json(index_file) if os.path.exists(index_file) else []
        logger.info("laion: %d records (%s)", len(self.records), split)

    def __len__(self):
        return len(self.records)

    def __getitem__(self, index):
        sample = torch.zeros((3, 224, 224))
        sample = _prepare(sample)
        return {"pixel_values": flip(color_jitter(sample)), "label": index % 37}


register_dataset("laion", LaionDataset)
