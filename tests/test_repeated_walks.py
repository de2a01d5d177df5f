"""A check's walk memory (``WalkMemory.for_check``): the roots one process analyzes replay the walks
of the code they share (a trainer, its models and data) once most of their walks repeat, and every
root's result is what walking everything gives: its events, the callers it asks for, and the files
it depends on (what the cache keys it by).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import compile_ad_lint.api as api
from compile_ad_lint.api import Analyzer, WalkMemory
from compile_ad_lint.config import Config
from compile_ad_lint.linking.events import BackwardThroughCompiled

MODEL = """\
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        return torch.relu(self.proj(x))


class Net(nn.Module):
    def __init__(self, width=8, depth=2):
        super().__init__()
        self.blocks = nn.ModuleList([Block(width) for _ in range(depth)])
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def build(compiled=True):
    net = Net()
    return torch.compile(net) if compiled else net
"""

TRAINER = """\
import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, lr=1e-3):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
        self.scaler = torch.cuda.amp.GradScaler()

    def loss(self, batch):
        x, y = batch
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return F.mse_loss(self.model(x), y)

    def step(self, batch):
        loss = self.loss(batch)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()
        return loss

    def fit(self, batches, epochs=1):
        for _ in range(epochs):
            for batch in batches:
                self.step(batch)
"""

DATA = """\
import torch


def batches(n=4, width=8):
    return [(torch.randn(2, width), torch.randn(2, 1)) for _ in range(n)]
"""

SCRIPT = """\
import torch
from torch.autograd import forward_ad

from proj.data import batches
from proj.model import build
from proj.trainer import Trainer


def main():
    model = build(compiled={compiled})
    trainer = Trainer(model, lr={lr})
    trainer.fit(batches())
    {probe}


if __name__ == "__main__":
    main()
"""

PROBE = """with forward_ad.dual_level():
        model(forward_ad.make_dual(torch.randn(2, 8), torch.ones(2, 8)))"""


def _project(root: Path) -> list[Path]:
    """A package shared by several training scripts (in the order a check analyzes them)."""
    (root / "pyproject.toml").write_text("[tool.compile-ad-lint]\n")
    package = root / "proj"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, text in {"model.py": MODEL, "trainer.py": TRAINER, "data.py": DATA}.items():
        (package / name).write_text(text)
    scripts = []
    for k in range(8):
        probe = PROBE if k % 3 == 2 else "pass"
        script = root / f"train_{k}.py"
        script.write_text(SCRIPT.format(compiled=k % 4 != 3, lr=f"1e-{k + 2}", probe=probe))
        scripts.append(script.resolve())
    return scripts


@pytest.fixture
def project(tmp_path, monkeypatch) -> list[Path]:
    monkeypatch.chdir(tmp_path)
    return _project(tmp_path)


@pytest.fixture
def memories(monkeypatch) -> list[WalkMemory]:
    """The memories checks made for themselves."""
    made: list[WalkMemory] = []
    for_check = WalkMemory.for_check

    def recorded() -> WalkMemory:
        memory = for_check()
        made.append(memory)
        return memory

    monkeypatch.setattr(WalkMemory, "for_check", staticmethod(recorded))
    return made


def test_every_root_gets_what_walking_everything_gives(project, tmp_path, memories):
    def results(replay: bool) -> list[api.RootResult]:
        config = Config(root=tmp_path)
        workspace = api._Workspace(config, None, [tmp_path], {}, {}, replay_repeated_walks=replay)
        return [workspace.analyze(script, frozenset({"fit"})) for script in project]

    plain = results(False)
    assert not memories
    replayed = results(True)
    assert replayed == plain
    (memory,) = memories
    assert memory.summarizing and memory.hits > 0, "no walk was replayed: the comparison proves nothing"
    # The shared trainer's backward (events a replayed walk makes again) is in every root's result.
    for result in replayed:
        backwards = {
            (event.location.path, event.location.line)
            for event in result.events
            if isinstance(event, BackwardThroughCompiled)
        }
        assert backwards == {("proj/trainer.py", 18)}


def test_a_check_reports_the_same_with_and_without_its_memory(project, tmp_path, memories):
    config = Config(root=tmp_path)
    plain = Analyzer(config, jobs=1, use_cache=False, replay_repeated_walks=False).check(["."])
    replayed = Analyzer(config, jobs=1, use_cache=False).check(["."])
    assert plain.findings and replayed.findings == plain.findings
    assert {f.code for f in plain.findings} >= {"CAL001", "CAL002"}
    assert any(memory.hits for memory in memories)


def test_a_check_summarizes_only_once_most_walk_keys_repeat():
    memory = WalkMemory.for_check()
    assert not memory.summarizing  # nothing analyzed yet
    memory.root_walked({1, 2, 3, 4})
    assert not memory.summarizing
    assert memory.summarizes(1) and not memory.summarizes(5)
    memory.root_walked({1, 2, 5, 6})  # 2 of 8 keys repeated
    assert not memory.summarizing
    memory.root_walked({1, 2, 3, 4, 5, 6})  # 8 of 14
    assert memory.summarizing
    memory.root_walked({7, 8, 9, 10, 11, 12, 13, 14, 15, 16})  # 8 of 24: walks stopped repeating
    assert not memory.summarizing


def test_the_language_servers_memory_summarizes_every_walk():
    memory = WalkMemory()
    assert memory.summarizing and memory.summarizes(1)
    memory.root_walked({1, 2})
    assert memory.summarizes(3)
