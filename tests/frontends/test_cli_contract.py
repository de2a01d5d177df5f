"""The command line as Ruff and flake8 users expect it, each point through the real CLI process.

No silent no-op runs (unknown codes, missing paths, nothing checked), ``ALL``, stdin, the text
report (chain, ``--concise``, ``--show-source``, colors, ``--statistics``, ``--quiet``, the summary),
clear errors, ``per-file-ignores`` and ``extend-exclude``, ``--dependents``, and docs/command-line.md's Flags
section against ``--help``. Notebooks: ``test_notebooks.py``; the pre-commit hook:
``test_precommit_hook.py``.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from compile_ad_lint.testing import write_files

REPO_ROOT = Path(__file__).resolve().parents[2]

HAZARD = """\
import torch
import torch.autograd.forward_ad as fwAD

f = torch.compile(torch.sin)


def run(x, t):
    with fwAD.dual_level():
        return f(fwAD.make_dual(x, t))
"""
HAZARD_AT = "hazard.py:9:16: CAL001"

CHAIN = """\
import torch
import torch.autograd.forward_ad as fwAD

f = torch.compile(torch.sin)


def a(x):
    return b(x)


def b(x):
    return c(x)


def c(x):
    return d(x)


def d(x):
    return f(x)


def run(x, t):
    with fwAD.dual_level():
        return a(fwAD.make_dual(x, t))
"""

BAD_CONFIG = """\
import torch
import torch._functorch.config as fc

fc.backward_pass_autocast = {"device_type": "cuda", "dtype": torch.float16}
"""

#: Environment for the CLI: no color variables from the caller's terminal.
BASE_ENV = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "TERM")}


def cli(
    cwd: Path, *args: str, stdin: str | bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    data = stdin.encode() if isinstance(stdin, str) else stdin
    completed = subprocess.run(
        [sys.executable, "-m", "compile_ad_lint", *args],
        cwd=cwd,
        input=data if data is not None else b"",
        capture_output=True,
        timeout=300,
        env={**BASE_ENV, **(env or {})},
    )
    return subprocess.CompletedProcess(
        completed.args, completed.returncode, completed.stdout.decode(), completed.stderr.decode()
    )


def on_terminal(cwd: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run the CLI with its stdout on a pseudo-terminal; (exit code, what it wrote there)."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "compile_ad_lint", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=subprocess.PIPE,
        env={**BASE_ENV, "TERM": "xterm", **(env or {})},
    )
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 300)
        if not ready:
            process.kill()
            raise AssertionError("the CLI did not finish")
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the process closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    code = process.wait(timeout=300)
    process.stderr.close()  # type: ignore[union-attr]
    return code, b"".join(chunks).decode().replace("\r\n", "\n")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_files(
        tmp_path / "proj",
        {"pyproject.toml": "[tool.compile-ad-lint]\n", "hazard.py": HAZARD, "clean.py": "import torch\n"},
    )


# -- no silent no-op runs --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "suggestion"),
    [
        ("CAL01", "did you mean CAL901 or CAL001?"),
        ("CAL0001", "did you mean CAL001?"),
        ("CAL999", "did you mean CAL901 or CAL900?"),
        ("NOPE", "the codes are CAL001, CAL002"),
        ("E501", "the codes are CAL001, CAL002"),
        ("CAL001,B950", "the codes are"),
    ],
)
@pytest.mark.parametrize("flag", ["--select", "--ignore"])
def test_unknown_code_on_the_command_line_is_a_usage_error(project, flag, value, suggestion):
    completed = cli(project, "check", ".", "--no-cache", flag, value)
    assert completed.returncode == 2, completed.stdout + completed.stderr
    bad = value.split(",")[-1]
    assert f"{flag}: {bad!r} is not a compile-ad-lint rule code or prefix" in completed.stderr
    assert suggestion in completed.stderr
    assert completed.stdout == ""


@pytest.mark.parametrize("key", ["select", "ignore"])
@pytest.mark.parametrize("value", ["CAL01", "NOPE", "F401"])
def test_unknown_code_in_the_config_is_a_configuration_error(project, key, value):
    (project / "pyproject.toml").write_text(f'[tool.compile-ad-lint]\n{key} = ["{value}"]\n')
    completed = cli(project, "check", ".", "--no-cache")
    assert completed.returncode == 2, completed.stdout + completed.stderr
    assert str(project / "pyproject.toml") in completed.stderr
    assert f"[tool.compile-ad-lint] {key}: {value!r} is not a compile-ad-lint rule code or prefix" in completed.stderr


def test_all_selects_every_rule(project):
    (project / "config_bad.py").write_text(BAD_CONFIG)
    everything = cli(project, "check", ".", "--no-cache", "--format", "json", "--select", "ALL")
    assert everything.returncode == 1, everything.stderr
    assert sorted(f["code"] for f in json.loads(everything.stdout)["findings"]) == ["CAL001", "CAL003"]
    (project / "pyproject.toml").write_text('[tool.compile-ad-lint]\nselect = ["ALL"]\nignore = ["CAL003"]\n')
    configured = cli(project, "check", ".", "--no-cache", "--format", "json")
    assert [f["code"] for f in json.loads(configured.stdout)["findings"]] == ["CAL001"]
    assert cli(project, "check", ".", "--no-cache", "--select", "all", "--ignore", "CAL003").returncode == 1  # any case


def test_a_selection_that_enables_no_rule_is_an_error(project):
    completed = cli(project, "check", ".", "--no-cache", "--select", "CAL001", "--ignore", "CAL")
    assert completed.returncode == 2
    assert "no rule is enabled" in completed.stderr


def test_missing_path_is_reported_whatever_the_selection(project):
    """Today's trap: ``--select CAL001, CAL002`` makes CAL002 a path; it must not pass silently."""
    completed = cli(project, "check", "--no-cache", "--select", "CAL001,", "CAL002")
    assert completed.returncode == 2, completed.stdout + completed.stderr
    assert "CAL002:1:1: CAL900 path does not exist" in completed.stdout
    assert "no file was checked (CAL002: path does not exist)" in completed.stderr
    assert "looks like a rule code" in completed.stderr
    assert "No findings" not in completed.stdout
    for options in ([], ["--select", "CAL001"], ["--ignore", "CAL900"], ["--select", "CAL002", "--format", "json"]):
        completed = cli(project, "check", "hazard.py", "nowhere.py", "--no-cache", *options)
        assert completed.returncode == (1 if options[:2] != ["--select", "CAL002"] else 1), completed.stderr
        assert "nowhere.py" in completed.stdout and "path does not exist" in completed.stdout, (
            options,
            completed.stdout,
        )


def test_missing_path_is_reported_despite_per_file_ignores(project):
    (project / "pyproject.toml").write_text('[tool.compile-ad-lint.per-file-ignores]\n"*.py" = ["CAL"]\n')
    completed = cli(project, "check", "hazard.py", "nowhere.py", "--no-cache", "--concise")
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert completed.stdout.splitlines()[0] == "nowhere.py:1:1: CAL900 path does not exist"
    assert HAZARD_AT not in completed.stdout


def test_no_file_checked_says_so_and_exits_2(project):
    (project / "empty").mkdir()
    for paths in (["nowhere.py"], ["nowhere.py", "gone/"], ["empty"]):
        completed = cli(project, "check", "--no-cache", *paths)
        assert completed.returncode == 2, (paths, completed.stdout, completed.stderr)
        assert "no file was checked" in completed.stderr
        assert "No findings" not in completed.stdout
    completed = cli(project, "check", "--no-cache", "--format", "json", "empty")
    assert completed.returncode == 2 and json.loads(completed.stdout)["stats"]["files"] == 0
    assert "no Python file or notebook under empty" in completed.stderr


# -- stdin -----------------------------------------------------------------------------------------


def test_check_stdin(project):
    completed = cli(project, "check", "-", "--no-cache", "--concise", stdin=HAZARD)
    assert completed.returncode == 1, completed.stderr
    assert completed.stdout.splitlines()[0].startswith("-:9:16: CAL001")
    assert "1 file" in completed.stdout
    assert cli(project, "check", "-", "--no-cache", stdin="x = 1\n").returncode == 0


def test_stdin_filename_stands_for_a_project_file(project):
    """Its imports, and the project's other files (callers of its functions) are used; the unsaved
    text replaces the file on disk, and only its own findings are reported."""
    write_files(
        project,
        {
            "pkg/__init__.py": "",
            "pkg/ops.py": "import torch\n\nfast = torch.compile(torch.sin)\n",
            "pkg/evaluate.py": "def evaluate(model, x):\n    return model(x)\n",  # on disk: clean
            "pkg/caller.py": "import torch\n\nfrom pkg.evaluate import evaluate\n\nnet = torch.nn.Linear(2, 2)\nevaluate(torch.compile(net), 1)\n",
        },
    )
    buffer = textwrap.dedent(
        """\
        import torch.autograd.forward_ad as fwAD

        from pkg.ops import fast


        def evaluate(model, x):
            with fwAD.dual_level():
                return model(fwAD.make_dual(x, x)), fast(fwAD.make_dual(x, x))
        """
    )
    completed = cli(
        project, "check", "-", "--stdin-filename", "pkg/evaluate.py", "--no-cache", "--format", "json", stdin=buffer
    )
    assert completed.returncode == 1, completed.stderr
    findings = json.loads(completed.stdout)["findings"]
    assert {(f["path"], f["line"], f["code"]) for f in findings} == {("pkg/evaluate.py", 8, "CAL001")}
    related = {r["path"] for f in findings for r in f["related"]}
    assert "pkg/ops.py" in related  # its import was followed
    assert any("caller.py" in r["path"] for f in findings for r in f["related"]), (
        findings
    )  # the caller's compiled model
    columns = sorted(f["column"] for f in findings)
    assert len(columns) == 2, findings  # model(...) bound by pkg/caller.py, and fast(...)
    # No path: --stdin-filename alone reads stdin too; a clean buffer hides the file's findings on disk.
    (project / "pkg/evaluate.py").write_text(buffer)
    assert cli(project, "check", "--no-cache", "pkg/evaluate.py").returncode == 1
    assert (
        cli(
            project,
            "check",
            "--stdin-filename",
            "pkg/evaluate.py",
            "--no-cache",
            stdin="def evaluate(model, x):\n    return 1\n",
        ).returncode
        == 0
    )


def test_stdin_usage_errors(project):
    for args in (
        ["-", "hazard.py"],
        ["hazard.py", "--stdin-filename", "x.py"],
        ["-", "--confirm"],
        ["-", "--dependents"],
    ):
        completed = cli(project, "check", "--no-cache", *args, stdin=HAZARD)
        assert completed.returncode == 2, (args, completed.stdout, completed.stderr)
        assert "error:" in completed.stderr


# -- the text report -------------------------------------------------------------------------------


def test_chain_is_indented_under_each_finding(project):
    (project / "chain.py").write_text(CHAIN)
    completed = cli(project, "check", "chain.py", "--no-cache")
    assert completed.returncode == 1
    assert completed.stdout.splitlines() == [
        "chain.py:25:16: CAL001 `a(...)` runs a compiled callable on dual inputs: the tangent is silently None",
        "    chain.py:24:5: forward-AD region entered here",
        "    chain.py:8:12: calls `b` (b)",
        "    ... 2 more calls",
        "    chain.py:20:12: calls compiled `f`",
        "    chain.py:4:5: compiled here (torch.compile, backend='inductor')",
        "    note: `a(...)` reaches a callable compiled with torch.compile (backend='inductor') through 4 more calls inside"
        " a forward-AD dual_level() region (NotImplementedError instead if its inputs require grad).",
        "    note: Run it eagerly (torch.compiler.disable), use torch.func.jvp, or compile with backend='eager': these keep"
        " the tangent on every torch version.",
        '    help: Compile with backend="eager", which keeps tangents (unsafe: every call of it runs without inductor)',
        "1 unsafe fix available with `--fix --unsafe-fixes`.",
        completed.stdout.splitlines()[-1],
    ]
    assert completed.stdout.splitlines()[-1].startswith(
        "Found 1 finding in 1 file (1 analyzed: 1 parsed, 0 cached) in "
    )


def test_chain_of_cal002_names_the_compile_site_and_the_autocast_source(project):
    write_files(
        project,
        {
            "amp.py": textwrap.dedent(
                """\
                import torch

                model = torch.compile(torch.nn.Linear(4, 4))


                def step(x):
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        loss = model(x).sum()
                    loss.backward()
                """
            )
        },
    )
    lines = cli(project, "check", "amp.py", "--no-cache").stdout.splitlines()
    assert lines[0].startswith("amp.py:9:5: CAL002 ")
    assert lines[1].startswith("    amp.py:8:16: compiled call ran with autocast on (cuda, bfloat16)")
    assert lines[2] == "    amp.py:3:9: compiled here (torch.compile, backend='inductor')"
    assert lines[3] == "    amp.py:7:10: forward autocast context: `torch.autocast(...)`"


def test_concise_keeps_one_line_per_finding(project):
    (project / "chain.py").write_text(CHAIN)
    lines = cli(project, "check", ".", "--no-cache", "--concise").stdout.splitlines()
    assert [line.split(": CAL")[0] for line in lines[:-2]] == ["chain.py:25:16", "hazard.py:9:16"]
    assert lines[-2] == "2 unsafe fixes available with `--fix --unsafe-fixes`."
    assert lines[-1].startswith("Found 2 findings in 3 files")


def test_show_source_prints_the_line_with_a_caret_range(project):
    (project / "tabs.py").write_text(HAZARD.replace("    ", "\t"))
    lines = cli(
        project, "check", "hazard.py", "tabs.py", "--no-cache", "--concise", "--show-source"
    ).stdout.splitlines()
    assert lines[:4] == [
        lines[0],
        "    |",
        "  9 |         return f(fwAD.make_dual(x, t))",
        "    |                ^^^^^^^^^^^^^^^^^^^^^^^",
    ]
    assert lines[0].startswith(HAZARD_AT)
    assert lines[4].startswith("tabs.py:9:")  # a tab is one column, shown as four spaces: the carets still line up
    assert lines[6:8] == [
        "  9 |         return f(fwAD.make_dual(x, t))",
        "    |                ^^^^^^^^^^^^^^^^^^^^^^^",
    ]


def test_colors_on_a_terminal_only(project):
    code, shown = on_terminal(project, "check", "hazard.py", "--no-cache")
    assert code == 1
    assert "\033[1mhazard.py\033[0m" in shown and "\033[1;31mCAL001\033[0m" in shown
    _, plain = on_terminal(project, "check", "hazard.py", "--no-cache", env={"NO_COLOR": "1"})
    assert "\033[" not in plain and HAZARD_AT in plain
    _, plain = on_terminal(project, "check", "hazard.py", "--no-cache", "--format", "json")
    assert "\033[" not in plain
    _, plain = on_terminal(project, "check", "hazard.py", "--no-cache", "-o", "report.txt")
    assert "\033[" not in (project / "report.txt").read_text()
    piped = cli(project, "check", "hazard.py", "--no-cache")
    assert "\033[" not in piped.stdout and piped.stdout.startswith(HAZARD_AT)
    forced = cli(project, "check", "hazard.py", "--no-cache", env={"FORCE_COLOR": "1"})
    assert "\033[1;31mCAL001\033[0m" in forced.stdout
    for fmt in ("json", "sarif", "github"):
        output = cli(project, "check", "hazard.py", "--no-cache", "--format", fmt, env={"FORCE_COLOR": "1"}).stdout
        assert "\033" not in output and "\\u001b" not in output, fmt


def test_statistics_and_quiet(project):
    (project / "chain.py").write_text(CHAIN)
    (project / "config_bad.py").write_text(BAD_CONFIG)
    stats = cli(project, "check", ".", "--no-cache", "--statistics")
    assert stats.returncode == 1
    lines = stats.stdout.splitlines()
    assert lines[:2] == [
        "2  CAL001  [ ] compiled-callable-in-dual-level",
        "1  CAL003  [*] invalid-backward-pass-autocast",
    ]
    assert lines[2] == "[*] 1 fixable with `--fix` (2 unsafe fixes available with `--fix --unsafe-fixes`)."
    assert lines[3].startswith("Found 3 findings in 4 files") and len(lines) == 4
    quiet = cli(project, "check", ".", "--no-cache", "--quiet", "--concise")
    assert quiet.returncode == 1
    assert [line.split(":")[0] for line in quiet.stdout.splitlines()] == ["chain.py", "config_bad.py", "hazard.py"]
    assert cli(project, "check", "clean.py", "--no-cache", "-q").stdout == ""
    assert (
        cli(project, "check", ".", "--no-cache", "-q", "--statistics").stdout.splitlines()[0]
        == "2  CAL001  [ ] compiled-callable-in-dual-level"
    )
    assert cli(project, "check", ".", "--no-cache", "--statistics", "--format", "json").returncode == 2


def test_summary_counts_add_up_cold_and_warm(project):
    write_files(
        project,
        {
            "pkg/__init__.py": "",
            "pkg/ops.py": "import torch\n\nfast = torch.compile(torch.sin)\n",
            "use.py": "import torch.autograd.forward_ad as fwAD\nfrom pkg.ops import fast\n\nwith fwAD.dual_level():\n    fast(fwAD.make_dual(1, 1))\n",
        },
    )
    summary = re.compile(
        r"Found 2 findings in 5 files \((\d+) analyzed: (\d+) parsed, (\d+) cached\) in \d+\.\d\ds, "
        r"for torch 2\.13 \(2\.13\.0\S*, installed torch\)\.$"
    )
    for expected_parsed in (3, 0):  # cold, then warm
        last = cli(project, "check", ".").stdout.splitlines()[-1]
        match = summary.match(last)
        assert match, last
        analyzed, parsed, cached = map(int, match.groups())
        assert (analyzed, parsed, cached) == (3, expected_parsed, 3 - expected_parsed), last
    document = json.loads(cli(project, "check", ".", "--format", "json").stdout)
    assert document["stats"]["parsed"] + document["stats"]["cached"] == document["stats"]["analyzed"]
    assert cli(project, "check", "clean.py").stdout.startswith(
        "No findings in 1 file (0 analyzed: 0 parsed, 0 cached) in "
    )


def test_summary_time_includes_confirm(project, monkeypatch, capsys):
    """The reported seconds cover the whole run, confirm included (a fake clock, no real timing)."""
    import compile_ad_lint.cli as cli_module
    import compile_ad_lint.confirm as confirm_package

    clock = [1000.0]
    monkeypatch.setattr(cli_module.time, "perf_counter", lambda: clock[0])

    def fake_confirm(findings, options):  # confirm mode takes 42 "seconds"
        clock[0] += 42.0
        return list(findings)

    monkeypatch.setattr(confirm_package, "confirm_findings", fake_confirm)
    monkeypatch.chdir(project)
    assert cli_module.main(["check", "hazard.py", "--no-cache", "--confirm", "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["stats"]["seconds"] == 42.0


def test_cal003_message_shows_the_value_as_source(project):
    (project / "config_bad.py").write_text(BAD_CONFIG + 'fc.backward_pass_autocast = ("of", [None, True, 1.5])\n')
    findings = json.loads(cli(project, "check", "config_bad.py", "--no-cache", "--format", "json").stdout)["findings"]
    messages = [f["message"] for f in findings]
    assert messages == [
        'backward_pass_autocast = {"device_type": "cuda", "dtype": torch.float16} is not a value torch accepts',
        'backward_pass_autocast = ("of", [None, True, 1.5]) is not a value torch accepts',
    ]
    assert findings[0]["details"][0].startswith(
        'It is set to {"device_type": "cuda", "dtype": torch.float16} via assignment;'
    )
    assert findings[1]["details"][0].startswith('It is set to ("of", [None, True, 1.5]) via assignment;')
    texts = messages + [d for f in findings for d in f["details"]]
    assert all("Symbol(" not in m and "Literal(" not in m for m in texts)


# -- clear errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--jobs", "abc"], "--jobs: expected a positive integer, got 'abc'"),
        (["-j", "0"], "--jobs: expected a positive integer, got '0'"),
        (["--max-call-depth", "deep"], "--max-call-depth: expected an integer from 0 to 64, got 'deep'"),
        (["--max-function-walks", "0"], "--max-function-walks: expected an integer from 1 to 10000000, got '0'"),
        (["--confirm-timeout", "soon"], "--confirm-timeout: expected a positive number of seconds, got 'soon'"),
        (["--select", ""], "--select: selects no rule"),
        (["--ignore", "CAL1"], "--ignore: 'CAL1' is not a compile-ad-lint rule code or prefix"),
        (["--concise", "--format", "sarif"], "--concise applies to --format text, not sarif"),
    ],
)
def test_clear_usage_errors(project, args, message):
    completed = cli(project, "check", ".", "--no-cache", *args)
    assert completed.returncode == 2
    assert message in completed.stderr, completed.stderr
    assert "[tool.compile-ad-lint]" not in completed.stderr and "Traceback" not in completed.stderr


def test_cache_clean_on_a_missing_path_exits_2(project):
    completed = cli(project, "cache", "clean", "nowhere")
    assert completed.returncode == 2
    assert "nowhere: path does not exist" in completed.stderr
    assert cli(project, "check", ".").returncode == 1
    assert cli(project, "cache", "clean", ".").returncode == 0


def test_lsp_debounce_error_names_the_flag(project):
    completed = cli(project, "lsp", "--debounce-ms", "soon")
    assert completed.returncode == 2 and "--debounce-ms: expected a number of milliseconds" in completed.stderr


# -- configuration ---------------------------------------------------------------------------------


def test_per_file_ignores(project):
    write_files(
        project,
        {
            "pyproject.toml": '[tool.compile-ad-lint.per-file-ignores]\n"tests/*" = ["CAL001"]\n"legacy.py" = "CAL"\n"sub/*.py" = ["CAL003"]\n',
            "tests/test_it.py": HAZARD,
            "legacy.py": HAZARD,
            "sub/mod.py": HAZARD,
        },
    )
    completed = cli(project, "check", ".", "--no-cache", "--concise")
    assert completed.returncode == 1
    findings = [line for line in completed.stdout.splitlines() if ": CAL" in line]
    assert sorted(line.split(":")[0] for line in findings) == ["hazard.py", "sub/mod.py"]
    # The same from inside a folder and by absolute path: globs are relative to the project root.
    inside = cli(project / "tests", "check", ".", "--no-cache")
    assert inside.returncode == 0, inside.stdout
    absolute = cli(project.parent, "check", str(project), "--no-cache", "--format", "json")
    assert sorted(Path(f["path"]).name for f in json.loads(absolute.stdout)["findings"]) == ["hazard.py", "mod.py"]
    (project / "pyproject.toml").write_text('[tool.compile-ad-lint.per-file-ignores]\n"tests/*" = ["CAL0O1"]\n')
    bad = cli(project, "check", ".", "--no-cache")
    assert (
        bad.returncode == 2 and "per-file-ignores 'tests/*': 'CAL0O1' is not a compile-ad-lint rule code" in bad.stderr
    )
    (project / "pyproject.toml").write_text('[tool.compile-ad-lint]\nper-file-ignores = ["tests/*"]\n')
    assert cli(project, "check", ".", "--no-cache").returncode == 2


def test_extend_exclude(project):
    write_files(
        project,
        {
            "pyproject.toml": '[tool.compile-ad-lint]\nexclude = ["legacy"]\nextend-exclude = ["generated", "*_pb2.py"]\n',
            "generated/g.py": HAZARD,
            "legacy/old.py": HAZARD,
            "api_pb2.py": HAZARD,
        },
    )
    completed = cli(project, "check", ".", "--no-cache", "--concise")
    assert [line.split(":")[0] for line in completed.stdout.splitlines() if ": CAL" in line] == ["hazard.py"]
    assert "in 2 files" in completed.stdout
    assert (
        cli(project, "check", "generated/g.py", "--no-cache").returncode == 1
    )  # a file named explicitly is always checked


# -- --dependents (what the pre-commit hook runs) ---------------------------------------------------


def test_dependents_reports_findings_whose_chain_touches_a_named_file(project):
    write_files(
        project,
        {
            "pkg/__init__.py": "",
            "pkg/model.py": "import torch\n\n\n@torch.compile\ndef f(x):\n    return torch.sin(x)\n",
            "pkg/jvp.py": "import torch.autograd.forward_ad as fwAD\n\nfrom pkg.model import f\n\n\ndef jvp(x, t):\n    with fwAD.dual_level():\n        return f(fwAD.make_dual(x, t))\n",
            "pkg/other.py": "x = 1\n",
            "broken.py": "def f(:\n    x.backward()\n",
        },
    )
    alone = cli(project, "check", "pkg/model.py", "--no-cache")
    assert alone.returncode == 0, alone.stdout
    with_dependents = cli(project, "check", "--dependents", "pkg/model.py", "--no-cache", "--concise")
    assert with_dependents.returncode == 1
    findings = [line for line in with_dependents.stdout.splitlines() if ": CAL" in line]
    assert [line.split(": ")[0] for line in findings] == ["pkg/jvp.py:8:16"]
    # Checked: the named file and the file whose finding is reported (not "1 finding in 1 file").
    assert with_dependents.stdout.splitlines()[-1].startswith("Found 1 finding in 2 files"), with_dependents.stdout
    write_files(project, {"pkg/jvp2.py": (project / "pkg/jvp.py").read_text()})
    two = cli(project, "check", "--dependents", "pkg/model.py", "--no-cache", "--concise")
    assert two.stdout.splitlines()[-1].startswith("Found 2 findings in 3 files"), two.stdout
    # An unrelated named file: neither jvp.py's nor hazard.py's finding, nor broken.py's CAL900.
    assert cli(project, "check", "--dependents", "pkg/other.py", "--no-cache").returncode == 0
    missing = cli(project, "check", "--dependents", "nowhere.py", "--no-cache")
    assert missing.returncode == 2 and "nowhere.py:1:1: CAL900 path does not exist" in missing.stdout


# -- docs/command-line.md documents every flag ------------------------------------------------------


def _usage_section() -> str:
    page = (REPO_ROOT / "docs" / "command-line.md").read_text(encoding="utf-8")
    start = page.index("\n## Flags\n")
    return page[start : page.index("\n## ", start + 1)]


@pytest.mark.parametrize("command", ["check", "confirm", "cache", "rules", "explain", "lsp"])
def test_flag_docs_list_every_flag_with_its_default(command):
    import argparse

    from compile_ad_lint.cli import build_parser

    usage = _usage_section()
    subparsers = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    parser = subparsers.choices[command]
    assert f"compile-ad-lint {command}" in usage
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction) or not action.option_strings:
            continue
        for option in action.option_strings:
            assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", usage), (
                f"docs/command-line.md Flags does not list {option}"
            )
        long = max(action.option_strings, key=len)
        line = next(line for line in usage.splitlines() if re.search(rf"(?<![\w-]){re.escape(long)}(?![\w-])", line))
        if "default" in (action.help or ""):
            documented = usage.splitlines()[usage.splitlines().index(line) :][:3]
            assert any("default" in text for text in documented), (
                f"docs/command-line.md Flags gives no default for {long}: {line}"
            )


def test_help_shows_every_documented_flag():
    shown = ""
    for command in ("check", "confirm"):
        completed = subprocess.run(
            [sys.executable, "-m", "compile_ad_lint", command, "--help"], capture_output=True, text=True, timeout=120
        )
        assert completed.returncode == 0
        shown += completed.stdout
    usage = _usage_section()
    for flag in sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", usage))):
        if flag in ("--version", "--debounce-ms", "--help"):
            continue
        assert flag in shown, (
            f"docs/command-line.md documents {flag}, neither `check --help` nor `confirm --help` shows it"
        )
