"""forge: the coco dataset (image).

Module data/datasets/coco.py.
"""

import os

import torch
from torch.utils.data import Dataset

from forge.data.registry import register_dataset
from forge.data.transforms.normalize import normalize
from forge.data.transforms.flip import flip
from forge.utils.io import read_json
from forge.utils.logging import logger

ROOT = os.environ.get("COCO_ROOT", "/datasets/coco")


class CocoDataset(Dataset):
    def __init__(self, split="train", tokenizer=None):
        self.split = split
        self.tokenizer = tokenizer
        index_file = os.path.join(ROOT, f"{split}.json")
        self.records = read_json(index_file) if os.path.exists(index_file) else []
        logger.info("coco: %d records (%s)", len(self.records), split)

    def __len__(self):
        return len(self.records)

    def __getitem__(self, index):
        sample = torch.zeros((3, 224, 224))
        sample = _prepare(sample)
        return {"pixel_values": normalize(flip(sample)), "label": index % 36}


register_dataset("coco", CocoDataset)
