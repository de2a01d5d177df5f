"""The target torch: how it is resolved (setting, installed torch, project pins, newest known), and
that every front end reports for it and says which it is (text summary, JSON stats, SARIF)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from compile_ad_lint import Config, ConfigError
from compile_ad_lint import target as target_module
from compile_ad_lint.api import Analyzer
from compile_ad_lint.cli import main
from compile_ad_lint.config import read_config_file
from compile_ad_lint.core.torch_versions import Series, TargetError
from compile_ad_lint.knowledge.versions import KNOWN_SERIES, NEWEST, OLDEST
from compile_ad_lint.target import project_pins, resolve, with_target
from compile_ad_lint.testing import write_files

FIRST_CALL_DUAL = """import torch
import torch.autograd.forward_ad as fwAD

f = torch.compile(torch.sin)


def probe(x, t):
    with fwAD.dual_level():
        return fwAD.unpack_dual(f(fwAD.make_dual(x, t))).tangent
"""


@pytest.fixture
def no_installed_torch(monkeypatch):
    monkeypatch.setattr(target_module, "installed_torch", lambda: None)


def _series(*texts: str) -> tuple[Series, ...]:
    return tuple(Series.parse(t) for t in texts)


# -- resolution order ---------------------------------------------------------------------------


def test_a_setting_wins_over_the_installed_torch(monkeypatch):
    monkeypatch.setattr(target_module, "installed_torch", lambda: "2.13.0+cpu")
    found = resolve("2.14", "--target-torch", None)
    assert found.series == _series("2.14") and found.source == "--target-torch" and found.spec == "2.14"


def test_the_installed_torch_comes_before_the_pins(monkeypatch, tmp_path):
    write_files(tmp_path, {"requirements.txt": "torch==2.15.0\n"})
    monkeypatch.setattr(target_module, "installed_torch", lambda: "2.14.1+cu130")
    found = resolve(None, "", tmp_path)
    assert found.series == _series("2.14") and found.source == "installed torch" and found.spec == "2.14.1+cu130"


def test_without_torch_or_pins_the_newest_known(no_installed_torch, tmp_path):
    found = resolve(None, "", tmp_path)
    assert found.series == (NEWEST,) and found.source.startswith("default")


@pytest.mark.parametrize(
    ("files", "series", "source"),
    [
        (
            {"pyproject.toml": '[project]\nname = "p"\ndependencies = ["torch>=2.14,<2.15", "numpy"]\n'},
            ("2.14",),
            "pyproject.toml",
        ),
        (
            {"pyproject.toml": '[project]\nname = "p"\n[project.optional-dependencies]\ngpu = ["torch==2.13.0"]\n'},
            ("2.13",),
            "pyproject.toml",
        ),
        ({"pyproject.toml": '[dependency-groups]\ndev = ["torch~=2.15.0"]\n'}, ("2.15",), "pyproject.toml"),
        ({"pyproject.toml": '[tool.poetry.dependencies]\ntorch = "~2.14"\n'}, ("2.14",), "pyproject.toml"),
        (
            {"pyproject.toml": '[tool.poetry.dependencies]\ntorch = {version = "^2.14", source = "pt"}\n'},
            ("2.14", "2.15"),
            "pyproject.toml",
        ),
        (
            {"requirements.txt": "--extra-index-url https://x\ntorch==2.14.1 ; sys_platform == 'linux'  # cuda\n"},
            ("2.14",),
            "requirements.txt",
        ),
        ({"requirements/train.txt": "torch[opt]>=2.15\n"}, ("2.15",), "requirements/train.txt"),
        ({"setup.cfg": "[options]\ninstall_requires =\n    numpy\n    torch<2.14,>=2.13\n"}, ("2.13",), "setup.cfg"),
        (
            {"environment.yml": "dependencies:\n  - python=3.11\n  - pytorch::pytorch=2.14\n"},
            ("2.14",),
            "environment.yml",
        ),
        ({"environment.yml": "dependencies:\n  - pip:\n    - torch==2.13.0\n"}, ("2.13",), "environment.yml"),
        (
            {
                "uv.lock": 'version = 1\n[[package]]\nname = "torch"\nversion = "2.15.0"\n',
                "requirements.txt": "torch>=2.13\n",
            },
            ("2.15",),
            "uv.lock",
        ),
        ({"poetry.lock": '[[package]]\nname = "torch"\nversion = "2.14.1"\n'}, ("2.14",), "poetry.lock"),
    ],
    ids=lambda value: next(iter(value)) if isinstance(value, dict) else None,
)
def test_project_pins(no_installed_torch, tmp_path, files, series, source):
    write_files(tmp_path, files)
    found = resolve(None, "", tmp_path)
    assert found.series == _series(*series), found
    assert found.source == f"project pins: {source}"


def test_declared_pins_hold_together(no_installed_torch, tmp_path):
    write_files(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "p"\ndependencies = ["torch>=2.4"]\n',
            "requirements.txt": "torch<2.14\n",
        },
    )
    found = project_pins(tmp_path)
    assert found is not None and found.series == (OLDEST,) and found.older and not found.newer
    assert found.assumed is not None and "before 2.13" in found.assumed


def test_pins_are_bounded_input(no_installed_torch, tmp_path):
    """A huge file, a FIFO, a file that is not UTF-8 or TOML: skipped, never a hang or a traceback."""
    write_files(tmp_path, {"requirements.txt": b"torch==2.14.1\n" + b"#" * (2 << 20), "pyproject.toml": b"\xff["})
    os.mkfifo(tmp_path / "requirements-dev.txt")
    write_files(tmp_path, {"setup.cfg": "[options\ninstall_requires = torch==2.14"})
    assert project_pins(tmp_path) is None


# -- versions and specifiers ----------------------------------------------------------------------


def test_a_range_admits_every_known_series_in_it():
    found = resolve(">=2.4", "cfg", None)
    assert found.series == KNOWN_SERIES and found.older and found.newer
    assert found.versions_text(found.series) == "any torch version"
    assert found.versions_text(found.series[1:]) == "torch >= 2.14"
    assert found.versions_text(found.series[:1]) == "torch <= 2.13"


@pytest.mark.parametrize("text", ["banana", "", ">=>2", "2.x"])
def test_a_bad_setting_is_an_error(text):
    with pytest.raises(TargetError):
        resolve(text, "cfg", None)


def test_the_config_key_is_checked_and_named(tmp_path):
    pyproject = (
        write_files(tmp_path, {"pyproject.toml": '[tool.compile-ad-lint]\ntarget-torch = "two"\n'}) / "pyproject.toml"
    )
    with pytest.raises(ConfigError, match=r"pyproject.toml: \[tool.compile-ad-lint\] target-torch: 'two'"):
        read_config_file(pyproject)


def test_the_config_key_is_a_source(tmp_path, monkeypatch):
    monkeypatch.setattr(target_module, "installed_torch", lambda: "2.13.0")
    pyproject = (
        write_files(tmp_path, {"pyproject.toml": '[tool.compile-ad-lint]\ntarget-torch = "2.15"\n'}) / "pyproject.toml"
    )
    config = with_target(read_config_file(pyproject))
    assert config.torch is not None and config.torch.series == _series("2.15")
    assert config.torch.source.endswith("pyproject.toml target-torch")


# -- the findings and the front ends ------------------------------------------------------------------


def test_the_same_code_gets_the_version_correct_finding(tmp_path):
    write_files(tmp_path, {"probe.py": FIRST_CALL_DUAL})
    codes = {}
    for version in ("2.13", "2.14", "2.15"):
        config = with_target(Config(), setting=version)
        report = Analyzer(config, use_cache=True, jobs=1, cache_root=tmp_path).check([str(tmp_path)])
        codes[version] = sorted(f.code for f in report.findings)
        assert report.stats.torch == config.torch
    assert codes == {"2.13": ["CAL001"], "2.14": ["CAL006"], "2.15": ["CAL006"]}  # the cache keys on the target


def test_cli_summary_json_and_sarif_name_the_target(tmp_path, capsys, monkeypatch):
    write_files(tmp_path, {"probe.py": FIRST_CALL_DUAL})
    monkeypatch.chdir(tmp_path)
    assert main(["check", ".", "--no-cache", "--target-torch", "2.14"]) == 1
    out = capsys.readouterr().out
    assert "CAL006" in out and "CAL001" not in out
    assert out.rstrip().endswith("for torch 2.14 (2.14, --target-torch).")
    main(["check", ".", "--no-cache", "--target-torch", ">=2.13", "--format", "json"])
    stats = json.loads(capsys.readouterr().out)["stats"]
    assert stats["torch"] == {
        "spec": ">=2.13",
        "source": "--target-torch",
        "series": [str(s) for s in KNOWN_SERIES],
        "assumed": stats["torch"]["assumed"],
    }
    assert "after 2.15" in stats["torch"]["assumed"]
    main(["check", ".", "--no-cache", "--target-torch", "2.13.0", "--format", "sarif"])
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert run["properties"]["torch"]["series"] == ["2.13"] and run["properties"]["torch"]["spec"] == "2.13.0"


def test_cli_rejects_a_bad_target(tmp_path, capsys):
    write_files(tmp_path, {"probe.py": FIRST_CALL_DUAL})
    assert main(["check", str(tmp_path), "--no-cache", "--target-torch", "latest"]) == 2
    assert "--target-torch: 'latest'" in capsys.readouterr().err


PLAIN_THEN_DUAL = """import torch
import torch.autograd.forward_ad as fwAD

model = torch.compile(torch.nn.Linear(4, 4))


def train(batches):
    for x in batches:
        model(x).sum().backward()


def probe(x, t):
    with fwAD.dual_level():
        return fwAD.unpack_dual(model(fwAD.make_dual(x, t))).tangent
"""


def _messages(tmp_path: Path, version: str, source: str) -> dict[str, str]:
    """Each finding's headline and details as one text, by code."""
    write_files(tmp_path, {"case.py": source})
    report = Analyzer(with_target(Config(), setting=version), use_cache=False, jobs=1).check([str(tmp_path)])
    return {f.code: f.full_message for f in report.findings}


def test_messages_say_what_holds_on_the_target(tmp_path):
    on_2_13 = _messages(tmp_path / "a", "2.13", FIRST_CALL_DUAL)["CAL001"]
    assert on_2_13.startswith("`f(...)` runs a compiled callable on dual inputs: the tangent is silently None.")
    assert "2.14" not in on_2_13  # nothing about other versions when the target is one
    on_2_14 = _messages(tmp_path / "b", "2.14", FIRST_CALL_DUAL)["CAL006"]
    assert on_2_14.startswith("`f(...)` runs a compiled callable with dual inputs: on torch 2.14 it graph-breaks")
    assert "after a plain call (a warm-up, a training step) the tangent is silently None" in on_2_14
    spanning = _messages(tmp_path / "c", ">=2.13", FIRST_CALL_DUAL)["CAL001"]
    assert spanning.startswith(
        "`f(...)` runs a compiled callable on dual inputs: the tangent is silently None on torch 2.13."
    )
    assert "On torch >= 2.14 this first dual call graph-breaks and runs eagerly" in spanning


def test_a_plain_call_first_is_named_with_its_line(tmp_path):
    message = _messages(tmp_path, "2.14", PLAIN_THEN_DUAL)["CAL001"]
    assert message.startswith("`model(...)` runs a compiled callable on dual inputs: it raises NotImplementedError.")
    assert "It can run with plain inputs first (line 9): on torch 2.14 only a compiled callable's first call" in message
    write_files(tmp_path, {"case.py": PLAIN_THEN_DUAL})
    report = Analyzer(with_target(Config(), setting="2.14"), use_cache=False, jobs=1).check([str(tmp_path)])
    (finding,) = report.findings
    plain = [r for r in finding.related if "plain inputs" in r.message]
    assert [(r.location.line, r.location.column) for r in plain] == [(9, 9)]
    assert dict(finding.facts)["order"] == "plain first"
    assert dict(finding.facts)["outcomes"] == "torch 2.14: raises NotImplementedError"


def test_confirm_warns_when_the_run_used_another_torch():
    """Verdicts show what the torch that ran does: a run on another series than the target says so."""
    from compile_ad_lint import ConfirmResult, Finding, Location, Severity, Verdict
    from compile_ad_lint.cli_confirm import torch_mismatch
    from compile_ad_lint.core.findings import VerdictSource

    result = ConfirmResult(Verdict.CONFIRMED, "tangent None", source=VerdictSource.PROJECT, torch_version="2.13.0+cpu")
    finding = Finding("CAL001", "m", Severity.ERROR, Location.point("a.py")).with_confirm({"cpu": result})
    on_2_14 = with_target(Config(), setting="2.14").torch
    warning = torch_mismatch([finding], on_2_14)
    assert warning is not None and warning.startswith(
        "the runs used torch 2.13.0+cpu, but the findings speak for torch 2.14"
    )
    assert torch_mismatch([finding], with_target(Config(), setting=">=2.13").torch) is None
