"""``check --fix`` / ``--diff`` on a warm cache: what they print and write is what they do without one.

The fix loop keeps its rounds (plans taken, the bytes they make) and the analysis of the fixed
contents in the cache (``fixes/rounds.py``, ``Analyzer.check(derived=True)``); a second run replays
them. These tests compare the outputs of cached runs with ``--no-cache`` runs of the same tree,
and check through what a run loads that a replay did not carry the fixes out again.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from compile_ad_lint.cli import main

#: A library module whose two compiled calls get a CAL002 fix each (both add the same import),
#: scripts that each call it and have a hazard of their own, and an unused ``noqa`` (CAL901, a
#: text fix, applied in the round after the plan that edits its file).
PROJECT = {
    "model.py": """\
        import torch

        net = torch.nn.Linear(4, 4)
        step = torch.compile(net)
        """,
    "common.py": """\
        \"\"\"Training steps shared by the scripts.\"\"\"
        import torch

        from model import step  # the compiled model


        def train(x):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = step(x).sum()   # odd  spacing kept
            loss.backward()


        def train_again(x):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = step(x).mean()
            loss.backward()
        """,
    **{
        f"train_{name}.py": f"""\
        import torch

        from common import train
        from model import step


        def main():
            x = torch.ones(2, 4){noqa}
            train(x)
            with torch.autocast("cpu", dtype=torch.bfloat16):
                out = step(x).sum()
            out.backward()


        if __name__ == "__main__":
            main()
        """
        for name, noqa in (("a", ""), ("b", ""), ("c", "  # noqa: CAL003"))
    },
}

#: ``common.py`` as its two fixes leave it: the import they share added once.
COMMON_FIXED = """\
\"\"\"Training steps shared by the scripts.\"\"\"
import torch
import torch._functorch.config

from model import step  # the compiled model


def train(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        with torch._functorch.config.patch(backward_pass_autocast="off"):
            loss = step(x).sum()   # odd  spacing kept
    loss.backward()


def train_again(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        with torch._functorch.config.patch(backward_pass_autocast="off"):
            loss = step(x).mean()
    loss.backward()
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    for name, text in PROJECT.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def _run(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    code = main(["check", ".", *arguments])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _tree(root: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(root.glob("*.py"))}


def test_a_warm_diff_prints_what_a_cold_one_does(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cold = _run(capsys, "--diff", "--no-cache")
    assert cold[0] == 1 and "would fix 6 findings in 4 files" in cold[2], cold
    assert "+import torch._functorch.config\n" in cold[1] and "-    x = torch.ones(2, 4)  # noqa: CAL003\n" in cold[1]
    assert _run(capsys)[0] == 1  # a plain check first: the cache holds the analysis, not the fixes
    assert _run(capsys, "--diff") == cold
    assert _run(capsys, "--diff") == cold  # replayed
    assert _tree(project) == {name: textwrap.dedent(text).encode() for name, text in PROJECT.items()}


def test_a_warm_diff_after_editing_one_file_prints_what_a_cold_one_does(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(capsys, "--diff")[0] == 1
    assert _run(capsys, "--diff")[0] == 1
    # The library the scripts read, and then one script.
    common = project / "common.py"
    common.write_text(common.read_text().replace(".mean()", ".sum() * 2"))
    assert _run(capsys, "--diff") == _run(capsys, "--diff", "--no-cache")
    script = project / "train_b.py"
    script.write_text(script.read_text().replace('"cpu", dtype=torch.bfloat16', '"cpu", dtype=torch.float16'))
    warm = _run(capsys, "--diff")
    assert warm == _run(capsys, "--diff", "--no-cache")
    assert "float16" in warm[1]


def test_fixes_sharing_an_import_compose_as_without_the_cache(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reference = tmp_path / "reference"
    shutil.copytree(project, reference)
    assert main(["check", str(reference), "--fix", "--no-cache", "-q"]) == 0
    capsys.readouterr()
    assert (reference / "common.py").read_text() == COMMON_FIXED
    assert _run(capsys, "--diff")[0] == 1
    code, out, _ = _run(capsys, "--fix")  # its rounds replayed from the --diff
    assert code == 0 and "Fixed 6 findings in 4 files." in out, out
    assert _tree(project) == _tree(reference)
    # Fixing the fixed tree again changes nothing, and the check of it is the one the fix loop made.
    assert _run(capsys, "--fix")[0] == 0
    assert _tree(project) == _tree(reference)
    assert _run(capsys, "--format", "json")[0] == 0


def _in_subprocess(root: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys, compile_ad_lint.cli as c; "
        f"rc = c.main(['check', '.', *{list(arguments)!r}]); "
        "print('LOADED', sorted(m for m in ('libcst', 'compile_ad_lint.linking.interpreter') if m in sys.modules), "
        "file=sys.stderr); sys.exit(rc)"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root)


def test_a_second_diff_neither_parses_for_fixes_nor_analyzes(project: Path) -> None:
    first = _in_subprocess(project, "--diff")
    assert first.returncode == 1, first.stderr
    assert "LOADED ['compile_ad_lint.linking.interpreter', 'libcst']" in first.stderr
    second = _in_subprocess(project, "--diff")
    assert second.returncode == 1, second.stderr
    assert "LOADED []" in second.stderr
    assert second.stdout == first.stdout
    # After --fix, a check of the fixed tree is the fix loop's last analysis, read from the cache.
    fixed = _in_subprocess(project, "--fix")
    assert fixed.returncode == 0, fixed.stderr
    assert "LOADED []" in fixed.stderr
    report = _in_subprocess(project, "--format", "json")
    assert report.returncode == 0, report.stderr
    assert "LOADED []" in report.stderr
    assert json.loads(report.stdout)["findings"] == []


def _parsed_in_subprocess(root: Path, *arguments: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """A run in a process of its own, and the files it parsed with LibCST for fixes."""
    code = (
        "import sys, compile_ad_lint.cli as c, compile_ad_lint.fixes.parsed as p\n"
        "seen, real = [], p.ParsedModule.__init__\n"
        "def init(self, display, data):\n"
        "    seen.append(display)\n"
        "    real(self, display, data)\n"
        "p.ParsedModule.__init__ = init\n"
        f"rc = c.main(['check', '.', *{list(arguments)!r}])\n"
        "print('PARSED', sorted(seen), file=sys.stderr)\n"
        "sys.exit(rc)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root)
    parsed = [line for line in run.stderr.splitlines() if line.startswith("PARSED ")]
    assert len(parsed) == 1, run.stderr
    return run, ast.literal_eval(parsed[0].removeprefix("PARSED "))


def test_a_diff_after_a_json_report_carries_one_file_plans_out_from_their_edits(project: Path, tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    shutil.copytree(project, reference)
    cold = subprocess.run(
        [sys.executable, "-m", "compile_ad_lint", "check", ".", "--diff", "--no-cache"],
        capture_output=True,
        text=True,
        cwd=reference,
    )
    report, parsed = _parsed_in_subprocess(project, "--format", "json")
    assert report.returncode == 1 and parsed, report.stderr  # the report built every fix's edits
    diff, parsed = _parsed_in_subprocess(project, "--diff")
    # The scripts' plans each edit their own file: applied from the edits the report kept. The two
    # plans in common.py share an added import: carried out together, which parses the file.
    assert parsed == ["common.py"]
    assert (diff.returncode, diff.stdout) == (cold.returncode, cold.stdout)
    assert diff.stderr.replace(f"PARSED {parsed!r}\n", "") == cold.stderr
