"""The flake8 plugin, run through the real ``flake8`` and compared with ``compile-ad-lint check``."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from compile_ad_lint.integrations.flake8_plugin import CompileAdLintChecker
from compile_ad_lint.project import project_root
from compile_ad_lint.testing import write_files

BIN = Path(sys.executable).parent
FLAKE8_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]+\d+) (?P<message>.*)$")

PROJECT = {
    "pyproject.toml": """
        [project]
        name = "demo"

        [tool.compile-ad-lint]
        max-call-depth = 8
    """,
    "pkg/__init__.py": "",
    "pkg/models.py": """
        import torch


        def body(x):
            return torch.sin(x) * x


        fast = torch.compile(body)
        net = torch.compile(torch.nn.Linear(4, 4))
    """,
    "pkg/helpers.py": """
        from pkg.models import fast


        def apply(x):
            return fast(x)
    """,
    "pkg/train.py": """
        import torch
        import torch.autograd.forward_ad as fwAD

        from pkg.helpers import apply
        from pkg.models import net


        def jvp(x, t):
            with fwAD.dual_level():
                out = apply(fwAD.make_dual(x, t))
                return fwAD.unpack_dual(out).tangent


        def step(x):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = net(x).float().mean()
            loss.backward()


        def config_bad():
            torch._functorch.config.backward_pass_autocast = "sometimes"
    """,
    "scripts/run.py": """
        import torch.autograd.forward_ad as fwAD

        from pkg.models import fast

        with fwAD.dual_level():
            y = fast(fwAD.make_dual(1, 2))
    """,
    "clean.py": """
        import torch

        x = torch.ones(3)
    """,
}


def write_project(root: Path, files: dict[str, str] = PROJECT) -> Path:
    return write_files(root, {relative: textwrap.dedent(source).lstrip("\n") for relative, source in files.items()})


def run_flake8(cwd: Path, *args: str, stdin: str | None = None) -> tuple[int, set[tuple[str, int, int, str]], str]:
    completed = subprocess.run(
        [str(BIN / "flake8"), "--select", "CAL", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Traceback" not in completed.stderr, completed.stderr
    found = set()
    for line in completed.stdout.splitlines():
        match = FLAKE8_LINE.match(line)
        assert match, f"unexpected flake8 output line: {line!r}"
        found.add((os.path.normpath(match["path"]), int(match["line"]), int(match["col"]), match["code"]))
    return completed.returncode, found, completed.stdout + completed.stderr


def run_cli(cwd: Path, *args: str) -> set[tuple[str, int, int, str]]:
    completed = subprocess.run(
        [str(BIN / "compile-ad-lint"), "check", "--format", "json", "--no-cache", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode in (0, 1), completed.stderr
    document = json.loads(completed.stdout)
    return {(os.path.normpath(f["path"]), f["line"], f["column"], f["code"]) for f in document["findings"]}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "demo")


def test_entry_point_is_registered_with_flake8():
    completed = subprocess.run([str(BIN / "flake8"), "--version"], capture_output=True, text=True, timeout=120)
    assert "compile-ad-lint" in completed.stdout


def test_plugin_contract():
    parameters = list(inspect.signature(CompileAdLintChecker.__init__).parameters)
    assert parameters[:3] == ["self", "tree", "filename"]
    assert set(parameters) <= {"self", "tree", "filename", "lines"}
    assert CompileAdLintChecker.name == "compile-ad-lint"
    assert CompileAdLintChecker.version


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_flake8_matches_cli_positions(project: Path, jobs: str):
    expected = run_cli(project, ".")
    assert {code for *_, code in expected} == {"CAL001", "CAL002", "CAL003"}
    rc, found, output = run_flake8(project, "-j", jobs, ".")
    assert rc == 1, output
    assert found == expected


def test_cross_module_reachability_when_flake8_checks_one_file(project: Path):
    # The script imports pkg from the project root; analyzing the file alone could not resolve it.
    rc, found, output = run_flake8(project, "scripts/run.py")
    assert rc == 1, output
    assert found == {(os.path.join("scripts", "run.py"), 6, 9, "CAL001")}
    assert found <= run_cli(project, ".")


def test_project_without_configuration_uses_package_context(tmp_path: Path):
    # pkg/train.py imports pkg.helpers, which imports pkg.models: found from the package's context.
    files = {k: v for k, v in PROJECT.items() if k.startswith("pkg/")}
    project = write_project(tmp_path / "loose", files)
    rc, found, output = run_flake8(project, "pkg/train.py")
    assert rc == 1, output
    assert {(line, code) for _, line, _, code in found} == {(10, "CAL001"), (17, "CAL002"), (21, "CAL003")}


def test_clean_file_passes(project: Path):
    rc, found, output = run_flake8(project, "clean.py")
    assert (rc, found) == (0, set()), output


def test_flake8_noqa(project: Path):
    train = project / "pkg" / "train.py"
    lines = train.read_text().splitlines()
    assert lines[9].endswith("make_dual(x, t))")
    lines[9] += "  # noqa: CAL001"
    lines[16] += "  # noqa: E501"  # a noqa for another code keeps the CAL002 finding
    train.write_text("\n".join(lines) + "\n")
    rc, found, output = run_flake8(project, "pkg/train.py")
    assert {(line, code) for _, line, _, code in found} == {(17, "CAL002"), (21, "CAL003")}, output


def test_options_on_command_line_match_cli(project: Path):
    _, found, output = run_flake8(project, "--cal-select", "CAL001,CAL003", "--cal-ignore", "CAL003", ".")
    assert found == run_cli(project, "--select", "CAL001,CAL003", "--ignore", "CAL003", ".")
    assert {code for *_, code in found} == {"CAL001"}, output

    _, found, _ = run_flake8(project, "--cal-max-call-depth", "0", ".")
    shallow = run_cli(project, "--max-call-depth", "0", ".")
    assert found == shallow
    assert found != run_cli(project, "."), "depth 0 should drop the finding that needs one more call"


def test_options_from_flake8_config(project: Path):
    (project / "setup.cfg").write_text("[flake8]\ncal-select = CAL002\n")
    _, found, output = run_flake8(project, ".")
    assert {code for *_, code in found} == {"CAL002"}, output


def test_invalid_option_is_a_clear_error(project: Path):
    completed = subprocess.run(
        [str(BIN / "flake8"), "--select", "CAL", "--cal-select", "nonsense!", "."],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode != 0
    assert "--cal-select" in completed.stdout and "nonsense!" in completed.stdout
    assert "Traceback" not in completed.stdout + completed.stderr


def test_stdin_with_display_name_checks_the_buffer(project: Path):
    buffer = (project / "clean.py").read_text() + textwrap.dedent(
        """
        import torch.autograd.forward_ad as fwAD
        from pkg.models import fast

        with fwAD.dual_level():
            z = fast(fwAD.make_dual(x, x))
        """
    )
    rc, found, output = run_flake8(project, "--stdin-display-name", "clean.py", "-", stdin=buffer)
    assert rc == 1, output
    assert found == {("clean.py", 9, 9, "CAL001")}


#: Runs flake8 in this interpreter, then prints the modules it imported as the last line.
_IMPORTS_PROBE = """
import json, sys
from flake8.main.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stdout.write("\\n" + json.dumps(sorted(sys.modules)))
"""


def test_flake8_after_a_warm_cli_run_loads_no_rule(project: Path):
    """A file's findings served from the check's record are shown as lines: the findings' typed
    evidence is not decoded, and the rules it names are not imported (a third of such a run)."""
    cold = run_flake8(project, "pkg/train.py")
    subprocess.run(
        [str(BIN / "compile-ad-lint"), "check", ".", "--exit-zero", "-q"], cwd=project, check=True, timeout=300
    )
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTS_PROBE, "--select", "CAL", "pkg/train.py"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    printed, modules = done.stdout.rsplit("\n", 1)
    assert printed.strip() and printed.strip() == cold[2].strip()
    loaded = set(json.loads(modules))
    assert "compile_ad_lint.integrations.flake8_plugin" in loaded
    evidence = ("rules", "facts", "linking.events", "linking.values", "linking.contexts", "summary")
    assert not {
        m for m in loaded for e in evidence if m == f"compile_ad_lint.{e}" or m.startswith(f"compile_ad_lint.{e}.")
    }


def test_plugin_writes_only_the_cache(project: Path):
    def outside_cache() -> list[tuple[Path, bytes]]:
        return sorted(
            (p.relative_to(project), p.read_bytes() if p.is_file() else b"")
            for p in project.rglob("*")
            if ".compile_ad_lint_cache" not in p.parts
        )

    before = outside_cache()
    run_flake8(project, ".")
    assert outside_cache() == before
    assert any((project / ".compile_ad_lint_cache").glob("??/*.json")), "flake8 shares the project cache"


def test_one_analysis_per_project_in_a_process(project: Path):
    CompileAdLintChecker._reports.clear()
    CompileAdLintChecker.parse_options(_namespace())
    results = {}
    for relative in ("pkg/train.py", "scripts/run.py", "clean.py"):
        checker = CompileAdLintChecker(tree=None, filename=str(project / relative))
        results[relative] = [(line, col, text.split()[0]) for line, col, text, _ in checker.run()]
    assert len(CompileAdLintChecker._reports) == 1
    assert results == {
        "pkg/train.py": [(10, 14, "CAL001"), (17, 4, "CAL002"), (21, 4, "CAL003")],
        "scripts/run.py": [(6, 8, "CAL001")],
        "clean.py": [],
    }
    # A file changed after the analysis is analyzed again, not served stale.
    run_py = project / "scripts" / "run.py"
    run_py.write_text("\n" + run_py.read_text())
    os.utime(run_py, ns=(run_py.stat().st_atime_ns, run_py.stat().st_mtime_ns + 10**9))
    checker = CompileAdLintChecker(tree=None, filename=str(run_py))
    assert [(line, col) for line, col, _, _ in checker.run()] == [(7, 8)]
    CompileAdLintChecker._reports.clear()


def test_analysis_processes_follow_flake8s_jobs(monkeypatch):
    """In flake8's own process (one file, stdin, ``-j 1``) the analysis uses flake8's ``--jobs``
    (``auto``: one process per CPU, as the CLI does); in flake8's daemonic pool workers, which
    flake8 gives the files and which cannot start processes, one each, and in a process with other
    threads (an editor extension running flake8 in its server), which is not forked."""
    import multiprocessing
    import threading
    from types import SimpleNamespace

    from flake8.main.options import JobsArgument

    monkeypatch.setattr(threading, "active_count", lambda: 1)  # flake8's process, not pytest's
    try:
        CompileAdLintChecker.parse_options(_namespace(jobs=JobsArgument("auto")))
        assert CompileAdLintChecker._analysis_jobs() is None
        CompileAdLintChecker.parse_options(_namespace(jobs=JobsArgument("3")))
        assert CompileAdLintChecker._analysis_jobs() == 3
        CompileAdLintChecker.parse_options(_namespace(jobs=JobsArgument("1")))
        assert CompileAdLintChecker._analysis_jobs() == 1
        CompileAdLintChecker.parse_options(_namespace(jobs=JobsArgument("auto")))
        with monkeypatch.context() as patched:
            patched.setattr(threading, "active_count", lambda: 2)
            assert CompileAdLintChecker._analysis_jobs() == 1, "a process with other threads is not forked"
        monkeypatch.setattr(multiprocessing, "current_process", lambda: SimpleNamespace(daemon=True))
        assert CompileAdLintChecker._analysis_jobs() == 1
    finally:
        CompileAdLintChecker.parse_options(_namespace())


def test_project_root_discovery(tmp_path: Path):
    if any((d / m).exists() for d in tmp_path.parents for m in ("pyproject.toml", "setup.py", "setup.cfg", ".git")):
        pytest.skip("the temporary directory lies inside a project")
    project = write_project(tmp_path / "demo")
    assert project_root((project / "pkg" / "train.py").resolve()) == (
        project.resolve(),
        (project / "pyproject.toml").resolve(),
    )
    loose = write_project(
        tmp_path / "loose", {"lib/__init__.py": "", "lib/sub/__init__.py": "", "lib/sub/m.py": "", "script.py": ""}
    )
    assert project_root((loose / "lib" / "sub" / "m.py").resolve()) == ((loose / "lib").resolve(), None)
    assert project_root((loose / "script.py").resolve()) == (None, None)
    (loose / "setup.cfg").write_text("")
    assert project_root((loose / "lib" / "sub" / "m.py").resolve()) == (loose.resolve(), None)


def _namespace(**options):
    import argparse

    return argparse.Namespace(cal_select=None, cal_ignore=None, cal_max_call_depth=None, **options)


# -- stdin without a display name, and notebooks ----------------------------------------------------


def test_stdin_without_a_display_name_reports_what_check_dash_reports(project: Path):
    buffer = (project / "scripts" / "run.py").read_text().replace("from pkg.models import fast\n", "") + (
        "\nimport torch\n\nfast = torch.compile(torch.sin)\n\nwith fwAD.dual_level():\n    w = fast(fwAD.make_dual(1, 2))\n"
    )
    rc, found, output = run_flake8(project, "-", stdin=buffer)
    checked = subprocess.run(
        [str(BIN / "compile-ad-lint"), "check", "-", "--format", "json", "--no-cache"],
        cwd=project,
        input=buffer,
        capture_output=True,
        text=True,
        timeout=300,
    )
    expected = {(f["line"], f["column"], f["code"]) for f in json.loads(checked.stdout)["findings"]}
    assert expected and {(line, column, code) for _, line, column, code in found} == expected, output
    assert rc == 1 and {path for path, *_ in found} == {"stdin"}, output


def _notebook(*cells: list[str]) -> str:
    document = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# Tangents\n"]},
            *(
                {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": c}
                for c in cells
            ),
        ],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(document, indent=1) + "\n"


EXPLORE = _notebook(
    ["import torch.autograd.forward_ad as fwAD\n", "from pkg.models import fast\n"],
    ["with fwAD.dual_level():\n", "    y = fast(fwAD.make_dual(1, 2))\n"],
)


def test_notebook_findings_point_into_the_notebook_json(project: Path):
    (project / "explore.ipynb").write_text(EXPLORE)
    rc, found, output = run_flake8(project, "--filename", "*.ipynb", "explore.ipynb")
    assert rc == 1, output
    ((path, line, column, code),) = found
    assert (path, code) == ("explore.ipynb", "CAL001")
    raw_line = (project / "explore.ipynb").read_text().splitlines()[line - 1]
    assert raw_line[column - 1 :].startswith("fast(fwAD.make_dual(1, 2))"), (raw_line, column)
    assert "CAL001 cell 3:2:9: " in output, output  # the cell and the line in it, as `check` shows them
    # The same from stdin with the notebook's name.
    rc, again, output = run_flake8(project, "--stdin-display-name", "explore.ipynb", "-", stdin=EXPLORE)
    assert rc == 1 and again == found, output
