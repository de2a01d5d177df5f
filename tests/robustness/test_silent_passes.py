"""Nothing passes silently: what the analysis needed and could not read is a finding, the text
prefilter finds every spelling the parser accepts, and the hazards hide behind no other syntax
(an assignment expression, a module ``__getattr__``, a notebook cell that does not parse).

Each case runs the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from robustness_helpers import assert_contract, check_json, write

SCRIPT = """\
import torch.autograd.forward_ad as fwAD
from cube import compiled_cube

def run(x, t):
    with fwAD.dual_level():
        return compiled_cube(fwAD.make_dual(x, t))
"""
CUBE = "import torch\ncompiled_cube = torch.compile(torch.sin)\n"


def _codes(result) -> list[tuple[str, int, str]]:
    return sorted((Path(f["path"]).name, f["line"], f["code"]) for f in result.findings)


@pytest.mark.parametrize(
    ("cube", "reason"),
    [
        (b"import torch\ncompiled_cube = torch.compile(cube\n", "'(' was never closed"),
        (b"\x00\x01binary\x00\xff\xfe\n", "cannot"),
        (CUBE.encode("utf-16"), "cannot decode"),
    ],
    ids=["syntax error", "binary", "utf-16 without a cookie"],
)
def test_an_imported_module_that_cannot_be_read_is_reported(tmp_path: Path, cube: bytes, reason: str) -> None:
    """The script is checked alone: the module it imports is no checked file, so the finding is on
    the script ("analysis incomplete"); checked too, the module has its own."""
    project = write(tmp_path, {"pyproject.toml": "[tool.compile-ad-lint]\n", "train.py": SCRIPT, "cube.py": cube})
    alone = check_json(["train.py"], project)
    assert_contract(alone, (1,))
    [finding] = alone.findings
    assert (finding["path"], finding["code"]) == ("train.py", "CAL900")
    assert finding["message"].startswith("analysis incomplete: cube.py:") and reason in finding["message"]
    both = check_json(["."], project)
    assert_contract(both, (1,))
    assert [(Path(f["path"]).name, f["code"]) for f in both.findings] == [("cube.py", "CAL900")]
    assert reason in both.findings[0]["message"]


BACKWARD_AFTER_AUTOCAST = """\
import torch

step = torch.compile(net)


def train(x):
    with torch.autocast("cpu"):
        loss = step(x).sum()
    {backward}
"""


@pytest.mark.parametrize(
    "backward",
    [
        "loss.backward()",
        "loss. backward()",
        "loss.backward \\\n        ()",
        "(loss\n        .backward  # the only anchor\n        ())",
        "loss.\uff42\uff41\uff43\uff4b\uff57\uff41\uff52\uff44()",  # full-width letters: NFKC makes them `backward`
    ],
    ids=["plain", "space after the dot", "continuation", "comment between", "full-width"],
)
def test_every_spelling_of_a_backward_the_parser_accepts_is_analyzed(tmp_path: Path, backward: str) -> None:
    """The file's only anchor is the backward call, spelled as the parser accepts it."""
    source = BACKWARD_AFTER_AUTOCAST.format(backward=backward)
    compile(source, "train.py", "exec")
    write(tmp_path, {"train.py": source})
    result = check_json(["train.py"], tmp_path)
    assert_contract(result, (1,))
    assert [(f["line"], f["code"]) for f in result.findings] == [(9, "CAL002")]


def test_a_call_spelled_across_lines_is_found_by_the_callers_round(tmp_path: Path) -> None:
    """The caller of a function whose anchor depends on its parameter spells the call with a
    continuation: the callers round still finds it."""
    write(
        tmp_path,
        {
            "helpers.py": "import torch.autograd.forward_ad as fwAD\n\n"
            "def tangent(f, x, t):\n    with fwAD.dual_level():\n        return f(fwAD.make_dual(x, t))\n",
            "train.py": "import torch\nfrom helpers import tangent\n\n"
            "compiled = torch.compile(torch.sin)\nout = tangent \\\n    (compiled, x, t)\n",
        },
    )
    result = check_json(["."], tmp_path)
    assert_contract(result, (1,))
    assert [(Path(f["path"]).name, f["code"]) for f in result.findings] == [("helpers.py", "CAL001")]


WALRUS = """\
import torch

step = torch.compile(net)


def train(x):
    with torch.autocast("cpu"):
        (loss := step(x).sum())
    loss.backward()  # expect: CAL002


def logged(x):
    with torch.autocast("cpu"):
        print(total := step(x).sum())
    total.backward()  # expect: CAL002


def fresh(x):
    with torch.autocast("cpu"):
        (loss := step(x).sum())
    loss = x.sum()
    loss.backward()  # ok: rebound outside the autocast region
"""


def test_an_assignment_expression_binds_as_an_assignment_does(tmp_path: Path) -> None:
    write(tmp_path, {"train.py": WALRUS})
    result = check_json(["train.py"], tmp_path)
    assert_contract(result, (1,))
    expected = [i for i, line in enumerate(WALRUS.splitlines(), 1) if "# expect: CAL002" in line]
    assert [(f["line"], f["code"]) for f in result.findings] == [(line, "CAL002") for line in expected]


LAZY_MODULE = """\
import torch


def _cube(x):
    return x * x * x


_compiled_cube = torch.compile(_cube)


def __getattr__(name):
    if name == "cube":
        return _compiled_cube
    raise AttributeError(name)
"""
LAZY_USER = """\
import torch.autograd.forward_ad as fwAD
import lazy
import plain
from lazy import cube


def run(x, t):
    with fwAD.dual_level():
        a = cube(fwAD.make_dual(x, t))  # expect: CAL001
        b = lazy.cube(fwAD.make_dual(x, t))  # expect: CAL001
        c = plain.cube(fwAD.make_dual(x, t))  # ok: that module's __getattr__ returns it uncompiled
    return a, b, c
"""


def test_a_module_getattr_returning_a_compiled_function_is_followed(tmp_path: Path) -> None:
    plain = LAZY_MODULE.replace("return _compiled_cube", "return _cube")
    write(tmp_path, {"lazy.py": LAZY_MODULE, "plain.py": plain, "train.py": LAZY_USER})
    result = check_json(["train.py"], tmp_path)
    assert_contract(result, (1,))
    expected = [i for i, line in enumerate(LAZY_USER.splitlines(), 1) if "# expect: CAL001" in line]
    assert [(f["line"], f["code"]) for f in result.findings] == [(line, "CAL001") for line in expected]


def _notebook(cells: list[str]) -> str:
    return json.dumps(
        {
            "cells": [
                {"cell_type": "code", "source": cell, "metadata": {}, "outputs": [], "execution_count": None}
                for cell in cells
            ],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


def test_a_notebook_cell_that_does_not_parse_does_not_swallow_the_cells_after_it(tmp_path: Path) -> None:
    """Jupyter compiles each cell on its own: the unterminated string is an error in its cell only."""
    cells = [
        "import torch\nimport torch.autograd.forward_ad as fwAD\nf = torch.compile(torch.sin)\n",
        'doc = """never closed\n',
        "with fwAD.dual_level():\n    y = f(fwAD.make_dual(x, t))\n",
    ]
    write(tmp_path, {"probe.ipynb": _notebook(cells)})
    result = check_json(["probe.ipynb"], tmp_path)
    assert_contract(result, (1,))
    found = sorted((f["cell"], f["line"], f["code"]) for f in result.findings)
    assert found == [(2, 1, "CAL900"), (3, 2, "CAL001")]
    assert "unterminated triple-quoted string" in next(f["message"] for f in result.findings if f["cell"] == 2)
