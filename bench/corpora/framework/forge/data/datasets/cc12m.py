"""forge: the cc12m dataset (image).

Module data/datasets/cc12m.py.
"""

import os

import torch
from torch.utils.data import Dataset

from forge.data.registry import register_dataset
from forge.data.transforms.mixup import mixup
from forge.data.transforms.cutmix import cutmix
from forge.utils.io import read_json
from forge.utils.logging import logger

ROOT = os.environ.get("CC12M_ROOT", "/datasets/cc12m")


class Cc12mDataset(Dataset):
    def __init__(self, split="train", tokenizer=None):
        self.split = split
        self.tokenizer = tokenizer
        index_file = os.path.join(ROOT, f"{split}.json")
        self.records = read_json(index_file) if os.path.exists(index_file) else []
        logger.info("cc12m: %d records (%s)", len(self.records), split)

    def __len__(self):
        return len(self.records)

    def __getitem__(self, index):
        sample = torch.zeros((3, 224, 224))
        sample = _prepare(sample)
        return {"pixel_values": mixup(cutmix(sample)), "label": index % 39}


register_dataset("cc12m", Cc12mDataset)
