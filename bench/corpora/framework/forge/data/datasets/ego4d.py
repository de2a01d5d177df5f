"""forge: the ego4d dataset (video).

Module data/datasets/ego4d.py.
"""

import os

import torch
from torch.utils.data import Dataset

from forge.data.registry import register_dataset
from forge.data.transforms.tubelet import tubelet
from forge.data.transforms.frame_sample import frame_sample
from forge.utils.io import read_json
from forge.utils.logging import logger

ROOT = os.environ.get("EGO4D_ROOT", "/datasets/ego4d")


class Ego4dDataset(Dataset):
    def __init__(self, split="train", tokenizer=None):
        self.split = split
        self.tokenizer = tokenizer
        index_file = os.path.join(ROOT, f"{split}.json")
        self.records = read_json(index_file) if os.path.exists(index_file) else []
        logger.info("ego4d: %d records (%s)", len(self.records), split)

    def __len__(self):
        return len(self.records)

    def __getitem__(self, index):
        sample = torch.zeros((3, 16, 224, 224))
        sample = _prepare(sample)
        return {"pixel_values": tubelet(frame_sample(sample)), "label": index % 42}


register_dataset("ego4d", Ego4dDataset)
