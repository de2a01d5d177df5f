"""Edits stay inside the project and converge: ``--fix`` and ``--add-noqa`` never write through a
symlink out of the project root (and say so), and ``--fix --unsafe-fixes`` run twice changes
nothing the second time, on a call that reaches callables compiled in several places and on the
generated framework. Through the real CLI."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from robustness_helpers import REPO, run_cli, tree_digest, write

#: CAL003 with a safe fix (the dict becomes a list) on line 2.
INVALID_CONFIG = 'import torch._functorch.config as fc\nfc.backward_pass_autocast = {"device_type": "cpu"}\n'


@pytest.mark.parametrize("flag", ["--fix", "--add-noqa"])
def test_no_edit_through_a_symlink_out_of_the_project(tmp_path: Path, flag: str) -> None:
    outside = write(tmp_path / "outside", {"target.py": INVALID_CONFIG})
    project = write(tmp_path / "project", {"pyproject.toml": "[tool.compile-ad-lint]\n", "inside.py": INVALID_CONFIG})
    (project / "link.py").symlink_to(outside / "target.py")
    result = run_cli(["check", ".", flag], project)
    assert "Traceback" not in result.stderr
    assert (outside / "target.py").read_text() == INVALID_CONFIG, "written through the symlink"
    assert (project / "inside.py").read_text() != INVALID_CONFIG, "the file inside was not edited"
    assert "link.py" in result.stderr and "outside the project root" in result.stderr, result.describe()


MANY_COMPILED = {
    "helpers.py": """\
import torch


def f(x):
    return x


def g(x):
    return x


fast_f = torch.compile(f)
fast_g = torch.compile(g)
STEPS = {"f": fast_f, "g": fast_g}


def apply(step, x):
    return step(x)
""",
    "train.py": """\
import torch.autograd.forward_ad as fwAD
from helpers import STEPS, apply


def run(name, x, t):
    with fwAD.dual_level():
        return apply(STEPS[name], fwAD.make_dual(x, t))
""",
}


def test_the_backend_fix_compiles_eagerly_everywhere_the_call_may_reach(tmp_path: Path) -> None:
    """The call may reach two callables compiled in two places: the fix edits both, so the finding
    is gone after one run and a second run changes nothing."""
    project = write(tmp_path, {"pyproject.toml": "[tool.compile-ad-lint]\n", **MANY_COMPILED})
    first = run_cli(["check", ".", "--fix", "--unsafe-fixes"], project)
    assert first.returncode == 0, first.describe()
    helpers = (project / "helpers.py").read_text()
    assert 'fast_f = torch.compile(f, backend="eager")' in helpers
    assert 'fast_g = torch.compile(g, backend="eager")' in helpers
    before = tree_digest(project)
    second = run_cli(["check", ".", "--fix", "--unsafe-fixes"], project)
    assert second.returncode == 0 and tree_digest(project) == before, second.describe()


@pytest.mark.slow
def test_unsafe_fixes_on_the_generated_framework_converge_in_one_run(tmp_path: Path) -> None:
    """The trainer's forward-AD probe may reach any model family, each compiled in its own
    ``parallelize.py`` (``backend=compile_config.backend``): one run fixes every finding, the
    second writes nothing."""
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import framework_corpus
    finally:
        sys.path.remove(str(REPO / "bench"))
    framework_corpus.generate(tmp_path)
    first = run_cli(["check", ".", "--fix", "--unsafe-fixes"], tmp_path, timeout=900)
    assert first.returncode == 0, first.describe()
    before = tree_digest(tmp_path)
    second = run_cli(["check", ".", "--fix", "--unsafe-fixes"], tmp_path, timeout=900)
    assert second.returncode == 0, second.describe()
    changed = {name for name, digest in tree_digest(tmp_path).items() if before.get(name) != digest}
    assert not changed, f"the second run rewrote {sorted(changed)}"
