from forge.train.trainer import Trainer

__all__ = ["Trainer"]
