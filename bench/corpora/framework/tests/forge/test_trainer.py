import torch

from forge.config import preset
from forge.train.trainer import Trainer


def test_one_step_on_cpu():
    config = preset("llama")
    config.training.device_type = "cpu"
    trainer = Trainer(config)
    batch = [(torch.randint(0, 100, (2, 8)), torch.randint(0, 100, (2, 8)))]
    assert torch.isfinite(trainer.train_step(batch))
