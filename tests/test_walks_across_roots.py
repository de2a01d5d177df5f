"""A walk memory kept across the roots of a project (the language server's, over the open files and
the edits): every root's result is what walking everything gives (its events, the callers it asks
for, the files it depends on, which the cache keys it by), also once its walks are replayed.
"""

from __future__ import annotations

from pathlib import Path

import compile_ad_lint.api as api
from compile_ad_lint.api import WalkMemory
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

STEPS = """\
def scaled(x, factor=2.0):
    return x * factor


def centered(x):
    return x - x.mean()


def clipped(x, limit=1.0):
    return x.clamp(-limit, limit)


def step(batch):
    loss = clipped(centered(scaled(batch))).sum()
    loss.backward()
    return loss
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
from proj.steps import step
from proj.trainer import Trainer


def main():
    model = build(compiled={compiled})
    trainer = Trainer(model, lr={lr})
    trainer.fit(batches())
    {probe}


def run_{k}(batch):
    return step(batch)


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
    for name, text in {"model.py": MODEL, "trainer.py": TRAINER, "steps.py": STEPS, "data.py": DATA}.items():
        (package / name).write_text(text)
    scripts = []
    for k in range(8):
        probe = PROBE if k % 3 == 2 else "pass"
        script = root / f"train_{k}.py"
        script.write_text(SCRIPT.format(compiled=k % 4 != 3, lr=f"1e-{k + 2}", probe=probe, k=k))
        scripts.append(script.resolve())
    return scripts


def test_every_root_gets_what_walking_everything_gives(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    scripts = _project(tmp_path)
    config = Config(root=tmp_path)

    def results(memory: WalkMemory | None) -> list[api.RootResult]:
        workspace = api._Workspace(config, None, [tmp_path], {}, {}, walk_memory=memory)
        return [workspace.analyze(script, frozenset({"fit", "step"})) for script in scripts]

    plain = results(None)
    memory = WalkMemory()
    assert results(memory) == plain  # the shared code's walks replayed in the scripts after the first
    assert memory.hits > 0, "no walk was replayed across roots: the comparison proves nothing"
    hits = memory.hits
    assert results(memory) == plain  # each root again (an edit elsewhere): its walks replayed
    assert memory.hits > hits
    for k, result in enumerate(plain):
        # The shared step's backward depends on the entry's parameters: it asks for the callers of
        # the entry it was walked from, each script's own ``run_k``.
        assert (str(scripts[k]), f"run_{k}") in result.caller_requests
        # The shared trainer's backward (an event a replayed walk makes again) is in every root's result.
        backwards = {
            (event.location.path, event.location.line)
            for event in result.events
            if isinstance(event, BackwardThroughCompiled)
        }
        assert backwards == {("proj/trainer.py", 18)}


REGISTRY = """\
SPECS = {}


def register(name, build):
    SPECS[name] = build


def build(name):
    return SPECS[name]()
"""

COMPILED_NET = """\
import torch
from torch import nn

from reg.registry import register


def compiled_net():
    return torch.compile(nn.Linear(8, 8))


register("net", compiled_net)
"""

EAGER_NET = """\
from torch import nn

from reg.registry import register


def eager_net():
    return nn.Linear(8, 8)


register("net", eager_net)
"""

FIT = """\
import torch

from reg.registry import build


def scaled(x, factor=2.0):
    return x * factor


def fit(x, name):
    model = build(name)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(scaled(x)).sum()
    loss.backward()
"""

EXPERIMENT = """\
import torch

from reg.fit import fit, scaled


def main():
    fit(scaled(torch.randn(2, 8)), "net")
"""


def test_walks_that_run_import_side_effects_are_replayed_in_their_root_only(tmp_path, monkeypatch):
    """A registry filled by the import side effects of each script's own package (``experiments``
    registering their model, as train specs are): which modules those are depends on the root, so
    a walk that ran or read them is replayed in its root only, and every root depends on its own
    package's files; the walks that did not are replayed across roots."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.compile-ad-lint]\n")
    package = tmp_path / "reg"
    package.mkdir()
    for name, text in {"__init__.py": "", "registry.py": REGISTRY, "fit.py": FIT}.items():
        (package / name).write_text(text)
    (package / "compiled_net.py").write_text(COMPILED_NET)
    (package / "eager_net.py").write_text(EAGER_NET)
    scripts = []
    for k in range(4):
        experiment = package / f"exp_{k}"
        experiment.mkdir()
        registering = "compiled_net" if k % 2 == 0 else "eager_net"
        (experiment / "__init__.py").write_text(f"import reg.{registering}  # noqa: F401\n")
        (experiment / "train.py").write_text(EXPERIMENT)
        scripts.append((experiment / "train.py").resolve())
    config = Config(root=tmp_path)

    def results(memory: WalkMemory | None) -> list[api.RootResult]:
        workspace = api._Workspace(config, None, [tmp_path], {}, {}, walk_memory=memory)
        return [workspace.analyze(script, frozenset({"fit"})) for script in scripts]

    plain = results(None)
    for k, result in enumerate(plain):
        init = str((package / f"exp_{k}" / "__init__.py").resolve())
        assert init in {path for path, _ in result.dependencies}
        backwards = [event for event in result.events if isinstance(event, BackwardThroughCompiled)]
        assert len(backwards) == (1 if k % 2 == 0 else 0)  # the compiled net is registered in even ones
    memory = WalkMemory()
    assert results(memory) == plain
    assert memory.hits > 0, "no walk was replayed across roots: the comparison proves nothing"
    assert results(memory) == plain
