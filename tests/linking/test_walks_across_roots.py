"""Walk memories kept across the roots of a project: the language server's (over the open files and
the edits, ``WalkMemory()``) and a check's (one per process, over the roots it analyzes,
``WalkMemory.for_check``). Every root's result is what walking everything gives (its events, the
callers it asks for, the files it depends on, which the cache keys it by), also once its walks are
replayed in other roots.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from compile_ad_lint import Config
from compile_ad_lint.api import Analyzer, RootResult, WalkMemory
from compile_ad_lint.linking.events import BackwardThroughCompiled
from compile_ad_lint.pipeline import tuning
from compile_ad_lint.pipeline import workspace as workspace_module
from compile_ad_lint.pipeline.workspace import Workspace

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


def _root_results(
    root: Path, scripts: list[Path], mentions: frozenset[str], memory: WalkMemory | None = None, *, replay: bool = False
) -> list[RootResult]:
    """Each script's result, in order: walking everything (the default), with ``memory`` (the
    language server's), or with the memory a check makes for itself (``replay``)."""
    workspace = Workspace(Config(root=root), None, [root], {}, {}, replay_repeated_walks=replay, walk_memory=memory)
    return [workspace.analyze(script, mentions) for script in scripts]


def test_every_root_gets_what_walking_everything_gives(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    scripts = _project(tmp_path)
    mentions = frozenset({"fit", "step"})
    plain = _root_results(tmp_path, scripts, mentions)
    memory = WalkMemory()
    # The shared code's walks replayed in the scripts after the first; then each root again (an edit
    # elsewhere), its own walks replayed too.
    assert _root_results(tmp_path, scripts, mentions, memory) == plain
    assert memory.hits > 0, "no walk was replayed across roots: the comparison proves nothing"
    hits = memory.hits
    assert _root_results(tmp_path, scripts, mentions, memory) == plain
    assert memory.hits > hits
    for k, result in enumerate(plain):
        # The shared step's backward depends on the entry's parameters: it asks for the callers of
        # the entry it was walked from, each script's own ``run_k``.
        assert (str(scripts[k]), f"run_{k}") in result.caller_requests
        # The shared trainer's backward (an event a replayed walk makes again) is in every root whose
        # ``build(compiled=True)`` compiles the model; ``compiled=False`` decides the choice there.
        backwards = {
            (event.location.path, event.location.line)
            for event in result.events
            if isinstance(event, BackwardThroughCompiled)
        }
        assert backwards == ({("proj/trainer.py", 18)} if k % 4 != 3 else set())


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


def _registry_project(root: Path) -> list[Path]:
    """Experiments registering their model through the import side effects of their own package
    (``reg/exp_k/__init__.py`` imports the module that registers it, as train specs are), the even
    ones a compiled net, the odd ones an eager one, all reaching the registry from a shared ``fit``."""
    (root / "pyproject.toml").write_text("[tool.compile-ad-lint]\n")
    package = root / "reg"
    package.mkdir()
    files = {"__init__.py": "", "registry.py": REGISTRY, "fit.py": FIT}
    files |= {"compiled_net.py": COMPILED_NET, "eager_net.py": EAGER_NET}
    for name, text in files.items():
        (package / name).write_text(text)
    scripts = []
    for k in range(6):
        experiment = package / f"exp_{k}"
        experiment.mkdir()
        registering = "compiled_net" if k % 2 == 0 else "eager_net"
        (experiment / "__init__.py").write_text(f"import reg.{registering}  # noqa: F401\n")
        (experiment / "train.py").write_text(EXPERIMENT)
        scripts.append((experiment / "train.py").resolve())
    return scripts


def test_walks_that_run_import_side_effects_are_replayed_in_their_root_only(tmp_path, monkeypatch):
    """Which modules a registry's import side effects run depends on the root: a walk that ran them
    is replayed in its root only, and every root depends on its own package's files; the walks that
    did not (those that found them run read the registry like any other global) are replayed across
    roots."""
    monkeypatch.chdir(tmp_path)
    scripts = _registry_project(tmp_path)
    mentions = frozenset({"fit"})
    plain = _root_results(tmp_path, scripts, mentions)
    for k, result in enumerate(plain):
        init = str((tmp_path / "reg" / f"exp_{k}" / "__init__.py").resolve())
        assert init in {path for path, _ in result.dependencies}
        backwards = [event for event in result.events if isinstance(event, BackwardThroughCompiled)]
        assert len(backwards) == (1 if k % 2 == 0 else 0)  # the compiled net is registered in even ones
    memory = WalkMemory()
    assert _root_results(tmp_path, scripts, mentions, memory) == plain
    assert memory.hits > 0, "no walk was replayed across roots: the comparison proves nothing"
    assert _root_results(tmp_path, scripts, mentions, memory) == plain


# -- a check's memory ------------------------------------------------------------------------------


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


@pytest.mark.parametrize(
    ("build", "mentions"), [(_project, frozenset({"fit", "step"})), (_registry_project, frozenset({"fit"}))]
)
def test_a_checks_memory_gives_every_root_what_walking_everything_gives(
    build: Callable[[Path], list[Path]], mentions: frozenset[str], tmp_path, monkeypatch, memories
):
    monkeypatch.chdir(tmp_path)
    scripts = build(tmp_path)
    plain = _root_results(tmp_path, scripts, mentions)
    assert not memories
    assert _root_results(tmp_path, scripts, mentions, replay=True) == plain
    (memory,) = memories
    assert memory.summarizing and memory.hits > 0, "no walk was replayed: the comparison proves nothing"


def test_a_check_reports_the_same_with_and_without_its_memory(tmp_path, monkeypatch, memories):
    monkeypatch.chdir(tmp_path)
    _project(tmp_path)
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
    assert not memory.summarizing  # a first root has nothing to repeat
    assert memory.summarizes(1) and not memory.summarizes(5)
    memory.root_walked({1, 5, 6, 7})  # 1 of 4 keys repeated
    assert not memory.summarizing
    memory.root_walked({1, 2, 3, 5, 6, 8})  # 6 of 10
    assert memory.summarizing
    memory.root_walked({9, 10, 11, 12, 13, 14, 15, 16, 17, 18})  # 6 of 20: walks stopped repeating
    assert not memory.summarizing


def test_a_large_first_root_does_not_hold_off_summarizing():
    """A process's first root repeats nothing by definition; counting its keys kept peft's workers
    from summarizing through their five heaviest test files, whose walks the next ones repeat."""
    memory = WalkMemory.for_check()
    memory.root_walked(set(range(3000)))
    memory.root_walked(set(range(1000)) | set(range(5000, 5800)))  # 1,000 of 1,800 repeated
    assert memory.summarizing


def test_a_check_past_its_memory_budget_stops_summarizing_and_reports_the_same(tmp_path, monkeypatch, memories):
    """A check's process whose resident memory passes the budget drops its summaries and makes no
    more (microsoft/DeepSpeed's tests: 2.1 GB of summaries that saved no time); what it reports is
    what walking everything gives."""
    monkeypatch.chdir(tmp_path)
    _project(tmp_path)
    config = Config(root=tmp_path)
    kept = Analyzer(config, jobs=1, use_cache=False).check(["."])
    assert any(memory.hits for memory in memories), "no walk was replayed: the comparison proves nothing"
    memories.clear()
    monkeypatch.setattr(workspace_module, "walk_summary_budget", lambda: 0)
    retired = Analyzer(config, jobs=1, use_cache=False).check(["."])
    assert retired.findings == kept.findings
    (memory,) = memories
    assert not memory.summarizing and memory.hits == 0


def test_a_retired_memory_keeps_nothing_and_never_summarizes_again():
    memory = WalkMemory.for_check()
    memory.root_walked({1, 2})
    memory.root_walked({1, 2})
    assert memory.summarizing
    memory.retire()
    assert not memory.summarizing and not memory.candidates(("any",))
    memory.root_walked({1, 2})
    memory.root_walked({1, 2})
    assert not memory.summarizing


@pytest.mark.parametrize(
    ("gigabytes", "processors", "megabytes"),
    [
        (24, 2, 1536),  # this CI machine: half of 24 GB over 2 processors, past the ceiling
        (32, 16, 1024),  # a workstation: its share
        (64, 64, 768),  # many processors, each of whose workers walks: the floor
    ],
)
def test_the_summaries_budget_is_a_share_of_the_machine_per_processor(monkeypatch, gigabytes, processors, megabytes):
    page = 4096
    pages = {"SC_PAGE_SIZE": page, "SC_PHYS_PAGES": gigabytes * (1 << 30) // page}
    monkeypatch.setattr(tuning.os, "sysconf", pages.__getitem__)
    monkeypatch.setattr(tuning.os, "cpu_count", lambda: processors)
    assert tuning.walk_summary_budget() == megabytes * (1 << 20)


def test_the_language_servers_memory_summarizes_every_walk():
    memory = WalkMemory()
    assert memory.summarizing and memory.summarizes(1)
    memory.root_walked({1, 2})
    assert memory.summarizes(3)
