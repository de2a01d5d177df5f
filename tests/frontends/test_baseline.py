"""Baselines (``--write-baseline``/``--baseline``, the config's ``baseline``, flake8, the pre-commit
entry) and ``--add-noqa``."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from compile_ad_lint import Config, load_config
from compile_ad_lint.api import Analyzer
from compile_ad_lint.baseline import Fingerprints, load_baseline
from compile_ad_lint.cli import main
from compile_ad_lint.fixes.noqa import plan_noqa
from compile_ad_lint.summary.extract import find_suppressions

HAZARDS = """\
import torch
import torch.autograd.forward_ad as fwAD
import torch._functorch.config as fc

f = torch.compile(torch.sin)


def probe(x, t):
    with fwAD.dual_level():
        return f(fwAD.make_dual(x, t))


fc.backward_pass_autocast = "of"
fc.backward_pass_autocast = "of"
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.compile-ad-lint]\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "probe.py").write_text(HAZARDS)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _check(capsys, *args: str) -> tuple[int, list[dict], str]:
    capsys.readouterr()
    code = main(["check", "--no-cache", "--format", "json", *args])
    captured = capsys.readouterr()
    return code, json.loads(captured.out)["findings"] if captured.out else [], captured.err


def test_write_then_check_reports_nothing_and_survives_moved_lines(project: Path, capsys) -> None:
    code, findings, err = _check(capsys, ".", "--write-baseline", "baseline.json")
    assert code == 0 and len(findings) == 3 and "wrote 3 findings to the baseline baseline.json" in err
    document = json.loads((project / "baseline.json").read_text())
    assert document["compile-ad-lint-baseline"] == 1
    assert {(e["code"], e["path"]) for e in document["findings"]} == {
        ("CAL001", "pkg/probe.py"),
        ("CAL003", "pkg/probe.py"),
    }

    code, findings, err = _check(capsys, ".", "--baseline", "baseline.json")
    assert (code, findings) == (0, [])
    assert "3 findings in the baseline baseline.json not reported; 0 baseline entries no longer occur" in err

    # Lines move and another line changes: still matched.
    probe = project / "pkg" / "probe.py"
    probe.write_text("# a new header\n\n" + HAZARDS.replace("def probe(x, t):", "def probe(x, t):  # renamed comment"))
    assert _check(capsys, ".", "--baseline", "baseline.json")[:2] == (0, [])

    # A new hazard is reported; editing a flagged line makes it new, and its old entry gone.
    probe.write_text(
        probe.read_text().replace('fc.backward_pass_autocast = "of"\nfc', 'fc.backward_pass_autocast = "Of"\nfc')
        + 'fc.backward_pass_autocast = "same-as-forward"\n'
    )
    code, findings, err = _check(capsys, ".", "--baseline", "baseline.json")
    assert code == 1
    assert sorted(f["facts"]["value"] for f in findings) == ['"Of"', '"same-as-forward"']
    assert "1 baseline entry no longer occurs" in err


def test_baseline_matches_from_another_working_directory_and_with_the_sarif_fingerprint(
    project: Path, capsys, monkeypatch
) -> None:
    _check(capsys, ".", "--write-baseline", "baseline.json")
    monkeypatch.chdir(project / "pkg")
    assert _check(capsys, ".", "--baseline", "../baseline.json")[:2] == (0, [])
    monkeypatch.chdir(project)
    capsys.readouterr()
    main(["check", ".", "--no-cache", "--format", "sarif"])
    sarif = json.loads(capsys.readouterr().out)
    recorded = {e["fingerprint"] for e in json.loads((project / "baseline.json").read_text())["findings"]}
    assert {r["partialFingerprints"]["compileAdLint/v1"] for r in sarif["runs"][0]["results"]} == recorded


def test_the_two_identical_findings_are_counted(project: Path, capsys) -> None:
    _check(capsys, ".", "--write-baseline", "baseline.json")
    probe = project / "pkg" / "probe.py"
    probe.write_text(HAZARDS + 'fc.backward_pass_autocast = "of"\n')  # a third identical line
    code, findings, _ = _check(capsys, ".", "--baseline", "baseline.json")
    assert code == 1 and [f["code"] for f in findings] == ["CAL003"]


def test_baseline_from_the_config_and_its_errors(project: Path, capsys) -> None:
    _check(capsys, ".", "--write-baseline", "baseline.json")
    (project / "pyproject.toml").write_text('[tool.compile-ad-lint]\nbaseline = "baseline.json"\n')
    assert load_config(project).baseline == project / "baseline.json"
    assert _check(capsys, "pkg/probe.py")[:2] == (0, [])
    # The pre-commit hook's command: staged files with --dependents.
    assert _check(capsys, "--dependents", "pkg/probe.py")[:2] == (0, [])
    # --write-baseline ignores the baseline it may be replacing.
    assert len(_check(capsys, ".", "--write-baseline", "again.json")[1]) == 3

    (project / "baseline.json").write_text("{}")
    code, _, err = _check(capsys, ".")
    assert code == 2 and "not a compile-ad-lint baseline" in err
    (project / "pyproject.toml").write_text("[tool.compile-ad-lint]\nbaseline = 3\n")
    code, _, err = _check(capsys, ".")
    assert code == 2 and "baseline: expected a path" in err
    (project / "pyproject.toml").write_text("[tool.compile-ad-lint]\n")
    code, _, err = _check(capsys, ".", "--baseline", "missing.json")
    assert code == 2 and "missing.json: cannot read the baseline" in err


def test_fingerprints_read_buffers_not_the_disk(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text('import torch._functorch.config as fc\nfc.backward_pass_autocast = "of"\n')
    [finding] = Analyzer(Config(), use_cache=False, jobs=1).check([str(tmp_path / "m.py")]).findings
    on_disk = Fingerprints().of(finding)
    assert (
        Fingerprints(read=lambda _: b'import torch._functorch.config as fc\nfc.backward_pass_autocast = "of"\n').of(
            finding
        )
        == on_disk
    )
    assert Fingerprints(read=lambda _: b"\n# different text on that line\n").of(finding) != on_disk


def test_flake8_applies_the_baseline(project: Path, capsys) -> None:
    from .test_flake8_plugin import run_flake8

    _, before, _ = run_flake8(project)
    assert len(before) == 3
    _check(capsys, ".", "--write-baseline", "baseline.json")
    _, found, output = run_flake8(project, "--cal-baseline", "baseline.json")
    assert found == set(), output
    (project / "pyproject.toml").write_text('[tool.compile-ad-lint]\nbaseline = "baseline.json"\n')
    assert run_flake8(project)[1] == set()


# -- --add-noqa -----------------------------------------------------------------------------------


NOQA_SOURCE = """\
import torch
import torch.autograd.forward_ad as fwAD
import torch._functorch.config as fc

f = torch.compile(torch.sin)
fc.backward_pass_autocast = "of"  # noqa: E501
fc.backward_pass_autocast = "of"  # compile-ad-lint: ignore[CAL001]
fc.backward_pass_autocast = "of"   \t
with fwAD.dual_level():
    y = f(fwAD.make_dual(x, t)); fc.backward_pass_autocast = {"device_type": "cpu"}
    z = f(fwAD.make_dual(x, t)) + \\
        1
    s = (f(fwAD.make_dual(x, t)), '''
        still a string''')
"""


def test_add_noqa_adds_each_code_once_and_keeps_existing_comments(tmp_path: Path, capsys) -> None:
    path = tmp_path / "probe.py"
    path.write_text(NOQA_SOURCE)
    assert main(["check", str(tmp_path), "--no-cache", "--add-noqa"]) == 0
    captured = capsys.readouterr()
    lines = path.read_text().splitlines()
    assert lines[5] == 'fc.backward_pass_autocast = "of"  # noqa: E501, CAL003'
    assert lines[6] == 'fc.backward_pass_autocast = "of"  # compile-ad-lint: ignore[CAL001, CAL003]'
    assert lines[7] == 'fc.backward_pass_autocast = "of"  # noqa: CAL003'
    assert (
        lines[9]
        == '    y = f(fwAD.make_dual(x, t)); fc.backward_pass_autocast = {"device_type": "cpu"}  # noqa: CAL001, CAL003'
    )
    assert lines[10].endswith("+ \\")  # a comment after a continuation would not parse
    assert lines[12] == "    s = (f(fwAD.make_dual(x, t)), '''"  # a comment there would be string text
    assert "Added 4 noqa directives to 1 file." in captured.err
    assert f"{path}:11: no noqa added (the line ends in a \\ continuation)" in captured.err
    assert f"{path}:13: no noqa added (the line ends inside a string)" in captured.err
    compile(path.read_text(), str(path), "exec")
    # Every line that got one is suppressed now; a second run adds nothing.
    code = main(["check", str(tmp_path), "--no-cache", "--format", "json"])
    remaining = {(f["line"], f["code"]) for f in json.loads(capsys.readouterr().out)["findings"]}
    # Line 7's ignore[CAL001] silences nothing (CAL901); --add-noqa never silences that one.
    assert remaining == {(7, "CAL901"), (11, "CAL001"), (13, "CAL001")} and code == 1
    text = path.read_text()
    assert main(["check", str(tmp_path), "--no-cache", "--add-noqa"]) == 0
    assert path.read_text() == text
    assert "Added 0 noqa directives to 0 files." in capsys.readouterr().err


@pytest.mark.parametrize(
    ("line", "codes", "expected"),
    [
        ("y = f(x)", ["CAL001"], (8, 8, "  # noqa: CAL001")),
        ("y = f(x)  # noqa:CAL002", ["CAL001", "CAL002"], (23, 23, ", CAL001")),
        ("y = f(x)  # NOQA: cal001", ["CAL001"], None),
        ("y = f(x)  # noqa", ["CAL001"], None),
        ("y = f(x)  # noqa: CAL001, CAL001", ["CAL001"], None),
        ("y = f(x)  # compile-ad-lint: ignore[CAL002]  # noqa: E501", ["CAL001"], (42, 42, ", CAL001")),
        ("y = f(x)  # compile-ad-lint: ignore", ["CAL001"], None),
    ],
)
def test_noqa_insertion_uses_the_analyzers_grammar(line: str, codes: list[str], expected) -> None:
    edits, skipped = plan_noqa([line], {1: codes})
    assert skipped == []
    assert [(edit.start, edit.end, edit.text) for edit in edits] == ([expected] if expected else [])
    if expected is not None:
        start, end, text = expected
        fixed = line[:start] + text + line[end:]
        read = {s.line: s.codes for s in find_suppressions(fixed.encode())}  # as the analyzer reads them
        assert set(codes) <= read[1]


STRING_NOQA = """\
import torch._functorch.config as fc

fc.backward_pass_autocast = "of"; tag = "# noqa: CAL999"
fc.backward_pass_autocast = "of"; tag = "# noqa: CAL003"
fc.backward_pass_autocast = "of"; tag = '''
# noqa: CAL003'''
"""


def test_add_noqa_never_edits_a_string_and_strings_suppress_nothing(tmp_path: Path, capsys) -> None:
    """``# noqa:`` inside a string literal is text: the analyzer does not read it as a suppression,
    and ``--add-noqa`` adds a comment after the string rather than extending the string."""
    path = tmp_path / "probe.py"
    path.write_text(STRING_NOQA)
    assert main(["check", str(path), "--no-cache", "--format", "json"]) == 1
    found = {f["line"] for f in json.loads(capsys.readouterr().out)["findings"]}
    assert found == {3, 4, 5}
    assert main(["check", str(path), "--no-cache", "--add-noqa"]) == 0
    err = capsys.readouterr().err
    lines = path.read_text().splitlines()
    assert lines[2] == 'fc.backward_pass_autocast = "of"; tag = "# noqa: CAL999"  # noqa: CAL003'
    assert lines[3] == 'fc.backward_pass_autocast = "of"; tag = "# noqa: CAL003"  # noqa: CAL003'
    assert lines[4:6] == ["fc.backward_pass_autocast = \"of\"; tag = '''", "# noqa: CAL003'''"]
    assert f"{path}:5: no noqa added (the line ends inside a string)" in err
    assert main(["check", str(path), "--no-cache", "--format", "json"]) == 1
    assert {f["line"] for f in json.loads(capsys.readouterr().out)["findings"]} == {5}


def test_add_noqa_is_not_a_stale_write(tmp_path: Path) -> None:
    from compile_ad_lint.fixes.apply import add_noqa

    path = tmp_path / "probe.py"
    path.write_text('import torch._functorch.config as fc\nfc.backward_pass_autocast = "of"\n')
    report = Analyzer(Config(), use_cache=False, jobs=1).check([str(path)])
    path.write_text('import torch._functorch.config as fc\nfc.backward_pass_autocast = "of"  # edited\n')
    outcome = add_noqa(report.findings, dict(report.digests), tmp_path)
    assert outcome.added == 0 and outcome.skipped[0][2] == "the file changed since it was analyzed"
    assert "noqa" not in path.read_text()


def test_baseline_load_rejects_bad_entries(tmp_path: Path) -> None:
    from compile_ad_lint.baseline import BaselineError

    path = tmp_path / "b.json"
    path.write_text(json.dumps({"compile-ad-lint-baseline": 1, "findings": [{"code": "CAL001", "path": 3}]}))
    with pytest.raises(BaselineError, match="entry 1 needs"):
        load_baseline(path)
    path.write_text(textwrap.dedent("not json"))
    with pytest.raises(BaselineError, match="invalid JSON"):
        load_baseline(path)
