"""forge: the commonvoice dataset (audio).

Module data/datasets/commonvoice.py.
"""

import os

import torch
from torch.utils.data import Dataset

from forge.data.registry import register_dataset
from forge.data.transforms.spec_augment import spec_augment
from forge.data.transforms.mel import mel
from forge.utils.io import read_json
from forge.utils.logging import logger

ROOT = os.environ.get("COMMONVOICE_ROOT", "/datasets/commonvoice")


class CommonvoiceDataset(Dataset):
    def __init__(self, split="train", tokenizer=None):
        self.split = split
        self.tokenizer = tokenizer
        index_file = os.path.join(ROOT, f"{split}.json")
        self.records = read_json(index_file) if os.path.exists(index_file) else []
        logger.info("commonvoice: %d records (%s)", len(self.records), split)

    def __len__(self):
        return len(self.records)

    def __getitem__(self, index):
        sample = torch.zeros((80, 3000))
        sample = _prepare(sample)
        return {"pixel_values": spec_augment(mel(sample)), "label": index % 44}


register_dataset("commonvoice", CommonvoiceDataset)
