"""The command line: exit codes, both formats, configuration errors, paths as given."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from compile_ad_lint import __version__
from compile_ad_lint.cli import main

HAZARD = """\
import torch
import torch.autograd.forward_ad as fwAD

f = torch.compile(torch.sin)
with fwAD.dual_level():
    y = f(fwAD.make_dual(x, t))
"""
CLEAN = "import torch\n\ny = torch.sin(torch.ones(3))\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "hazard.py").write_text(HAZARD)
    (tmp_path / "clean.py").write_text(CLEAN)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_findings_exit_1_with_text_lines(project, capsys):
    assert main(["check", ".", "--no-cache"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert (
        out[0] == "hazard.py:6:9: CAL001 `f(...)` runs a compiled callable on dual inputs: the tangent is silently None"
    )
    assert any(
        line.startswith(
            "    note: `f(...)` calls a callable compiled with torch.compile (backend='inductor') inside a "
        )
        for line in out
    )
    assert out[-1].startswith("Found 1 finding in 2 files (1 analyzed: 1 parsed, 0 cached) in ")


def test_no_findings_exit_0(project, capsys):
    assert main(["check", "clean.py", "--no-cache"]) == 0
    assert capsys.readouterr().out.startswith("No findings in 1 file (0 analyzed: 0 parsed, 0 cached) in ")


def test_exit_zero_flag(project):
    assert main(["check", ".", "--no-cache", "--exit-zero"]) == 0


def test_json_contract(project, capsys):
    assert main(["check", ".", "--no-cache", "--format", "json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["version"] == __version__
    assert set(document["stats"]) == {"files", "analyzed", "parsed", "cached", "seconds", "torch"}
    assert document["stats"]["torch"]["source"] == "installed torch"  # the test pin, 2.13.0
    assert document["stats"]["files"] == 2
    assert document["stats"]["parsed"] + document["stats"]["cached"] == document["stats"]["analyzed"] == 1
    (finding,) = document["findings"]
    assert {
        k: finding[k] for k in ("code", "severity", "path", "cell", "line", "column", "end_line", "end_column")
    } == {
        "code": "CAL001",
        "severity": "error",
        "path": "hazard.py",
        "cell": None,
        "line": 6,
        "column": 9,
        "end_line": 6,
        "end_column": 32,
    }
    assert finding["confirm"] is None
    # The fix calls the uncompiled function in the region (unsafe); compiling with the eager backend is the alternative.
    assert finding["fix"]["applicability"] == "unsafe"
    assert finding["fix"]["edits"] == [
        {"path": "hazard.py", "line": 6, "column": 9, "end_line": 6, "end_column": 10, "replacement": "f.__wrapped__"}
    ]
    [alternative] = finding["alternative_fixes"]
    assert alternative["edits"][0]["replacement"].endswith('backend="eager"')
    messages = [r["message"] for r in finding["related"]]
    assert messages[0] == "forward-AD region entered here"
    assert any(m.startswith("compiled here") for m in messages)
    assert all(set(r) == {"path", "cell", "line", "column", "message"} for r in finding["related"])


def test_paths_stay_as_given(project, capsys):
    main(["check", str(project / "hazard.py"), "--no-cache", "--format", "json"])
    assert json.loads(capsys.readouterr().out)["findings"][0]["path"] == str(project / "hazard.py")
    main(["check", "./hazard.py", "--no-cache", "--format", "json"])
    assert json.loads(capsys.readouterr().out)["findings"][0]["path"] == "hazard.py"


def test_output_file(project, capsys):
    assert main(["check", ".", "--no-cache", "--format", "json", "--output", "report.json"]) == 1
    assert capsys.readouterr().out == ""
    assert json.loads((project / "report.json").read_text())["findings"][0]["code"] == "CAL001"


def test_select_and_ignore(project, capsys):
    assert main(["check", ".", "--no-cache", "--select", "CAL002"]) == 0
    assert main(["check", ".", "--no-cache", "--ignore", "CAL001"]) == 0
    assert main(["check", ".", "--no-cache", "--select", "CAL"]) == 1


def test_usage_errors_exit_2(project, capsys):
    for bad in (["--select", "not a code"], ["--select", ""]):  # selecting nothing is a mistake, not a clean run
        with pytest.raises(SystemExit) as raised:
            main(["check", ".", *bad])
        assert raised.value.code == 2
    with pytest.raises(SystemExit) as raised:
        main(["check", "--format", "yaml"])
    assert raised.value.code == 2
    with pytest.raises(SystemExit) as raised:
        main(["check", "--jobs", "0"])
    assert raised.value.code == 2
    assert main(["explain", "CAL999"]) == 2


@pytest.mark.parametrize(
    ("section", "key"),
    [
        ("[tool.compile-ad-lint]\nunknown-key = 1\n", "unknown-key"),
        ('[tool.compile-ad-lint]\nmax-call-depth = "deep"\n', "max-call-depth"),
        ("[tool.compile-ad-lint]\nselect = [1, 2]\n", "select"),
        ("[tool.compile-ad-lint]\nselect = []\n", "selects no rule"),
        ("[tool.compile-ad-lint]\nselect = [\n", None),
    ],
)
def test_config_errors_name_file_and_key(project, capsys, section, key):
    (project / "pyproject.toml").write_text(section)
    assert main(["check", "."]) == 2
    error = capsys.readouterr().err
    assert str(project / "pyproject.toml") in error
    if key:
        assert key in error


def test_config_applies(project):
    (project / "pyproject.toml").write_text('[tool.compile-ad-lint]\nextend-safe-backends = ["inductor"]\n')
    assert main(["check", ".", "--no-cache"]) == 0
    (project / "pyproject.toml").write_text('[tool.compile-ad-lint]\nexclude = ["hazard.py"]\n')
    assert main(["check", ".", "--no-cache"]) == 0
    (project / "pyproject.toml").write_text('[tool.compile-ad-lint]\nignore = ["CAL001"]\n')
    assert main(["check", ".", "--no-cache"]) == 0


def test_rules_and_explain(capsys):
    assert main(["rules"]) == 0
    listing = capsys.readouterr().out
    for code in ("CAL001", "CAL002", "CAL003", "CAL900"):
        assert code in listing


def test_unparsable_file_is_reported_and_others_still_analyzed(project, capsys):
    (project / "broken.py").write_text("def f(:\n    x.backward()\n")
    assert main(["check", ".", "--no-cache"]) == 1
    out = capsys.readouterr().out
    assert "broken.py:1:" in out and "CAL900" in out
    assert "hazard.py:6:9: CAL001" in out


def test_missing_path_is_a_diagnostic(project, capsys):
    assert main(["check", "hazard.py", "nowhere.py", "--no-cache"]) == 1
    out = capsys.readouterr().out
    assert "nowhere.py:1:1: CAL900 path does not exist" in out
    assert "hazard.py:6:9: CAL001" in out


def test_files_are_never_modified(project):
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    main(["check", ".", "--no-cache"])
    after = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    assert before == after


def test_module_entry_point(project):
    result = subprocess.run(
        [sys.executable, "-m", "compile_ad_lint", "check", ".", "--no-cache"],
        capture_output=True,
        text=True,
        cwd=project,
    )
    assert result.returncode == 1
    assert "hazard.py:6:9: CAL001" in result.stdout


def test_runs_without_torch(project):
    """The static analysis must import and run with torch unimportable."""
    blocker = project / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\n"
        "class _Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'torch' or name.startswith('torch.'):\n"
        "            raise ImportError('torch is blocked for this test')\n"
        "sys.meta_path.insert(0, _Block())\n"
    )
    env = {**os.environ, "PYTHONPATH": str(blocker)}
    code = "import sys, compile_ad_lint.cli as c; rc = c.main(['check', '.', '--no-cache']); assert 'torch' not in sys.modules; sys.exit(rc)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=project, env=env)
    assert result.returncode == 1, result.stderr
    assert "CAL001" in result.stdout
    check = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True, text=True, env=env)
    assert check.returncode != 0, "the blocker must make torch unimportable"


def test_a_text_report_never_loads_libcst(project):
    """LibCST (fixes) costs a third of a warm run to import: a report without fixes must not load it;
    a JSON report carries fix edits, so it does."""
    code = (
        "import sys, compile_ad_lint.cli as c; rc = c.main(['check', '.', '--no-cache'] + sys.argv[1:]); "
        "print('LIBCST', 'libcst' in sys.modules, file=sys.stderr); sys.exit(rc)"
    )
    text = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=project)
    assert text.returncode == 1, text.stderr
    assert "LIBCST False" in text.stderr
    as_json = subprocess.run(
        [sys.executable, "-c", code, "--format", "json"], capture_output=True, text=True, cwd=project
    )
    assert as_json.returncode == 1, as_json.stderr
    assert "LIBCST True" in as_json.stderr


def test_a_json_report_whose_fix_edits_are_cached_never_loads_libcst(project):
    """A warm ``--format json`` run reads every fix's edits from the cache: importing LibCST would
    be a third of it. The edits are the cold run's."""
    code = (
        "import sys, compile_ad_lint.cli as c; rc = c.main(['check', '.', '--format', 'json']); "
        "print('LIBCST', 'libcst' in sys.modules, file=sys.stderr); sys.exit(rc)"
    )
    cold = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=project)
    assert cold.returncode == 1, cold.stderr
    assert "LIBCST True" in cold.stderr  # the edits were built
    warm = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=project)
    assert warm.returncode == 1, warm.stderr
    assert "LIBCST False" in warm.stderr
    fixes = [finding.get("fix") for finding in json.loads(cold.stdout)["findings"]]
    assert any(fix and fix["edits"] for fix in fixes)
    assert [finding.get("fix") for finding in json.loads(warm.stdout)["findings"]] == fixes


def test_a_check_served_from_its_record_never_loads_the_interpreter(project):
    """Importing the interpreter and the process pool was a fifth of a warm run (compiled from
    source where bytecode is not written): a check whose record the cache holds needs neither."""
    code = (
        "import sys, compile_ad_lint.cli as c; rc = c.main(['check', '.']); "
        "print('LOADED', sorted(m for m in ('compile_ad_lint.linking.interpreter', 'concurrent.futures.process') "
        "if m in sys.modules), file=sys.stderr); sys.exit(rc)"
    )
    cold = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=project)
    assert cold.returncode == 1, cold.stderr
    assert "LOADED ['compile_ad_lint.linking.interpreter']" in cold.stderr  # one root: no worker processes
    warm = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=project)
    assert warm.returncode == 1, warm.stderr
    assert warm.stdout.splitlines()[:-1] == cold.stdout.splitlines()[:-1]  # the findings; the summary line differs
    assert "0 parsed, 1 cached" in warm.stdout
    assert "LOADED []" in warm.stderr


def test_cache_is_reused_and_cleaned(project, capsys):
    assert main(["check", ".", "--format", "json"]) == 1
    first = json.loads(capsys.readouterr().out)
    cache = project / ".compile_ad_lint_cache"
    assert (cache / ".gitignore").is_file()
    assert main(["check", ".", "--format", "json"]) == 1
    second = json.loads(capsys.readouterr().out)
    assert second["findings"] == first["findings"]
    assert second["stats"]["parsed"] == 0 and second["stats"]["cached"] >= 1
    assert main(["cache", "clean", "."]) == 0
    assert not cache.exists()


def test_progress_bar_only_on_a_terminal(tmp_path):
    import io

    from compile_ad_lint.cli import _Progress

    stream = io.StringIO()
    progress = _Progress(stream)
    progress(1, 4)
    assert stream.getvalue() == "", "nothing during the first second"
    progress.started -= 2
    progress(2, 4)
    assert "2/4 anchor files" in stream.getvalue()
    progress.close()
    assert stream.getvalue().endswith("\r\033[K")
