from torch import nn

from forge.train.checkpoint import CheckpointManager


def test_roundtrip(tmp_path):
    model = nn.Linear(2, 2)
    optimizer = __import__("torch").optim.SGD(model.parameters(), lr=0.1)
    manager = CheckpointManager(str(tmp_path), model, optimizer)
    manager.save(3)
    assert manager.load(str(tmp_path / "checkpoints" / "step-3.pt")) == 3
