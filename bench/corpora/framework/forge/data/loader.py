"""forge: the training data loader.

Module data/loader.py.
"""

from torch.utils.data import DataLoader

from forge.data.collate import collate_tokens
from forge.data.registry import build_dataset
from forge.data.samplers import build_sampler
from forge.data.tokenizers import build_tokenizer


def build_dataloader(data_config, batch_size, split="train"):
    tokenizer = build_tokenizer(data_config.tokenizer)
    dataset = build_dataset(data_config, tokenizer, split=split)
    sampler = build_sampler(dataset, shuffle=data_config.shuffle)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=data_config.num_workers, collate_fn=collate_tokens)
