"""Walks kept across analyses (``linking.incremental``): an edit's check replays the walks of the code the
edit did not change, and finds exactly what a check walking everything finds.

Each case checks a sequence of buffer versions twice, with one walk memory kept across the
sequence and without one, and compares the findings at every step; the memory must also have been
used (a replay that never happens proves nothing).
"""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from compile_ad_lint import Config
from compile_ad_lint.api import AnalysisCancelled, Analyzer, ViewMemory, WalkMemory, load_view
from compile_ad_lint.cache import EntryMemory
from compile_ad_lint.pipeline import workspace as workspace_module
from compile_ad_lint.pipeline.run import Run
from compile_ad_lint.summary import view as view_module
from compile_ad_lint.summary.view import ParseCounter

MODEL = """\
import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.proj(x).relu()


def build(compiled):
    block = Block()
    return torch.compile(block) if compiled else block
"""
STEP = """\
import torch


def step(holder, x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = holder.model(x).sum()
    loss.backward()
"""
HOLDER = """\
class Holder:
    pass
"""
TRAIN = """\
import torch

from holder import Holder
from model import build
from steps import step


def main():
    holder = Holder()
    holder.model = build(True)
    for _ in range(3):
        step(holder, torch.randn(2, 4))
    loss = holder.model(torch.randn(2, 4)).sum()
    loss.backward()
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.compile-ad-lint]\n")
    for name, text in {"model.py": MODEL, "steps.py": STEP, "holder.py": HOLDER, "train.py": TRAIN}.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def _findings(report) -> list[tuple]:
    return sorted((f.code, f.location.path, f.location.line, f.location.column, f.message) for f in report.findings)


def _compare(
    root: Path, versions: list[dict[str, str]], monkeypatch, memory: WalkMemory | None = None, **settings: int
) -> tuple[list[list[tuple]], WalkMemory]:
    """Check the project with each version of the buffers, with and without a kept walk memory
    (and the module views kept with it, as the language server keeps them), under the
    configuration ``settings`` give."""
    monkeypatch.chdir(root)
    memory = memory if memory is not None else WalkMemory()
    views = ViewMemory()
    seen = []
    for buffers in versions:
        sources = {(root / name).resolve(): text.encode() for name, text in buffers.items()}
        paths = ["."]
        config = Config(root=root, **settings)
        plain = Analyzer(config, jobs=1, use_cache=False).check(paths, sources=sources)
        replayed = Analyzer(config, jobs=1, use_cache=False, walk_memory=memory, views=views).check(
            paths, sources=sources
        )
        assert _findings(replayed) == _findings(plain), buffers
        seen.append(_findings(plain))
    return seen, memory


def test_an_edit_of_the_script_replays_the_walks_of_the_other_files(tmp_path, monkeypatch):
    root = _project(tmp_path)
    versions = [{"train.py": TRAIN + f"\n# edit {k}\n"} for k in range(3)]
    seen, memory = _compare(root, versions, monkeypatch)
    assert seen[0] and seen[0] == seen[-1]
    assert memory.hits > 0, "the walks of model.py and steps.py were not replayed"


def test_a_changed_dependency_is_walked_again(tmp_path, monkeypatch):
    """model.py's buffer stops compiling: the replayed walks that read it no longer hold."""
    root = _project(tmp_path)
    uncompiled = MODEL.replace("return torch.compile(block) if compiled else block", "return block")
    versions = [
        {"train.py": TRAIN, "model.py": MODEL},
        {"train.py": TRAIN + "\n", "model.py": MODEL},
        {"train.py": TRAIN + "\n", "model.py": uncompiled},
        {"train.py": TRAIN, "model.py": MODEL},
    ]
    seen, memory = _compare(root, versions, monkeypatch)
    assert seen[0] and not seen[2], "without torch.compile there is nothing to report"
    assert seen[3] == seen[0]
    assert memory.hits > 0


def test_what_the_script_stores_on_the_heap_is_read_again(tmp_path, monkeypatch):
    """``steps.step`` reads ``holder.model``, which train.py stores: a replay of the step's walk
    from when it held a compiled module would report a backward that no longer goes through one."""
    root = _project(tmp_path)
    plain_model = TRAIN.replace("holder.model = build(True)", "holder.model = torch.nn.Linear(4, 4)")
    versions = [{"train.py": TRAIN}, {"train.py": TRAIN + "\n"}, {"train.py": plain_model}, {"train.py": TRAIN}]
    seen, memory = _compare(root, versions, monkeypatch)
    assert any(path == "steps.py" for _, path, *_ in seen[0]), "step's backward goes through the compiled block"
    assert not any(path == "steps.py" for _, path, *_ in seen[2])
    assert seen[3] == seen[0]
    assert memory.hits > 0


RECURSIVE_STEP = """\
import torch


def unwrap(module):
    if hasattr(module, "module"):
        return unwrap(module.module)
    return module


def step(holder, x):
    model = unwrap(holder.model)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x).sum()
    loss.backward()
"""


@pytest.mark.parametrize("edits", [1, 3])
def test_recursive_helpers_replay_the_same_findings(tmp_path, monkeypatch, edits):
    """A walk cut short by recursion into a function further up the stack depends on the stack;
    ``unwrap``'s own walk does not, and is replayed."""
    root = _project(tmp_path)
    (root / "steps.py").write_text(RECURSIVE_STEP)
    versions = [{"train.py": TRAIN + "\n" * k} for k in range(edits + 1)]
    seen, memory = _compare(root, versions, monkeypatch)
    assert seen[0] and seen[-1] == seen[0]
    assert memory.hits > 0


@pytest.fixture
def walked(monkeypatch) -> list[str]:
    """The qualified names of the functions the checks with a walk memory walked (did not replay)."""
    from compile_ad_lint.linking.interpreter import Interpreter

    names: list[str] = []
    walk = Interpreter.walk_function

    def counted(self, function, *rest):
        if self.walk_memory is not None:
            names.append(function.qualname)
        return walk(self, function, *rest)

    monkeypatch.setattr(Interpreter, "walk_function", counted)
    return names


def _summaries_of(memory: WalkMemory, qualname: str) -> list[int]:
    """How many summaries the memory keeps for each walk key of the function ``qualname``."""
    return [len(found) for key, found in memory._entries.items() if key[0].qualname == qualname]


SELF_READING_MODEL = """\
import torch


class Attention(torch.nn.Module):
    def __init__(self, heads=4):
        super().__init__()
        self.heads = heads
        self.proj = torch.nn.Linear(4 * self.heads, 4)

    def forward(self, x):
        return self.proj(x)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = Attention()

    def forward(self, x):
        return self.attn(x).relu()


def build(compiled):
    block = Block()
    return torch.compile(block) if compiled else block
"""


def test_a_constructor_reading_its_own_attributes_is_kept(tmp_path, monkeypatch, walked):
    """``Attention.__init__`` reads ``self.heads``: the harvest of ``Attention``'s attributes walks
    ``Attention.__init__`` again, from a fresh frame, while its walk is in progress. That is
    recursion like any other: the walks from ``Block``'s harvest up are kept and replayed (they
    were all dropped, so every edit walked ``step`` and the model's forwards again)."""
    root = _project(tmp_path)
    (root / "model.py").write_text(SELF_READING_MODEL)
    first, memory = _compare(root, [{"train.py": TRAIN}], monkeypatch)
    walked.clear()
    edits = [{"train.py": TRAIN.replace("range(3)", f"range({steps})")} for steps in (4, 5)]
    seen, memory = _compare(root, edits, monkeypatch, memory)
    assert first[0] and seen == [first[0]] * 2
    assert walked == ["main", "main"], "an edit of main() walked more than main() once"


SIZED_MODEL = """\
import torch


class Block(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.proj = torch.nn.Linear(width, width)

    def forward(self, x):
        return self.proj(x).relu()
"""
ORDERED_TRAIN = """\
import torch

from model import Block


def main(x):
    {stores}
    model = torch.compile(small)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x).sum() + large(x).sum()
    loss.backward()
"""


def test_a_first_store_that_finds_what_it_stores_is_replayed(tmp_path, monkeypatch):
    """Two walks of ``Block.__init__`` (two widths) store into ``Block.proj``; which one stores
    first swaps with the script's order. A walk whose first store found the other's ``Linear``
    there, replayed where the cell is still empty, reads the same ``Linear`` afterwards: it is
    replayed, not walked again (one summary per walk key), and the findings are a fresh walk's."""
    root = _project(tmp_path)
    (root / "model.py").write_text(SIZED_MODEL)
    forward = "small = Block(4)\n    large = Block(8)"
    backward = "large = Block(8)\n    small = Block(4)"
    versions = [
        {"train.py": ORDERED_TRAIN.format(stores=forward)},
        {"train.py": ORDERED_TRAIN.format(stores=backward)},
        {"train.py": ORDERED_TRAIN.format(stores=forward) + "\n"},
    ]
    seen, memory = _compare(root, versions, monkeypatch)
    assert seen[0] and seen[1] == seen[0] == seen[2]
    assert memory.hits > 0
    kept = _summaries_of(memory, "Block.__init__")
    assert len(kept) >= 2 and set(kept) == {1}, kept  # the two widths' walks (and the harvest's)


def test_a_rehearsal_fills_the_memory_for_the_next_check(tmp_path, monkeypatch):
    """``Analyzer.rehearse`` walks the entry points again whatever is cached, for the memory alone:
    a second rehearsal replays every walk, and the edit's check after them replays too (and finds
    what a check without the memory finds)."""
    root = _project(tmp_path)
    monkeypatch.chdir(root)
    memory = WalkMemory()
    Analyzer(Config(root=root), jobs=1).check(["train.py"])  # cached: a check would not walk again
    analyzer = Analyzer(Config(root=root), jobs=1, walk_memory=memory)
    assert analyzer.rehearse(["train.py"]) > 0
    assert analyzer.rehearse(["train.py"]) == 0, "the second rehearsal walked again"
    hits = memory.hits
    edited = {(root / "train.py").resolve(): (TRAIN + "\n# edited\n").encode()}
    plain = Analyzer(Config(root=root), jobs=1, use_cache=False).check(["."], sources=edited)
    assert _findings(plain) and _findings(analyzer.check(["."], sources=edited)) == _findings(plain)
    assert memory.hits > hits
    with pytest.raises(AnalysisCancelled):
        Analyzer(Config(root=root), jobs=1, walk_memory=WalkMemory()).rehearse(["train.py"], cancelled=lambda: True)


SETTINGS = """\
class Settings:
    def __init__(self, mode, scale):
        self.mode = mode
        self.scale = scale
"""
SETTINGS_TRAIN = """\
import torch

from model import build
from settings import Settings


def main(x):
    {settings}
    model = build(True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x).sum() * fast.scale
    loss.backward()
"""


def test_a_store_never_read_afterwards_does_not_depend_on_what_it_found(tmp_path, monkeypatch, walked):
    """``Settings.__init__`` stores its arguments and reads nothing back: what its walks found in
    ``Settings.mode`` (nothing, or the other walk's constant, as the script's order says) changes
    nothing they did, so swapping the two constructions replays both walks (each was walked again:
    a first store was compared with what it found unless it found what it stores)."""
    root = _project(tmp_path)
    (root / "settings.py").write_text(SETTINGS)
    forward = 'fast = Settings("fast", 1.0)\n    slow = Settings("slow", 0.5)'
    backward = 'slow = Settings("slow", 0.5)\n    fast = Settings("fast", 1.0)'
    memory = WalkMemory()
    first, _ = _compare(root, [{"train.py": SETTINGS_TRAIN.format(settings=forward)}], monkeypatch, memory)
    assert walked.count("Settings.__init__") >= 2
    walked.clear()
    seen, _ = _compare(root, [{"train.py": SETTINGS_TRAIN.format(settings=backward)}], monkeypatch, memory)
    assert first[0] and seen == first
    assert walked == ["main"], walked


def test_a_store_a_callee_reads_afterwards_depends_on_what_it_found(tmp_path, monkeypatch, walked):
    """The near miss: ``Settings.__init__`` stores ``self.mode`` and a method it calls reads it
    back, so what its walk found there decides what the method read: swapping the constructions
    walks it again."""
    root = _project(tmp_path)
    reading = SETTINGS + "        self.label = self.describe()\n\n    def describe(self):\n        return self.mode\n"
    (root / "settings.py").write_text(reading)
    forward = 'fast = Settings("fast", 1.0)\n    slow = Settings("slow", 0.5)'
    backward = 'slow = Settings("slow", 0.5)\n    fast = Settings("fast", 1.0)'
    memory = WalkMemory()
    first, _ = _compare(root, [{"train.py": SETTINGS_TRAIN.format(settings=forward)}], monkeypatch, memory)
    walked.clear()
    seen, _ = _compare(root, [{"train.py": SETTINGS_TRAIN.format(settings=backward)}], monkeypatch, memory)
    assert first[0] and seen == first
    assert "Settings.__init__" in walked, walked


CHILDREN_MODEL = """\
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def init_weights(self):
        for module in self.modules():
            module.requires_grad_(True)

    def forward(self, x):
        return self.proj(x)
"""
TAGGED_TRAIN = """\
import torch

from model import Net


def main(x):
    net = Net()
    net.tag = {tag}
    net.init_weights()
    model = torch.compile(net)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x).sum()
    loss.backward()
"""


def test_a_walk_over_the_submodules_depends_on_the_module_attributes_only(tmp_path, monkeypatch):
    """``init_weights`` iterates ``self.modules()``: what it reads is the module-valued attributes
    of ``Net``, so the script storing another kind of value on the net (a tag) leaves its walk
    valid: it is replayed, not summarized again (it compared every attribute of the class)."""
    root = _project(tmp_path)
    (root / "model.py").write_text(CHILDREN_MODEL)
    versions = [{"train.py": TAGGED_TRAIN.format(tag=tag)} for tag in ('"a"', "1", '"a"')]
    seen, memory = _compare(root, versions, monkeypatch)
    assert seen[0] and seen[0] == seen[1] == seen[2]
    kept = _summaries_of(memory, "Net.init_weights")
    assert kept and set(kept) == {1}, kept


TRAINER_SCRIPT = """\
import torch

from model import build


class Trainer:
    def __init__(self, compiled):
        self.model = build(compiled)
        self.scale = self.default_scale()

    def default_scale(self):
        return 2.0

    def step(self, x):
        tag = "{tag}"
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = self.model(x).sum() * self.scale
        loss.backward()
        return tag


def main():
    trainer = Trainer(True)
    trainer.step(torch.randn(2, 4))


if __name__ == "__main__":
    main()
"""


def test_an_edit_of_one_method_walks_that_method_and_its_callers_only(tmp_path, monkeypatch, walked):
    """An edit of ``Trainer.step``'s body (a string constant) leaves ``Trainer.__init__``'s walk
    valid: it read the global ``build`` (the import statement, not the whole edited file), a class
    attribute (the class body runs every method's ``def``, not its body) and ``self.scale`` (the
    harvest of the trainer's attributes walks ``step`` again; ``__init__`` depends on what the
    attribute holds, not on that walk). Before, every edit walked it again."""
    root = _project(tmp_path)
    memory = WalkMemory()
    first, _ = _compare(root, [{"train.py": TRAINER_SCRIPT.format(tag="a")}], monkeypatch, memory)
    assert "Trainer.__init__" in walked
    walked.clear()
    seen, _ = _compare(root, [{"train.py": TRAINER_SCRIPT.format(tag=tag)} for tag in "bc"], monkeypatch, memory)
    assert any(path == "train.py" for _, path, *_ in first[0]) and seen == [first[0]] * 2
    assert "Trainer.step" in walked and "main" in walked
    assert "Trainer.__init__" not in walked and "build" not in walked, walked


@pytest.mark.parametrize(
    ("body", "callers_walked"),
    [
        ('print("{tag}")', False),  # what step() returns and leaves pending is the same
        ('return "{tag}"', True),  # the near miss: it returns another constant
    ],
)
def test_a_caller_depends_on_what_its_callee_returned_not_on_its_body(
    tmp_path, monkeypatch, walked, body, callers_walked
):
    """An edit of ``Trainer.step``'s body walks ``step`` again; ``main``, which called it, is
    replayed when ``step`` returned and left pending what it did before (``walks.Call``), and
    walked again when it returns something else. Before, every caller of an edited function was
    walked again (pytorch-image-models: its 600-line ``main`` for an edit of ``train_one_epoch``)."""
    root = _project(tmp_path)
    script = TRAINER_SCRIPT.replace("        return tag\n", "").replace('        tag = "{tag}"\n', f"        {body}\n")
    memory = WalkMemory()
    first, _ = _compare(root, [{"train.py": script.format(tag="a")}], monkeypatch, memory)
    walked.clear()
    seen, _ = _compare(root, [{"train.py": script.format(tag=tag)} for tag in "bc"], monkeypatch, memory)
    assert any(path == "train.py" for _, path, *_ in first[0]) and seen == [first[0]] * 2
    assert "Trainer.step" in walked
    assert ("main" in walked) == callers_walked, walked


REGISTRY = """\
import torch


class Spec:
    def __init__(self, name, compiled):
        self.name = name
        self.compiled = compiled


SPECS = {}


def register(spec):
    if spec.name in SPECS:
        raise ValueError(spec.name)
    SPECS[spec.name] = spec
"""
REGISTERING_TRAIN = """\
import torch

from registry import SPECS, Spec, register
from model import build


def main(x):
    {registrations}
    model = SPECS["a"].compiled
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x).sum()
    loss.backward()
"""


def test_a_callee_called_in_many_heap_states_is_replayed_in_each(tmp_path, monkeypatch):
    """``register`` is called six times with the same abstract argument, and each call reads a
    ``Spec.name`` one registration longer: six summaries of one walk key. Kept (up to
    ``WalkMemory.PER_KEY``), a second rehearsal replays all of them (with four kept, every
    rehearsal walked the calls whose summaries the others had pushed out)."""
    root = _project(tmp_path)
    (root / "registry.py").write_text(REGISTRY)
    registrations = "\n    ".join(f'register(Spec("{name}", build(True)))' for name in "abcdef")
    (root / "train.py").write_text(REGISTERING_TRAIN.format(registrations=registrations))
    monkeypatch.chdir(root)
    memory = WalkMemory()
    analyzer = Analyzer(Config(root=root), jobs=1, walk_memory=memory)
    assert analyzer.rehearse(["train.py"]) > 0
    assert analyzer.rehearse(["train.py"]) == 0, "the second rehearsal walked again"
    assert max(_summaries_of(memory, "register")) >= 6


LAYERS = 12
LAYERED = "import torch\n\n\ndef layer0(x):\n    return torch.relu(x)\n" + "".join(
    f"\n\ndef layer{k}(x):\n    return layer{k - 1}(x) + layer{k - 1}(x)\n" for k in range(1, LAYERS)
)
LAYERED_TRAIN = f"""\
import torch

from layers import layer{LAYERS - 1}
from model import build
from steps import finish


def main():
    model = build(True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(layer{LAYERS - 1}(torch.randn(2, 4))).sum()
    finish(loss)
"""
FINISH = """\
def finish(loss):
    # {comment}
    loss.backward()
"""


def test_a_replay_spends_the_walks_a_fresh_analysis_spends(tmp_path, monkeypatch):
    """Each layer calls the one below twice: a fresh analysis walks each layer once (the second
    call is the first's walk), where the calls number 2 ** 12. A replay of the top layer's walk
    with everything below it at once (its closure) counted each call's walks against
    ``max-function-walks``: after an edit of ``finish``, the language server's edit pass said
    "analysis incomplete" (CAL900) and left ``finish`` unwalked, where the command line reports
    its backward."""
    root = _project(tmp_path)
    (root / "layers.py").write_text(LAYERED)
    (root / "train.py").write_text(LAYERED_TRAIN)
    versions = [{"steps.py": FINISH.format(comment=f"edit {k}")} for k in range(3)]
    seen, memory = _compare(root, versions, monkeypatch, max_function_walks=200)
    assert [(code, path) for code, path, *_ in seen[0]] == [("CAL002", "steps.py")]
    assert seen[2] == seen[0]
    assert memory.hits > 0


# -- module views kept across checks ----------------------------------------------------------------


def test_a_kept_view_serves_the_same_bytes_only(tmp_path):
    """``ViewMemory`` hands back the view it built for the same path, name and bytes (with its
    block summaries), counted as served from memory by the new check; other bytes or another
    display name get a view of their own."""
    path = _project(tmp_path) / "model.py"
    views = ViewMemory()
    first_counter, second_counter = ParseCounter(), ParseCounter()
    first = load_view(path, "model.py", None, first_counter, views=views)
    assert first.function("build") is not None and first_counter.parsed == {"model.py"}
    again = load_view(path, "model.py", None, second_counter, views=views)
    assert again is first and again.counter is second_counter
    assert second_counter.cached == {"model.py"} and not second_counter.parsed
    assert again.function("build") is first.function("build")  # summarized once
    edited = load_view(path, "model.py", None, ParseCounter(), source=MODEL.encode() + b"\n# edited\n", views=views)
    assert edited is not first and edited.digest != first.digest
    assert load_view(path, str(path), None, ParseCounter(), views=views) is not first  # named otherwise
    assert load_view(path, "model.py", None, ParseCounter(), views=views) is first  # the original bytes again


def test_views_beyond_the_capacity_are_dropped_least_recently_used_first(tmp_path):
    root = _project(tmp_path)
    views = ViewMemory(capacity=2)
    model, steps, holder = (
        load_view(root / name, name, None, ParseCounter(), views=views)
        for name in ("model.py", "steps.py", "holder.py")
    )
    assert load_view(root / "holder.py", "holder.py", None, ParseCounter(), views=views) is holder
    assert load_view(root / "steps.py", "steps.py", None, ParseCounter(), views=views) is steps
    assert load_view(root / "model.py", "model.py", None, ParseCounter(), views=views) is not model  # dropped


def test_a_file_unchanged_on_disk_is_not_read_again(tmp_path, monkeypatch):
    """A kept view is served without reading its file while the file's status is what it was when
    read; a write (another size, other times) is read, and so is a file that changed just before
    it was read (its status could stay equal through a write within the clock's granularity)."""
    path = _project(tmp_path) / "model.py"
    read: list[Path] = []

    def reading(file: Path) -> bytes:
        read.append(file)
        return file.read_bytes()

    clock = {"now": time.time_ns() + 3_600_000_000_000}  # an hour after the files were written
    monkeypatch.setattr(view_module, "time", SimpleNamespace(time_ns=lambda: clock["now"]))
    monkeypatch.setattr(workspace_module, "read_source", reading)
    views = ViewMemory()
    first = load_view(path, "model.py", None, ParseCounter(), views=views)
    again = load_view(path, "model.py", None, ParseCounter(), views=views)
    assert again is first and read == [path]
    path.write_bytes(MODEL.encode() + b"\n# written\n")
    written = load_view(path, "model.py", None, ParseCounter(), views=views)
    assert written is not first and "# written" in written.text and read == [path, path]
    clock["now"] = time.time_ns()  # the file changed just now: not trusted while it may change unseen
    path.write_bytes(MODEL.encode())
    fresh = [load_view(path, "model.py", None, ParseCounter(), views=views) for _ in range(2)]
    assert fresh[0] is first and fresh[1] is first and read == [path] * 4
    path.unlink()
    gone = load_view(path, "model.py", None, ParseCounter(), views=views)
    assert gone.failure is not None and "cannot read" in gone.failure.message


def test_an_edited_buffers_earlier_result_is_rejected_at_the_buffer(tmp_path, monkeypatch):
    """The language server's check of an edited buffer finds the buffer's last result, which the
    edit made stale: the buffer's own digest is compared first, not after those of every file the
    result read (135 files for the generated framework's trainer, read and hashed each edit)."""
    root = _project(tmp_path)
    monkeypatch.chdir(root)
    digested: list[str] = []
    original = Run._digest

    def digest(self, path):
        digested.append(path.name)
        return original(self, path)

    monkeypatch.setattr(Run, "_digest", digest)
    memory, train = EntryMemory(), (root / "train.py").resolve()
    for k in range(2):
        digested.clear()
        buffer = f"{TRAIN}\n# edit {k}\n".encode()
        Analyzer(Config(root=root), jobs=1, cache_root=root, memory=memory).check([str(train)], sources={train: buffer})
    assert digested and set(digested) == {"train.py"}
