"""Cached results equal ``--no-cache`` on the generated framework, whatever happens to its layout.

A property over random sequences of changes that leave every analyzed file's bytes alone but change
what its imports find or how its modules are named: a package marker (``__init__.py``) added or
removed anywhere, a ``src/`` import root created or removed, symlinked modules re-targeted, the
interpreter swapped (simulated through the build digest's input), and plain edits. After each
change the CLI is run with the project's cache and without: the findings must be the same.

``CAL_CACHE_MUTATION_EXAMPLES`` sets the number of sequences (default 4: each check costs about
a second on 2 cores).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compile_ad_lint.cache as cache_module
from compile_ad_lint.cache import build_digest
from compile_ad_lint.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("CAL_CACHE_MUTATION_EXAMPLES", "4"))

COMPILED_STEP = "import torch\nstep = torch.compile(torch.sin)\n"
PLAIN_STEP = "import torch\nstep = torch.sin\n"
#: A script beside the framework whose imports depend on the layout: ``helpers`` is
#: ``scripts/helpers.py`` while ``scripts/`` is no package and the root's link (to a compiled or a
#: plain step) once it is; ``mypkg.extra`` exists only while ``src/`` does.
PROBE = """\
import torch.autograd.forward_ad as fwAD
from helpers import step
from mypkg.extra import other

def run(x, t):
    with fwAD.dual_level():
        return step(fwAD.make_dual(x, t)), other(fwAD.make_dual(x, t))
"""
CHECKED = ("scripts/probe.py", "forge/experiments/pinn/train.py", "forge/experiments/long_context/train.py")
#: Folders whose package marker an operation toggles: the framework's packages at several depths,
#: folders that are none, and the probe's.
MARKER_FOLDERS = (
    "forge",
    "forge/utils",
    "forge/experiments",
    "forge/experiments/pinn",
    "forge/data",
    "forge/models/common",
    "scripts",
    "scripts/forge",
    "impl",
)
#: Symlinked modules and the files each can point at.
LINKS = {
    "helpers.py": ("impl/compiled.py", "impl/plain.py"),
    "forge/experiments/pinn/model.py": ("variants/pinn_model.py", "variants/pinn_model_edited.py"),
}
EDITABLE = ("impl/compiled.py", "forge/experiments/pinn/train.py", "forge/utils/logging.py")

OPERATIONS = st.one_of(
    st.tuples(st.just("marker"), st.sampled_from(MARKER_FOLDERS)),
    st.tuples(st.just("src"), st.just("")),
    st.tuples(st.just("link"), st.sampled_from(sorted(LINKS))),
    st.tuples(st.just("python"), st.just("")),
    st.tuples(st.just("edit"), st.sampled_from(EDITABLE)),
)


@pytest.fixture(scope="module")
def framework(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import framework_corpus
    finally:
        sys.path.remove(str(REPO / "bench"))
    root = tmp_path_factory.mktemp("framework") / "project"
    framework_corpus.generate(root)
    (root / "impl").mkdir()
    (root / "impl" / "compiled.py").write_text(COMPILED_STEP)
    (root / "impl" / "plain.py").write_text(PLAIN_STEP)
    (root / "scripts" / "helpers.py").write_text(PLAIN_STEP)
    (root / "scripts" / "probe.py").write_text(PROBE)
    (root / "helpers.py").symlink_to(Path("impl") / "compiled.py")
    model = root / "forge" / "experiments" / "pinn" / "model.py"
    (root / "variants").mkdir()
    (root / "variants" / "pinn_model.py").write_bytes(model.read_bytes())
    (root / "variants" / "pinn_model_edited.py").write_bytes(model.read_bytes() + b"\n# edited\n")
    model.unlink()
    model.symlink_to(Path("..") / ".." / ".." / "variants" / "pinn_model.py")
    return root


@contextmanager
def _inside(folder: Path) -> Iterator[None]:
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


class _Project:
    """A copy of the framework and the interpreter its checks run under."""

    def __init__(self, root: Path) -> None:
        self.root = root
        real = cache_module.runtime_versions()
        self.pythons = [real, real.replace(f"{sys.version_info[0]}.{sys.version_info[1]}", "3.99", 1)]
        self.python = 0
        self.pythons_used = {0}

    def findings(self, *options: str) -> tuple[list[tuple], dict]:
        original = cache_module.runtime_versions
        cache_module.runtime_versions = lambda: self.pythons[self.python]  # type: ignore[assignment]
        build_digest.cache_clear()
        out = io.StringIO()
        try:
            with _inside(self.root), redirect_stdout(out):
                code = main(["check", *CHECKED, "--format", "json", "--jobs", "1", *options])
        finally:
            cache_module.runtime_versions = original
            build_digest.cache_clear()
        assert code in (0, 1)
        document = json.loads(out.getvalue())
        keys = sorted(
            (f["code"], f["path"], f["line"], f["column"], f["message"], json.dumps(f["related"]))
            for f in document["findings"]
        )
        return keys, document["stats"]

    def apply(self, operation: str, argument: str) -> None:
        root = self.root
        if operation == "marker":
            marker = root / argument / "__init__.py"
            if marker.exists():
                marker.unlink()
            else:
                marker.write_text("")
        elif operation == "src":
            if (root / "src").exists():
                shutil.rmtree(root / "src")
            else:
                (root / "src" / "mypkg").mkdir(parents=True)
                (root / "src" / "mypkg" / "extra.py").write_text(COMPILED_STEP.replace("step", "other"))
        elif operation == "link":
            link = root / argument
            first, second = LINKS[argument]
            now = os.readlink(link)
            target = second if now.endswith(Path(first).name) else first
            link.unlink()
            link.symlink_to(Path(os.path.relpath(root / target, link.parent)))
        elif operation == "python":
            self.python = 1 - self.python
        else:
            path = root / argument
            path.write_text(path.read_text() + "\n# edited\n")


@pytest.mark.slow
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(operations=st.lists(OPERATIONS, min_size=1, max_size=4))
def test_cached_findings_equal_no_cache_after_layout_changes(framework, tmp_path, operations):
    root = tmp_path / "copy"
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(framework, root, symlinks=True)
    project = _Project(root)
    cold, _ = project.findings()
    assert cold == project.findings("--no-cache")[0]
    for operation, argument in operations:
        project.apply(operation, argument)
        new_python = project.python not in project.pythons_used
        project.pythons_used.add(project.python)
        cached, stats = project.findings()
        fresh, _ = project.findings("--no-cache")
        assert cached == fresh, f"after {operation} {argument}"
        if new_python:
            assert stats["cached"] == 0, "another interpreter's entries were served"
