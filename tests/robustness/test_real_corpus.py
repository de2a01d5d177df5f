"""End to end on real code: the installed torch package and the Python standard library.

Both trees are copied (``*.py`` only) to a temporary directory first, so nothing is written next to
site-packages, and checked through the CLI with ``--no-cache``. The contract: the run finishes
without an internal error (exit 0 or 1, never 2, no traceback). The number of findings and CAL900s
and the time taken are printed (``pytest -s``) and recorded as properties (``--junitxml``).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sysconfig
from collections import Counter
from pathlib import Path

import pytest
from robustness_helpers import assert_contract, run_cli

pytestmark = pytest.mark.slow

#: Whole-tree runs on 2 shared cores: generous, but a hang still fails.
CORPUS_TIMEOUT = float(os.environ.get("CAL_CORPUS_TIMEOUT", "1800"))
JOBS = os.environ.get("CAL_CORPUS_JOBS", str(min(4, os.cpu_count() or 1)))


def _copy_python_files(source: Path, destination: Path, skip: tuple[str, ...] = ()) -> int:
    count = 0
    for directory, subdirs, names in os.walk(source):
        subdirs[:] = sorted(d for d in subdirs if d not in skip and d != "__pycache__")
        relative = Path(directory).relative_to(source)
        for name in names:
            if name.endswith(".py"):
                target = destination / relative / name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(Path(directory) / name, target)
                count += 1
    return count


def _lint_tree(root: Path, label: str, record_property) -> None:
    result = run_cli(
        ["check", root.name, "--no-cache", "--format", "json", "--jobs", JOBS], root.parent, timeout=CORPUS_TIMEOUT
    )
    assert_contract(result)
    document = result.document
    codes = Counter(f["code"] for f in document["findings"])
    cal900 = [f for f in document["findings"] if f["code"] == "CAL900"]
    reasons = Counter(f["message"].split(":")[0] for f in cal900)
    summary = (
        f"[corpus] {label}: {document['stats']['files']} files, {document['stats']['parsed']} parsed, "
        f"{len(document['findings'])} findings {dict(sorted(codes.items()))}, {len(cal900)} CAL900 {dict(reasons)}; "
        f"{result.seconds:.1f}s wall (tool says {document['stats']['seconds']}s)"
    )
    print("\n" + summary)
    for finding in cal900[:10]:
        print(f"    {finding['path']}:{finding['line']}: {finding['message']}")
    record_property(f"{label}_findings", len(document["findings"]))
    record_property(f"{label}_cal900", len(cal900))
    record_property(f"{label}_seconds", round(result.seconds, 1))
    assert document["stats"]["files"] > 0
    # A CAL900 must always say why.
    assert all(f["message"] for f in cal900)


def test_torch_sources(tmp_path, record_property):
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        pytest.skip("torch is not installed")
    copied = _copy_python_files(Path(spec.origin).parent, tmp_path / "torch")
    assert copied > 1000
    _lint_tree(tmp_path / "torch", "torch", record_property)


def test_standard_library(tmp_path, record_property):
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    copied = _copy_python_files(stdlib, tmp_path / "stdlib", skip=("site-packages", "dist-packages"))
    assert copied > 500
    _lint_tree(tmp_path / "stdlib", "stdlib", record_property)
