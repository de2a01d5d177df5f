"""forge: the ssv2 dataset (video).

Module data/datasets/ssv2.py.
"""

import os

import torch
from torch.utils.data import Dataset

from forge.data.registry import register_dataset
from forge.data.transforms.frame_sample import frame_sample
from forge.data.transforms.tubelet import tubelet
from forge.utils.io import read_json
from forge.utils.logging import logger

ROOT = os.environ.get("SSV2_ROOT", "/datasets/ssv2")


class Ssv2Dataset(Dataset):
    def __init__(self, split="train", tokenizer=None):
        self.split = split
        self.tokenizer = tokenizer
        index_file = os.path.join(ROOT, f"{split}.json")
        self.records = read_json(index_file) if os.path.exists(index_file) else []
        logger.info("ssv2: %d records (%s)", len(self.records), split)

    def __len__(self):
        return len(self.records)

    def __getitem__(self, index):
        sample = torch.zeros((3, 16, 224, 224))
        sample = _prepare(sample)
        return {"pixel_values": frame_sample(tubelet(sample)), "label": index % 41}


register_dataset("ssv2", Ssv2Dataset)
