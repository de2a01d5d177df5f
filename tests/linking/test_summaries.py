"""Block summaries are the same whether a block's own text is parsed or the module's tree is
reused; the file prefilter picks exactly the files whose text the outline would anchor.

A cold run summarizes blocks from the tree the outline was built from (one parse per file); a
later root, or a warm outline, parses the block's text. Positions in the summaries decide every
reported column, so the two ways must agree exactly.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from compile_ad_lint.core.text import LINE_END, line_starts, split_lines
from compile_ad_lint.pipeline.callers import has_anchor
from compile_ad_lint.summary.extract import summarize_block
from compile_ad_lint.summary.outline import ANCHOR_PATTERN
from compile_ad_lint.summary.view import ModuleView, ParseCounter

REPO = Path(__file__).resolve().parents[2]
TRICKY = {
    "crlf": "import torch\r\n\r\n@torch.compile\r\ndef f(x):\r\n    return (x,\r\n            x)\r\n",
    "lone_cr": "import torch\rx = (1,\r     2)\rdef g(): return torch.sin(x)\r",
    "non_ascii": 'é = "ü"\ndef h(ä):\n    return (ä, é)  # größe\nclass K:\n    def m(self):\n        return "ß".upper()\n',
    "shared_line": "x = 1; y = 2\ndef f(): return x\nclass C: pass; z = 3\n",
    "decorated_run": "import functools\n\n@functools.cache\n@staticmethod\ndef a():\n    pass\nb = a()\nc = (b,)\n",
}


def _parses_with_code(source: bytes) -> bool:
    try:
        return bool(ast.parse(source).body)
    except SyntaxError:
        return False  # the fixtures of CAL900


def _cases() -> list[tuple[str, bytes]]:
    files = sorted((REPO / "fixtures").rglob("*.py"))
    fixtures = [(str(path.relative_to(REPO)), path.read_bytes()) for path in files]
    return [(name, source) for name, source in fixtures if _parses_with_code(source)] + [
        (name, text.encode()) for name, text in TRICKY.items()
    ]


@pytest.mark.parametrize(("name", "source"), _cases(), ids=[name for name, _ in _cases()])
def test_a_block_summary_does_not_depend_on_which_parse_made_it(name, source):
    view = ModuleView(name, source, "pkg.mod", False, None, ParseCounter())
    assert view.failure is None
    assert view.blocks, "every case has code"
    assert view._tree is not None, "a view that built its outline holds the tree: the path under test"
    for index, block in enumerate(view.blocks):
        text = "".join(view.lines[block.first_line - 1 : block.last_line])
        assert view.block(index) == summarize_block(text, "pkg.mod", False, block.first_line), (name, block)


ANCHOR_CASES = [
    b"loss.backward()",
    b"x.backward  (",
    b"grad(f)(x)",
    b"xgrad(f)",
    b"_grad(x)",
    b"a.grad (x)",
    b"\xc3\xa9grad(x)",  # a non-ASCII letter before: a boundary for bytes, not for the outline's text
    b"torch.autograd.grad(y, x)",
    b"with fwAD.dual_level():",
    b"model.fit(x)",
    b"fit(x)",
    b"args = TrainingArguments(output_dir='o')",
    b"args = MyTrainingArguments(output_dir='o')",
    b"from torch.autograd import functional",
    b"config.backward_pass_autocast = 'off'",
    b"y = 1",
    b"agrad(\ngrad (",
    b"from torch.autograd import backward as run_backward",
    b"from torch.autograd import grad",
    b"from torch.autograd import (\n    Function,\n    grad as torch_grad,\n)",
    b"from torch.autograd import Variable, \\\n    backward",
    b"from torch.autograd import gradcheck, Function",
    b"from torch.autograd import my_backward",
]


@pytest.mark.parametrize(
    ("line", "anchored"),
    [
        ("from torch.autograd import backward as run_backward", True),
        ("from torch.autograd import grad", True),
        ("from torch.autograd import Function, grad as torch_grad", True),
        ("from torch.autograd import (\n    Function,\n    backward,\n)", True),
        ("from torch.autograd import Variable, \\\n    grad", True),
        ("from torch.autograd import gradcheck, Function", False),
        ("from torch.autograd import Function", False),
        ("from torch.autograd import my_backward, backward_hook", False),
        ("from torch.autograd.graph import saved_tensors_hooks", False),
    ],
)
def test_importing_an_autograd_entry_point_is_an_anchor(line, anchored):
    """The import of ``backward`` or ``grad`` from ``torch.autograd`` anchors (by name or alias);
    its other names do not."""
    assert (ANCHOR_PATTERN.search(line) is not None) is anchored


def test_the_import_spelling_does_not_backtrack_on_long_import_lists():
    names = ", ".join(f"name{k}" for k in range(20_000))
    assert ANCHOR_PATTERN.search(f"from torch.autograd import {names}") is None
    assert ANCHOR_PATTERN.search(f"from torch.autograd import {names}, grad") is not None


@pytest.mark.parametrize("source", ANCHOR_CASES + [source for _, source in _cases()])
def test_the_file_prefilter_agrees_with_the_outlines_anchor_pattern(source):
    """``has_anchor`` picks the files to outline with one literal-first search per spelling: a file
    it skips must hold no text the outline would anchor (on ASCII text they agree exactly; a word
    boundary next to a non-ASCII letter exists only for bytes, so it may pick a file more)."""
    anchored = ANCHOR_PATTERN.search(source.decode("utf-8", "surrogateescape")) is not None
    if anchored or source.isascii():
        assert has_anchor(source) == anchored


def test_outline_names_the_modules_module_level_code_imports():
    """``ModuleOutline.imports`` (what import side effects follow): module-level imports in order,
    relative ones resolved, nested ones after their block's own statements; none from definitions."""
    source = b"""\
import os.path
from . import specs
from .models import llama, gemma as g
try:
    import optional_pkg
except ImportError:
    from ..fallback import *

def build():
    import never_at_import_time

class Registry:
    from inside_class import nothing
"""
    view = ModuleView("pkg/train/__init__.py", source, "pkg.train", True, None, ParseCounter())
    assert view.outline.imports == (
        "os.path",
        "pkg.train",
        "pkg.train.specs",
        "pkg.train.models",
        "pkg.train.models.llama",
        "pkg.train.models.gemma",
        "optional_pkg",
        "pkg.fallback",
    )


def _lines_by_line_ends(text: str) -> list[str]:
    """The lines ``LINE_END`` delimits, with their endings: what ``split_lines`` must give."""
    lines, start = [], 0
    for match in LINE_END.finditer(text):
        lines.append(text[start : match.end()])
        start = match.end()
    return [*lines, text[start:]] if start < len(text) else lines


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n",
        "x = 1",
        "x = 1\n",
        "x = 1\n\n\ny = 2",
        "a\x0cb\u2028c\x85\nd\n",  # only \n ends a line here (the fast path): not \f, U+2028 or NEL
        "a\r\nb\rc\n\r\n\rd",
        "\r",
        "a\r",
    ],
)
def test_split_lines_and_line_starts_end_lines_where_the_tokenizer_does(text: str) -> None:
    lines = split_lines(text)
    assert lines == _lines_by_line_ends(text)
    assert "".join(lines) == text
    starts = [0, *(match.end() for match in LINE_END.finditer(text))]
    assert line_starts(text) == starts
