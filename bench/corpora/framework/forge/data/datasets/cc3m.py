"""forge: the cc3m dataset (image).

Module data/datasets/cc3m.py.
"""

import os

import torch
from torch.utils.data import Dataset

from forge.data.registry import register_dataset
from forge.data.transforms.color_jitter import color_jitter
from forge.data.transforms.mixup import mixup
from forge.utils.io import read_json
from forge.utils.logging import logger

ROOT = os.environ.get("CC3M_ROOT", "/datasets/cc3m")


class Cc3mDataset(Dataset):
    def __init__(self, split="train", tokenizer=None):
        self.split = split
        self.tokenizer = tokenizer
        index_file = os.path.join(ROOT, f"{split}.json")
        self.records = read_json(index_file) if os.path.exists(index_file) else []
        logger.info("cc3m: %d records (%s)", len(self.records), split)

    def __len__(self):
        return len(self.records)

    def __getitem__(self, index):
        sample = torch.zeros((3, 224, 224))
        sample = _prepare(sample)
        return {"pixel_values": color_jitter(mixup(sample)), "label": index % 38}


register_dataset("cc3m", Cc3mDataset)
