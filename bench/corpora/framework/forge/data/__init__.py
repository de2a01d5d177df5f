from forge.data.loader import build_dataloader
from forge.data.registry import DATASETS, build_dataset

__all__ = ["DATASETS", "build_dataloader", "build_dataset"]
