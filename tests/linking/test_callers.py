"""Which files are analyzed as callers of a function whose anchor depends on its parameters.

A file is a caller candidate when it calls the function's name and its text can reach that
function (``pipeline.callers.may_see``): its own file, an import of it by name, its module's name spelled, or
(for a method) its class named; a nested function only from its own file. A script calling its own
``main()``, a ``dict.update(...)`` or a ``model.eval()`` is not a caller of another module's
``main``, a class's ``update`` or a test's local ``eval``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from robustness_helpers import count_analyses

from compile_ad_lint import Config
from compile_ad_lint.api import Analyzer
from compile_ad_lint.pipeline import callers as prefilter
from compile_ad_lint.pipeline.workspace import Workspace

DEFINING = Path("/project/pkg/train.py")


@pytest.mark.parametrize(
    ("source", "qualname", "seen"),
    [
        (b"from pkg.train import main\nmain(model)\n", "main", True),
        (b"from pkg.train import main as run\nrun(model)\nmain()\n", "main", True),
        (b"from pkg import main\nmain(model)\n", "main", True),  # re-exported by pkg/__init__.py
        (b"from . import main\nmain(model)\n", "main", True),
        (b"from .helpers import (\n    main,\n)\nmain(model)\n", "main", True),
        (b"from pkg.train import (\n    setup,\n    main,\n)\nmain(model)\n", "main", True),
        (b"import pkg.train\npkg.train.main(model)\n", "main", True),
        (b"from pkg import train as t\nt.main(model)\n", "main", True),
        (b"def main():\n    pass\n\n\nif __name__ == '__main__':\n    main()\n", "main", False),
        (b"from other import main\nmain()\n", "main", False),
        (b"import os\n\n\ndef main():\n    os.getcwd()\n\nmain()\n", "main", False),
        (b"from pkg.train import Trainer\nTrainer(cfg).update(batch)\n", "Trainer.update", True),
        (b"class Mine(Trainer):\n    pass\n\nMine().update(batch)\n", "Trainer.update", True),
        (b"stats = {}\nstats.update(loss=1.0)\n", "Trainer.update", False),
        (b"make_step()(x)\nstep(x)\n", "make.<locals>.step", False),
        (b"model.eval()\n", "_test_rosenbrock.<locals>.eval", False),
        (b"from pkg.train import Outer\nOuter.Inner().step(x)\n", "Outer.Inner.step", True),
        # The module's name as prose, a call or a variable is no import of it (huggingface/peft).
        (b"import os\n# train fast\nmain(model)\n", "main", False),
        (b"train = load()\nmain(model)\n", "main", False),
        (b"from pkg import train\ntrain.main(model)\n", "main", True),
        (b"import pkg\npkg.train.main(model)\n", "main", True),
        (b"from pkg import (\n    train,\n)\ntrain.main(model)\n", "main", True),
        (b"from pkg.train import train\ntrain(cfg)\n", "train", True),
        (b"from pkg import train\ntrain.train(cfg)\n", "train", True),
        (b"import pkg.train\npkg.train.train(cfg)\n", "train", True),
        (b"from .train import train as run\nrun(cfg)\ntrain (cfg)\n", "train", True),
        (b"model.train()\nmodel.train (False)\n", "train", False),
        (b"def train(cfg):\n    model.train()\n\n\ntrain(cfg)\n", "train", False),
        # The module imported by name in a list over several lines, aliased, or by an import call.
        (b"from pkg import (\n    helpers,\n    train as t,\n)\nt.main(model)\n", "main", True),
        (b"from pkg import (  # noqa: F401\n    train as t,  # the loop\n)\nt.main(model)\n", "main", True),
        (b"from pkg import helpers, \\\n    train as t\nt.main(model)\n", "main", True),
        (b"from other import (\n    train as t,\n)\nt.main(model)\n", "main", False),
        (b"try: import train as t\nexcept ImportError: t = None\nt.main(model)\n", "main", True),
        (b"import os; import train as t\nt.main(model)\n", "main", True),
        (b"t = importlib.import_module('train')\nt.main(model)\n", "main", True),
        (b't = __import__("train")\nt.main(model)\n', "main", True),
        (b'print("train")\nlabel = "train: done"\nmain(model)\n', "main", False),
        (b"# later: import the train loop\nmain(model)\n", "main", False),
        # A dotted path reaches pkg/train.py through pkg (or what an import binds pkg to), a relative
        # path or a computed one; forge.train is another module named train.
        (b"from forge.train.trainer import Trainer\nmain(model)\n", "main", False),
        (b"import forge.train\nforge.train.main(model)\n", "main", False),
        (b"import project.pkg.train\nproject.pkg.train.main(model)\n", "main", True),
        (b"import project.pkg as p\np.train.main(model)\n", "main", True),
        (b"from project import pkg as p\np.train.main(model)\n", "main", True),
        (b"from ..train import main as run\nrun(model)\n", "main", True),
        (b"task = importlib.import_module(f'{name}.train')\ntask.main(model)\n", "main", True),
        (b"task = importlib.import_module('other.train')\ntask.main(model)\n", "main", False),
        (b'"""Module experiments/contrastive/train.py."""\nmain(model)\n', "main", False),
        (b"import train\ntrain.pyramid(model)\n", "main", True),
    ],
)
def test_what_a_caller_spells(source, qualname, seen):
    assert prefilter.may_see(source, Path("/project/run.py"), DEFINING, qualname) is seen


def test_a_method_is_seen_where_a_subclass_is_named():
    source = b"from pkg.trainers import MyTrainer\nMyTrainer().step(model, x)\n"
    assert not prefilter.may_see(source, Path("/project/run.py"), DEFINING, "BaseTrainer.step")
    assert prefilter.may_see(source, Path("/project/run.py"), DEFINING, "BaseTrainer.step", {"MyTrainer"})


def test_subclasses_are_found_through_every_spelling_of_the_base_and_transitively():
    index = prefilter.subclass_index(
        [
            b"class Mid(pkg.BaseTrainer):\n    pass\n",
            b"class Leaf(Generic[T], Mid, metaclass=Meta):\n    pass\n\n    class Nested(Leaf):\n        pass\n",
            b"class Other(object):\n    pass\n# class Fake(BaseTrainer) is text in a comment line\n",
            b"class Typed[ModelT: nn.Module, OptT] (Mid):\n    pass\n",  # Python 3.12's type parameters
        ]
    )
    assert prefilter.subclasses_of("BaseTrainer", index) == {"Mid", "Leaf", "Nested", "Typed"}
    assert prefilter.subclasses_of("Leaf", index) == {"Nested"}
    assert prefilter.subclasses_of("Unrelated", index) == frozenset()


#: What ``pipeline.callers.class_definitions`` must find: the matches of its pattern anchored at line starts.
_ANCHORED_CLASS = re.compile(rb"^[ \t]*class[ \t]+(\w+)[ \t]*(?:\[[^\]\n]*\][ \t]*)?\(([^)]*)\)", re.MULTILINE)


@pytest.mark.parametrize(
    "source",
    [
        b"class A(B):\n    class C(D, E):\n\tclass F(G): pass\n",
        b's = "class X("\nclass Real(Base):\n    pass\n',  # text running on into a real definition
        b"x = 1; class Late(Base): pass\nsubclass Fake(Base)\nclassy = Fake(Base)\n",
        b"class Multi(\n    Base,\n    Other,\n):\n    pass\nclass Next(Base): pass\n",
        b"class A(B) class C(D)\r\nclass E(F)\r\n  \t class G(H)\n",
        b"class Pipe[TIn, TOut](Base):\n    class Inner[T] (Pipe):\nclass Open[T\n](Base):\n",
        b'# class Comment(Base)\n"""\nclass InString(Base)\n"""\n',
        b"",
    ],
)
def test_class_definitions_are_those_starting_a_line(source):
    found = [(m.start(1), m.group(1), m.group(2)) for m in prefilter.class_definitions(source)]
    assert found == [(m.start(1), m.group(1), m.group(2)) for m in _ANCHORED_CLASS.finditer(source)]


def _anchored_spelled(source: bytes, word: str) -> bool:
    return re.search(rb"\b" + re.escape(word.encode()) + rb"\b", source) is not None


def _anchored_imports(source: bytes, name: str) -> list[bytes]:
    word = re.escape(name.encode())
    pattern = (
        rb"\bfrom[ \t]+([.\w]+)[ \t]+import(?:[ \t]+(?:[\w \t,]|\\\r?\n)*?|[ \t]*\((?:[\w\s,]|#[^\n]*\n)*?)\b"
        + word
        + rb"\b"
    )
    return [m.group(1) for m in re.finditer(pattern, source)]


@pytest.mark.parametrize(
    ("source", "word"),
    [
        (b"main(x)", "main"),  # at the start of the text
        (b"domain(x)\nmain_loop()\n", "main"),
        (b"run(x) # main", "main"),  # at the end
        (b"x.main\xc3\xa9()\n", "main"),  # a non-ASCII byte after the word is not a word byte
        (b"_main()\n9main\nmain9\n", "main"),
        ("\u00fcber = 1\n".encode(), "\u00fcber"),  # a word starting with non-ASCII bytes
        (b"xfrom pkg import main\n", "main"),
        (b"xfrom pkg import (\n  setup,\n)\nfrom other.pkg import main\n", "main"),
        (b"xfrom a import (b,\nfrom pkg import main\n", "main"),  # a rejected match spans a real one
        (b"from pkg import mains, main_, remain\nfrom . import (\n    a,\n    main,\n)\n", "main"),
        (b"from pkg.sub import setup, main\n", "main"),
        (b"from pkg import setup, \\\n    main as m\nfrom . import (  # re-exported\n    main,\n)\n", "main"),
        (b"from pkg import setup \\ main\nfrom pkg import (setup) # main\n", "main"),
        # A long comment in the parentheses, the name not there: one way to match it (no backtracking).
        (b"from pkg import (  # " + b"words and more words " * 8 + b"\n    setup,\n)\n", "main"),
        (b"", "main"),
        (b"x = a-b\n", "a-b"),  # not one word: searched as text whatever was asked before
        (b"x = a-bc\n", "a-b"),
    ],
)
def test_spellings_are_whole_words_as_the_boundary_patterns_find(source, word):
    """``_spelled`` and ``_imported_from`` search from the word (the regex engine's literal scan)
    and check the boundary before it: they find what the patterns starting with ``\\b`` find;
    so does a file asked about many words, which is looked up in the set of its words."""
    assert prefilter.spelled(source, word) is _anchored_spelled(source, word)
    many = source + b"\n# many words\n"  # its own bytes object: its count of searches starts at 0
    for other in [f"other{i}" for i in range(40)]:
        assert prefilter.spelled(many, other) is _anchored_spelled(many, other)
    assert prefilter.spelled(many, word) is _anchored_spelled(many, word)
    modules = _anchored_imports(source, word)
    for packages in (frozenset(), frozenset({"pkg"}), frozenset({"sub"})):
        expected = any(m.startswith(b".") or m.rsplit(b".", 1)[-1].decode() in packages for m in modules)
        assert prefilter.imported_from(source, word, packages) is expected


BASE_TRAINER = """\
import torch


class BaseTrainer:
    def step(self, model, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(x).sum()
        loss.backward()
"""
MY_TRAINER = """\
from base import BaseTrainer


class MyTrainer(BaseTrainer):
    pass
"""
RUN_MY_TRAINER = """\
import torch

from trainers import MyTrainer

MyTrainer().step(torch.compile(torch.nn.Linear(4, 4)), torch.randn(2, 4))
"""


def test_a_script_constructing_a_subclass_is_a_caller_of_the_base_method(tmp_path, monkeypatch):
    """The base class's ``step`` backwards under autocast what its caller passes; the script names
    only the subclass (defined in a third file) and passes a compiled module."""
    (tmp_path / "base.py").write_text(BASE_TRAINER)
    (tmp_path / "trainers.py").write_text(MY_TRAINER)
    (tmp_path / "run.py").write_text(RUN_MY_TRAINER)
    monkeypatch.chdir(tmp_path)
    report = Analyzer(Config(root=tmp_path), jobs=1, use_cache=False).check(["."])
    assert [(f.code, f.location.path, f.location.line) for f in report.findings] == [("CAL002", "base.py", 8)]


MODULE_TRAINER = """\
import torch
from accelerate import Accelerator
from torch import nn


class Trainer(nn.Module):
    def __init__(self, unet, fp16=False):
        super().__init__()
        self.unet = unet
        self.accelerator = Accelerator(mixed_precision="fp16" if fp16 else "no")

    def forward(self, x):
        unet = self.accelerator.prepare(self.unet)
        with self.accelerator.autocast():
            loss = unet(x).mean()
        self.accelerator.backward(loss)
        return loss.item()
"""
RUN_THROUGH_INSTANCE = """\
import torch
from trainer import Trainer


def main():
    trainer = Trainer(torch.nn.Linear(4, 4), fp16=True)
    for _ in range(3):
        trainer(torch.randn(2, 4))
"""
#: Near misses: another module class called the same way, and the trainer named but never built.
RUN_ANOTHER_MODULE = """\
import torch


class Other(torch.nn.Module):
    def forward(self, x):
        return x


def main():
    other = Other()
    other(torch.randn(2, 4))
"""
NAMES_THE_TRAINER = """\
from trainer import Trainer


def run(trainer: Trainer, x):
    return trainer(x)
"""
#: A root of the first round (it holds a backward) that builds and calls a trainer from its module
#: code: that analysis walked the call already; it is not analyzed again as a caller.
ROOT_BUILDING_THE_TRAINER = """\
import torch
from trainer import Trainer


def main():
    trainer = Trainer(torch.nn.Linear(4, 4), fp16=True)
    trainer(torch.randn(2, 4))


def finetune(model, x):
    model(x).sum().backward()


main()
"""


def test_a_file_constructing_a_module_is_a_caller_of_its_forward(tmp_path, monkeypatch):
    """``trainer(x)`` runs ``Trainer.forward`` (where the mixed precision comes from the caller's
    ``fp16=True``) without spelling ``forward``: the blocks building a ``Trainer`` are entry points."""
    (tmp_path / "trainer.py").write_text(MODULE_TRAINER)
    (tmp_path / "run.py").write_text(RUN_THROUGH_INSTANCE)
    (tmp_path / "other.py").write_text(RUN_ANOTHER_MODULE)
    (tmp_path / "names.py").write_text(NAMES_THE_TRAINER)
    (tmp_path / "script.py").write_text(ROOT_BUILDING_THE_TRAINER)
    monkeypatch.chdir(tmp_path)
    seen = count_analyses(monkeypatch)
    report = Analyzer(Config(root=tmp_path), jobs=1, use_cache=False).check(["."])
    assert [(f.code, f.location.path, f.location.line) for f in report.findings] == [("CAL002", "trainer.py", 16)]
    assert sorted(seen) == [
        ("run.py", frozenset({"Trainer"})),
        ("script.py", frozenset()),
        ("trainer.py", frozenset()),
    ]


def test_the_defining_file_is_always_a_caller():
    assert prefilter.may_see(b"def main(m):\n    pass\n\nmain(x)\n", DEFINING, DEFINING, "main")


def test_a_package_function_is_reached_through_the_package_name():
    package = Path("/project/pkg/steps/__init__.py")
    assert prefilter.may_see(b"from pkg import steps\nsteps.run(m)\n", Path("/project/a.py"), package, "run")
    assert not prefilter.may_see(b"run(m)\n", Path("/project/a.py"), package, "run")


TRAIN = """\
import torch


def main(model, x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x).sum()
    loss.backward()
"""
RUN = """\
import torch

from train import main

main(torch.compile(torch.nn.Linear(4, 4)), torch.randn(2, 4))
"""
#: Scripts with their own ``main``: none of them can call train.main.
SCRIPT = """\
import torch


def main():
    print(torch.zeros(1))


if __name__ == "__main__":
    main()
"""


def test_scripts_calling_their_own_main_are_not_analyzed_as_callers(tmp_path, monkeypatch):
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "run.py").write_text(RUN)
    for k in range(5):
        (tmp_path / f"tool_{k}.py").write_text(SCRIPT)
    monkeypatch.chdir(tmp_path)
    seen = count_analyses(monkeypatch)
    report = Analyzer(Config(root=tmp_path), jobs=1, use_cache=False).check(["."])
    assert [(f.code, f.location.path, f.location.line) for f in report.findings] == [("CAL002", "train.py", 7)]
    assert sorted(seen) == [("run.py", frozenset({"main"})), ("train.py", frozenset())]


def test_a_name_asked_again_for_another_function_reaches_that_functions_callers(tmp_path, monkeypatch):
    """Two libraries' ``main``s both want callers: each caller is analyzed for the one it can see,
    once per name."""
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "finetune.py").write_text(TRAIN.replace("bfloat16", "float16").replace('"cpu"', '"cuda"'))
    (tmp_path / "run.py").write_text(RUN)
    (tmp_path / "run_finetune.py").write_text(RUN.replace("from train", "from finetune"))
    monkeypatch.chdir(tmp_path)
    report = Analyzer(Config(root=tmp_path), jobs=1, use_cache=False).check(["."])
    assert sorted((f.code, f.location.path) for f in report.findings) == [
        ("CAL002", "finetune.py"),
        ("CAL002", "train.py"),
    ]


@pytest.mark.parametrize(
    "importing",
    [
        "from pkg import (\n    helpers,\n    train as loop,  # the training loop\n)\n",
        "from pkg import helpers, \\\n    train as loop\n",
        "try: import train as loop\nexcept ImportError: loop = None\n",
    ],
)
def test_a_caller_importing_the_module_under_another_name_is_analyzed(tmp_path, monkeypatch, importing):
    """The script reaches ``pkg/train.py``'s ``main`` only through an alias of its module: the
    hazard in ``main`` depends on the compiled model the script passes."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "helpers.py").write_text("")
    (tmp_path / "pkg" / "train.py").write_text(TRAIN)
    run = "import torch\n\n" + importing + "\nloop.main(torch.compile(torch.nn.Linear(4, 4)), torch.randn(2, 4))\n"
    (tmp_path / "run.py").write_text(run)
    top_level = "from pkg" not in importing  # ``import train``: a module of that name beside the script
    if top_level:
        (tmp_path / "train.py").write_text(TRAIN)
    monkeypatch.chdir(tmp_path)
    report = Analyzer(Config(root=tmp_path), jobs=1, use_cache=False).check(["."])
    found = [(f.code, f.location.path, f.location.line) for f in report.findings]
    assert found == [("CAL002", "train.py" if top_level else "pkg/train.py", 7)]


#: A training script: ``train_one_epoch``'s hazard depends on what ``main`` (in the same file) passes.
SCRIPT_TRAIN = """\
import torch

model = torch.compile(torch.nn.Linear(4, 4))


def train_one_epoch(net, x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = net(x).sum()
    loss.backward()


def main():
    train_one_epoch(model, torch.randn(2, 4))


if __name__ == "__main__":
    main()
"""


def test_callers_in_the_same_file_are_entry_points_of_its_one_analysis(tmp_path, monkeypatch):
    """``main`` calls ``train_one_epoch`` with the compiled model: the script is analyzed once,
    with ``main`` made an entry point as soon as ``train_one_epoch`` asked for its callers, instead
    of a second analysis of the whole file in the next round."""
    (tmp_path / "train.py").write_text(SCRIPT_TRAIN)
    monkeypatch.chdir(tmp_path)
    seen = count_analyses(monkeypatch)
    report = Analyzer(Config(root=tmp_path), jobs=1, use_cache=False).check(["."])
    assert [(f.code, f.location.line) for f in report.findings] == [("CAL002", 9)]
    assert seen == [("train.py", frozenset())]
    train = (tmp_path / "train.py").resolve()
    result = Workspace(Config(root=tmp_path), None, [tmp_path], {train: "train.py"}, {}).analyze(train, frozenset())
    assert "train_one_epoch" in result.covered
    assert (str(train), "train_one_epoch") in result.caller_requests


def _three_files_recording(tmp_path: Path, monkeypatch, prefilter_function: str) -> list[bytes]:
    """A project of TRAIN, RUN and a file calling nothing, the working directory there, and the
    sources ``prefilter.<prefilter_function>`` is asked about from now on."""
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "run.py").write_text(RUN)
    (tmp_path / "empty.py").write_text("X = 1\n")
    monkeypatch.chdir(tmp_path)
    asked: list[bytes] = []
    original = getattr(prefilter, prefilter_function)

    def recording(source: bytes):  # type: ignore[no-untyped-def]
        asked.append(source)
        return original(source)

    monkeypatch.setattr(prefilter, prefilter_function, recording)
    return asked


def test_the_called_names_of_each_file_are_kept_in_the_cache(tmp_path, monkeypatch):
    """The index of called names comes back from the cache for unchanged files (including one that
    calls nothing): a later check scans only the file that changed, and finds the same callers
    (the caller's names are the cached ones)."""
    scanned = _three_files_recording(tmp_path, monkeypatch, "called_names_of")
    first = Analyzer(Config(root=tmp_path), jobs=1).check(["."])
    assert len(scanned) == 3
    assert prefilter.called_names_of(b"X = 1\n") == frozenset()
    (tmp_path / "train.py").write_text(TRAIN + "\n# edited\n")
    scanned.clear()
    again = Analyzer(Config(root=tmp_path), jobs=1).check(["."])
    assert scanned == [(tmp_path / "train.py").read_bytes()]
    assert [(f.code, f.location.path, f.location.line) for f in again.findings] == [("CAL002", "train.py", 7)]
    assert again.findings == first.findings


def test_which_files_can_hold_an_anchor_is_kept_in_the_cache(tmp_path, monkeypatch):
    """Each file's answer to "can it hold an anchor" comes back from the cache by its contents: a
    later check searches only the file that changed, and a file that gains an anchor is analyzed."""
    searched = _three_files_recording(tmp_path, monkeypatch, "has_anchor")
    first = Analyzer(Config(root=tmp_path), jobs=1).check(["."])
    assert sorted(searched) == sorted([TRAIN.encode(), RUN.encode(), b"X = 1\n"])
    assert [(f.code, f.location.path, f.location.line) for f in first.findings] == [("CAL002", "train.py", 7)]
    searched.clear()
    seen = count_analyses(monkeypatch)
    (tmp_path / "empty.py").write_text(
        "import torch\n\nloss = torch.ones(1, requires_grad=True).sum()\nloss.backward()\n"
    )
    again = Analyzer(Config(root=tmp_path), jobs=1).check(["."])
    assert searched == [(tmp_path / "empty.py").read_bytes()]
    assert ("empty.py", frozenset()) in seen
    assert again.findings == first.findings


def test_the_table_of_files_holding_anchors_is_written_by_checks_of_saved_files_only(tmp_path, monkeypatch):
    """A check of an unsaved buffer (the language server's at each keystroke) and the server's
    rehearsal read the table but leave it as a check of the files on disk wrote it."""
    from compile_ad_lint.api import WalkMemory
    from compile_ad_lint.cache import SummaryCache

    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "run.py").write_text(RUN)
    monkeypatch.chdir(tmp_path)
    Analyzer(Config(root=tmp_path), jobs=1).check(["."])
    cache = SummaryCache.open(tmp_path, create=False)
    assert cache is not None

    def tables() -> dict[str, bytes]:
        entries = (tmp_path / ".compile_ad_lint_cache").glob("[0-9a-f][0-9a-f]/*.json")
        return {e.name: e.read_bytes() for e in entries if cache.load(e.stem, dict[str, bool]) is not None}

    written = tables()
    assert len(written) == 1
    train = (tmp_path / "train.py").resolve()
    unsaved = {train: (TRAIN + "\nprint('unsaved')\n").encode()}
    analyzer = Analyzer(Config(root=tmp_path), jobs=1, walk_memory=WalkMemory())
    assert [f.code for f in analyzer.check(["."], sources=unsaved).findings] == ["CAL002"]
    analyzer.rehearse(["."], sources=unsaved)
    assert tables() == written


def test_the_called_names_are_whole_names_followed_by_a_parenthesis():
    """A name counts once it is whole (not the tail of a longer word or of a number) and a ``(``
    follows it, after any whitespace; the pattern matches each name once and never a shorter
    piece of it (a name not followed by ``(`` is not tried again one character shorter)."""
    source = b"fit(x)\nself.step (y)\nmodel_2(z)\n1e5(w)\n0x1f(v)\nconfig\nstep_fn  \n  (u)\n_private()\nx.y\n"
    assert prefilter.called_names_of(source) == {b"fit", b"step", b"model_2", b"step_fn", b"_private"}


@pytest.mark.parametrize(
    ("source", "aliases"),
    [
        (
            b"from util.misc import NativeScalerWithGradNormCount as NativeScaler\n",
            {"NativeScalerWithGradNormCount": {"NativeScaler"}},
        ),
        (b"import pkg.train as t\nimport os\n", {"train": {"t"}}),
        (b"from importlib import import_module as load\n", {"import_module": {"load"}}),
        (b"from m import (\n    a as b,\n    c,\n    d\n    as e,\n)\n", {"a": {"b"}, "d": {"e"}}),
        (b"    import a as b; import c as d\n", {"a": {"b"}, "c": {"d"}}),
        (b"from m import (a as b); import c as d\n", {"a": {"b"}}),  # not a statement's start: not read
        (b"x = 'import y as z'\nprint(x as_, 1)\n", {}),
        (b"#import a as b\nimport_a as b\nreimport a as b\n", {}),
        (b"import a\n\tas_b = 1\nfrom m import c as d\r\nimport e as f", {"c": {"d"}, "e": {"f"}}),
        (b"from m import (\n    imported as x)\nimport y as z\n", {"imported": {"x"}, "y": {"z"}}),
        (b"import a as b\n" * 3, {"a": {"b"}}),
    ],
)
def test_the_names_imports_bind_under_another_name(source, aliases):
    """Each import statement at the start of a line (a parenthesized name list over several lines
    included) gives the names it binds under another, by the last part of the name imported; text
    that only spells ``import`` or ``as`` gives none."""
    assert prefilter.import_aliases(source) == aliases


BACKWARD_HELPER = """
import torch


def backward(total_loss, scaler):
    if scaler is not None:
        scaler.scale(total_loss).backward()
    else:
        total_loss.backward()


def train_one_epoch(model, data, scaler):
    for x in data:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(x).sum()
        backward(loss, scaler)
"""

COMPILING_MAIN = """
import torch
from train import train_one_epoch


def main():
    model = torch.compile(torch.nn.Linear(4, 4))
    train_one_epoch(model, [torch.randn(2, 4)], None)


if __name__ == "__main__":
    main()
"""


def test_a_backward_helper_reused_from_another_entry_asks_for_that_entrys_callers(tmp_path, monkeypatch):
    """mlfoundations/open_lm: ``train_one_epoch`` backwards through a ``backward(loss, scaler)``
    helper of its file, and the model is compiled in ``main.py``. The helper, an entry point of its
    own, was walked first and asked for its own callers; ``train_one_epoch``'s call reused that
    walk and asked for nothing, so ``main.py`` was never analyzed and the hazard was missed."""
    (tmp_path / "train.py").write_text(BACKWARD_HELPER)
    (tmp_path / "main.py").write_text(COMPILING_MAIN)
    monkeypatch.chdir(tmp_path)
    report = Analyzer(Config(root=tmp_path), jobs=1, use_cache=False).check(["."])
    assert [(f.code, f.location.path, f.location.line) for f in report.findings] == [("CAL002", "train.py", 9)]
