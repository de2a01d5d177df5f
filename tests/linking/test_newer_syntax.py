"""Projects written for Python 3.12 (PEP 695: ``class C[T]``, ``def f[T]``, ``type X = ...``; PEP
701: ``f"{path / "checkpoints"}"``) are analyzed on every Python compile-ad-lint runs on, with the
positions their files have.

On Python 3.10 and 3.11 the parser rejects that syntax; ``pyast.parse`` reads such a file again
with the type parameters and the f-strings' contents blanked (``newer_syntax``). huggingface/lerobot's
five such modules and facebookresearch/lingua's MTP trainer were CAL900 "syntax error" before, and
what they define went unanalyzed.
"""

from __future__ import annotations

import ast

import pytest

from compile_ad_lint import Config, newer_syntax
from compile_ad_lint.api import Analyzer
from compile_ad_lint.rules import Case
from compile_ad_lint.testing import run_case, write_files

GENERIC_MODEL = """\
import torch

type Batch = dict[str, torch.Tensor]
type Pair[T] = tuple[T, T]


class Trainer[ModelT: torch.nn.Module, OptT](object):
    def __init__(self, model: ModelT, optimizer: OptT) -> None:
        self.model = torch.compile(model)
        self.optimizer = optimizer

    def predict[
        InputT,  # the batch type
        OutputT,
    ](self, batch: InputT) -> OutputT:
        return self.model(batch)
"""

POSITIVE = {
    "generic-class-and-method-across-modules": Case(
        """
import torch
from pkg.trainer import Trainer

trainer = Trainer(net, opt)
(g,) = torch.autograd.grad(trainer.predict(x).sum(), x, create_graph=True)  # expect: CAL004
""",
        files=(("pkg/__init__.py", ""), ("pkg/trainer.py", GENERIC_MODEL)),
    ),
    "f-string-reusing-its-quotes-before-the-hazard": Case(
        """
import logging
import torch

logger = logging.getLogger(__name__)

def train(args, net, x):
    logger.info(f"Setting checkpoint path to {str(Path(args.dump_dir) / "checkpoints")}")
    logger.info(f"step {args.step:>{args.width}} {", ".join(
        name for name in args.names  # a comment inside the field
    )}")
    model = torch.compile(net)
    model(x).sum().backward(create_graph=True)  # expect: CAL004
"""
    ),
    "generic-function-in-the-checked-file": Case(
        """
import torch

type Loss = torch.Tensor

def make_step[ŤModel](model: ŤModel):
    return torch.compile(model)

step = make_step(net)
step(x).sum().backward(create_graph=True)  # expect: CAL004
"""
    ),
}

NEGATIVE = {
    # The same generic code, without a double backward.
    "generic-class-plain-backward": Case(
        """
import torch
from pkg.trainer import Trainer

trainer = Trainer(net, opt)
trainer.predict(x).sum().backward()
""",
        files=(("pkg/__init__.py", ""), ("pkg/trainer.py", GENERIC_MODEL)),
    ),
    # ``type`` as an ordinary name is not an alias statement.
    "type-as-a-name": Case(
        """
import torch

type = torch.float32
kind = type(x)
f = torch.compile(torch.sin)
f(x).sum().backward()
"""
    ),
}


@pytest.mark.parametrize("case", list(POSITIVE.values()), ids=list(POSITIVE))
def test_positive(case: Case, tmp_path) -> None:
    expected, reported = run_case(case, tmp_path)
    assert expected and reported == expected


@pytest.mark.parametrize("case", list(NEGATIVE.values()), ids=list(NEGATIVE))
def test_negative(case: Case, tmp_path) -> None:
    expected, reported = run_case(case, tmp_path)
    assert not expected and reported == set()


def test_a_finding_after_type_parameters_keeps_its_column(tmp_path) -> None:
    """The blanked parameters take as many bytes as they had (``Ť`` is two), so what follows them on
    the line is where the file has it."""
    source = "import torch\n\ndef f[Ť](x): return torch.compile(torch.sin)(x).sum().backward(create_graph=True)\n"
    write_files(tmp_path, {"train.py": source})
    report = Analyzer(Config(), use_cache=False, jobs=1).check([str(tmp_path)])
    [finding] = [f for f in report.findings if f.code == "CAL004"]
    line = source.splitlines()[2]
    assert (finding.location.line, finding.location.column) == (3, line.index("torch.compile") + 1)


def test_a_real_syntax_error_is_reported_where_it_is(tmp_path) -> None:
    """A file with type parameters and a real error reports the error at its own line, not at the
    type parameters (which only Python 3.11's first parse rejected)."""
    source = "class Box[T]:\n    def step(self, loss): loss.backward()\n\ndef broken(:\n    pass\n"
    write_files(tmp_path, {"bad.py": source})
    report = Analyzer(Config(), use_cache=False, jobs=1).check([str(tmp_path)])
    [finding] = report.findings
    assert finding.code == "CAL900"
    assert finding.location.line == 4


def test_the_rewrite_keeps_every_other_token_where_it_was() -> None:
    source = GENERIC_MODEL + "x = 1; type Y = int\n"
    rewritten = newer_syntax.without_type_parameters(source)
    assert rewritten is not None
    assert rewritten.count("\n") == source.count("\n")
    tree = ast.parse(rewritten)
    names = {node.name: (node.lineno, node.col_offset) for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    assert names == {"__init__": (8, 4), "predict": (12, 4)}
    returns = [node for node in ast.walk(tree) if isinstance(node, ast.Return)]
    assert [(node.lineno, node.col_offset) for node in returns] == [(16, 8)]
    aliases = [
        node.targets[0].id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
    ]
    assert {"Batch", "Pair", "Y"} <= set(aliases)


def test_source_without_type_parameters_is_left_alone() -> None:
    assert newer_syntax.without_type_parameters("import torch\ntype = 1\nx = type[int]\n") is None
    assert newer_syntax.without_type_parameters("def f(:\n") is None


@pytest.mark.parametrize(
    ("source", "blanked"),
    [
        ('f"{a["k"]}" + x\n', 'f"        " + x\n'),
        ("f'{x:>{width}}' + g({{}})\n", "f'            ' + g({{}})\n"),
        ('rf"\\d{n}" # f"{c}"\n', 'rf"     " # f"{c}"\n'),
        ('f"""{\n"a"}"""\n', 'f""" \n    """\n'),
        ('f"{x\n}"\n', 'f" \\\n "\n'),  # a line break in a single-quoted string's field: continued
        ('"plain {x}" + b"{y}"\n', None),
        ("f'{{escaped}}' + f''\n", "f'           ' + f''\n"),
    ],
)
def test_fstring_contents_are_blanked_as_python_3_12_scans_them(source: str, blanked: str | None) -> None:
    assert newer_syntax.without_fstring_contents(source) == blanked


def test_an_fstring_that_does_not_end_is_left_to_the_parser() -> None:
    assert newer_syntax.without_fstring_contents('x = f"{a["k"]\n') is None
