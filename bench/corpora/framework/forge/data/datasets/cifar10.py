"""forge: the cifar10 dataset (image).

Module data/datasets/cifar10.py.
"""

import os

import torch
from torch.utils.data import Dataset

from forge.data.registry import register_dataset
from forge.data.transforms.random_crop import random_crop
from forge.data.transforms.resize import resize
from forge.utils.io import read_json
from forge.utils.logging import logger

ROOT = os.environ.get("CIFAR10_ROOT", "/datasets/cifar10")


class Cifar10Dataset(Dataset):
    def __init__(self, split="train", tokenizer=None):
        self.split = split
        self.tokenizer = tokenizer
        index_file = os.path.join(ROOT, f"{split}.json")
        self.records = read_json(index_file) if os.path.exists(index_file) else []
        logger.info("cifar10: %d records (%s)", len(self.records), split)

    def __len__(self):
        return len(self.records)

    def __getitem__(self, index):
        sample = torch.zeros((3, 224, 224))
        sample = _prepare(sample)
        return {"pixel_values": random_crop(resize(sample)), "label": index % 34}


register_dataset("cifar10", Cifar10Dataset)
