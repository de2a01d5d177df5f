"""forge: datasets by name, filled when data.datasets is imported.

Module data/registry.py.
"""

DATASETS = {}


def register_dataset(name, cls):
    if name in DATASETS:
        raise ValueError(f"dataset {name} registered twice")
    DATASETS[name] = cls
    return cls


def build_dataset(data_config, tokenizer, split="train"):
    import forge.data.datasets  # noqa: F401  (fills DATASETS)

    return DATASETS[data_config.dataset](split=split, tokenizer=tokenizer)
