"""forge: the librispeech dataset (audio).

Module data/datasets/librispeech.py.
"""

import os

import torch
from torch.utils.data import Dataset

from forge.data.registry import register_dataset
from forge.data.transforms.mel import mel
from forge.data.transforms.spec_augment import spec_augment
from forge.utils.io import read_json
from forge.utils.logging import logger

ROOT = os.environ.get("LIBRISPEECH_ROOT", "/datasets/librispeech")


class LibrispeechDataset(Dataset):
    def __init__(self, split="train", tokenizer=None):
        self.split = split
        self.tokenizer = tokenizer
        index_file = os.path.join(ROOT, f"{split}.json")
        self.records = read_json(index_file) if os.path.exists(index_file) else []
        logger.info("librispeech: %d records (%s)", len(self.records), split)

    def __len__(self):
        return len(self.records)

    def __getitem__(self, index):
        sample = torch.zeros((80, 3000))
        sample = _prepare(sample)
        return {"pixel_values": mel(spec_augment(sample)), "label": index % 43}


register_dataset("librispeech", LibrispeechDataset)
