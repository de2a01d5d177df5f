"""Fixes without running torch: what each fix writes, what it keeps, when none is offered, and the
``check --fix`` / ``--diff`` / ``--unsafe-fixes`` contract. Their runtime effect is verified in
``test_fixes_runtime.py``."""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from compile_ad_lint import Config
from compile_ad_lint.api import Analyzer
from compile_ad_lint.cli import main
from compile_ad_lint.core.findings import Applicability
from compile_ad_lint.core.plans import CallUncompiled, CompileWithBackend, SetConfigAtModuleLevel, WrapInConfigPatch
from compile_ad_lint.fixes import Sources, resolve
from compile_ad_lint.fixes.apply import fix_loop, write_changes
from compile_ad_lint.fixes.source import apply_edits
from compile_ad_lint.fixes.transform import edits_between

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def _findings(root: Path):  # type: ignore[no-untyped-def]
    report = Analyzer(Config(), use_cache=False, jobs=1).check([str(root)])
    return resolve(report.findings, Sources(digests=dict(report.digests)))


def _fix(root: Path, *extra: str) -> int:
    return main(["check", str(root), "--fix", "--no-cache", "-q", *extra])


AMP = textwrap.dedent(
    """\
    \"\"\"Training step.\"\"\"
    import torch

    from model import net  # the model

    step = torch.compile(net)


    def train(x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            # forward, compiled
            loss = step(x).sum()   # odd  spacing kept
        loss.backward()
    """
)


def test_cal002_wrap_keeps_formatting_and_comments_and_adds_the_import_once(tmp_path: Path, capsys) -> None:
    _write(
        tmp_path,
        {
            "train.py": AMP
            + '\n\ndef train_again(x):\n    with torch.autocast("cpu", dtype=torch.bfloat16):\n        loss = step(x).mean()\n    loss.backward()\n'
        },
    )
    assert _fix(tmp_path) == 0
    text = (tmp_path / "train.py").read_text()
    assert text == textwrap.dedent(
        """\
        \"\"\"Training step.\"\"\"
        import torch
        import torch._functorch.config

        from model import net  # the model

        step = torch.compile(net)


        def train(x):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                # forward, compiled
                with torch._functorch.config.patch(backward_pass_autocast="off"):
                    loss = step(x).sum()   # odd  spacing kept
            loss.backward()


        def train_again(x):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                with torch._functorch.config.patch(backward_pass_autocast="off"):
                    loss = step(x).mean()
            loss.backward()
        """
    )
    # Idempotent: nothing left to fix, nothing changes.
    assert _fix(tmp_path) == 0
    assert (tmp_path / "train.py").read_text() == text
    capsys.readouterr()


def test_cal002_reuses_the_files_alias_unless_it_is_shadowed(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "train.py": """\
            import torch
            import torch._functorch.config as fc

            step = torch.compile(net)


            def train(x):
                with torch.autocast("cpu"):
                    loss = step(x).sum()
                loss.backward()


            def shadowed(x, fc):
                with torch.autocast("cpu"):
                    loss = step(x).sum()
                loss.backward()
            """
        },
    )
    fixes = [f.fix for f in _findings(tmp_path)]
    texts = [e.replacement for fix in fixes for e in fix.edits]  # type: ignore[union-attr]
    assert any('fc.patch(backward_pass_autocast="off")' in t for t in texts)
    assert any("torch._functorch.config.patch(" in t for t in texts) and "import torch._functorch.config\n" in texts


def test_cal002_wraps_the_smallest_run_of_statements_and_never_another_compiled_call(tmp_path: Path) -> None:
    source = """\
        import torch

        encoder = torch.compile(enc)
        decoder = torch.compile(dec)
        other = torch.compile(aux)


        def train(x):
            with torch.autocast("cpu"):
                h = encoder(x)
                {middle}
                loss = decoder(h).sum()
            loss.backward()
        """
    _write(tmp_path, {"train.py": source.replace("{middle}", "n = h.norm()")})
    [finding] = _findings(tmp_path)
    assert isinstance(finding.fix.plan, WrapInConfigPatch) and len(finding.fix.plan.calls) == 2  # type: ignore[union-attr]
    text = (tmp_path / "train.py").read_text()
    fixed = apply_edits(text, finding.fix.edits)  # type: ignore[union-attr]
    assert (
        '        with torch._functorch.config.patch(backward_pass_autocast="off"):\n            h = encoder(x)\n            n = h.norm()\n            loss = decoder(h).sum()\n'
        in fixed
    )

    # A compiled call whose backward runs inside autocast sits between them: each gets its own with.
    _write(tmp_path, {"train.py": source.replace("{middle}", "other(x).sum().backward()")})
    [finding] = [f for f in _findings(tmp_path) if f.location.line == 13]
    fixed = apply_edits(text := (tmp_path / "train.py").read_text(), finding.fix.edits)  # type: ignore[union-attr]
    assert fixed.count("with torch._functorch.config.patch") == 2
    assert "\n        other(x).sum().backward()\n" in fixed


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("loss = step(x).sum()\n    with torch.autocast(device_type=dev):\n        loss.backward()", "device unknown"),
        (
            'loss = step(x).sum()\n    with torch.autocast("cpu", enabled=use_amp):\n        loss.backward()',
            "autocast depends on a flag",
        ),
        (
            'with torch.autocast("cpu"):\n        for loss in (step(x).sum(),):\n            pass\n    loss.backward()',
            "a call in a for header",
        ),
        (
            'with torch.autocast("cpu"):\n        f = lambda: step(x)\n        loss = f().sum()\n    loss.backward()',
            "a call in a lambda",
        ),
        (
            'with torch.autocast("cpu"):\n        out = step(x)\n    out.sum().backward()\n    with torch.autocast("cpu"):\n        out.mean().backward()',
            "two backwards need different configs",
        ),
    ],
)
def test_cal002_offers_no_fix_when_it_would_not_be_right(tmp_path: Path, body: str, why: str) -> None:
    _write(
        tmp_path,
        {"train.py": f"import torch\n\nstep = torch.compile(net)\n\n\ndef train(x, dev, use_amp):\n    {body}\n"},
    )
    findings = [f for f in _findings(tmp_path) if f.code == "CAL002"]
    assert findings, why
    # No wrap; setting the config for the whole module stays possible where the value is certain.
    assert all(not isinstance(fix.plan, WrapInConfigPatch) for f in findings for fix in f.fixes), why
    if why in ("device unknown", "autocast depends on a flag", "two backwards need different configs"):
        assert all(not f.fixes for f in findings), why


def test_cal002_module_level_alternative_is_unsafe_and_only_without_other_config(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "train.py": 'import torch\n\nstep = torch.compile(net)\nwith torch.autocast("cpu"):\n    loss = step(x).sum()\nloss.backward()\n'
        },
    )
    [finding] = _findings(tmp_path)
    [alternative] = finding.alternative_fixes
    assert isinstance(alternative.plan, SetConfigAtModuleLevel) and alternative.applicability is Applicability.UNSAFE
    fixed = apply_edits((tmp_path / "train.py").read_text(), alternative.edits)
    assert fixed.startswith(
        'import torch\nimport torch._functorch.config\n\ntorch._functorch.config.backward_pass_autocast = "off"\n\nstep = '
    )
    _write(
        tmp_path,
        {
            "train.py": 'import torch\nimport torch._functorch.config as fc\n\nfc.backward_pass_autocast = "same_as_forward"\nstep = torch.compile(net)\nwith torch.autocast("cpu"):\n    loss = step(x).sum()\nloss.backward()\n'
        },
    )
    [finding] = _findings(tmp_path)
    assert finding.fix is not None and not finding.alternative_fixes


def test_cal002_fix_edits_the_file_of_the_compiled_call(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "steps.py": 'import torch\n\nstep = torch.compile(net)\n\n\ndef forward(x):\n    with torch.autocast("cpu"):\n        return step(x)\n',
            "train.py": "from steps import forward\n\nforward(x).sum().backward()\n",
        },
    )
    [finding] = _findings(tmp_path)
    assert finding.location.path.endswith("train.py")
    assert {edit.path for edit in finding.fix.edits} == {str(tmp_path / "steps.py")}  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("value", "replacement", "safe"),
    [
        ('{"device_type": "cpu", "dtype": torch.bfloat16}', '[{"device_type": "cpu", "dtype": torch.bfloat16}]', True),
        ('({"device_type": "cuda"},)', '[{"device_type": "cuda"}]', True),
        ("'same-as-forward'", "'same_as_forward'", False),
        ('"Off"', '"off"', False),
        ('["cuda", torch.bfloat16]', None, None),
        ("None", None, None),
        ('{"device": "cuda"}', None, None),
        ('"completely wrong"', None, None),
    ],
)
def test_cal003_fixes_only_certain_or_nearest_values(
    tmp_path: Path, value: str, replacement: str | None, safe: bool | None
) -> None:
    _write(
        tmp_path,
        {
            "cfg.py": f"import torch\nimport torch._functorch.config as fc\n\nfc.backward_pass_autocast = {value}  # why\n"
        },
    )
    [finding] = _findings(tmp_path)
    if replacement is None:
        assert finding.fix is None
        return
    assert finding.fix is not None and finding.fix.safe is safe
    fixed = apply_edits((tmp_path / "cfg.py").read_text(), finding.fix.edits)
    assert fixed.splitlines()[3] == f"fc.backward_pass_autocast = {replacement}  # why"


def test_cal003_fixes_every_spelling_of_the_patch(tmp_path: Path, capsys) -> None:
    shutil.copy(FIXTURES / "cal003_invalid_config.py", tmp_path / "cfg.py")
    assert _fix(tmp_path, "--unsafe-fixes") == 1  # the values without a certain meaning remain
    remaining = {f["line"] for f in json.loads(_json(tmp_path, capsys))["findings"]}
    text = (tmp_path / "cfg.py").read_text()
    assert 'config.patch({"backward_pass_autocast": [{"device_type": "cpu", "dtype": torch.bfloat16}]})' in text
    assert 'fc.patch("backward_pass_autocast", "same_as_forward")' in text
    assert '@config.patch(backward_pass_autocast="same_as_forward")' in text
    assert 'config.backward_pass_autocast = [{"device_type": "cuda", "dtype": torch.float16}]' in text
    assert [line for line in text.splitlines() if "backward_pass_autocast = None" in line]
    assert len(remaining) == 3  # ["cuda", torch.bfloat16], None, [{...}, "off"]


def _json(root: Path, capsys) -> str:  # type: ignore[no-untyped-def]
    capsys.readouterr()
    main(["check", str(root), "--no-cache", "--format", "json"])
    return capsys.readouterr().out


def test_cal001_fixes_name_what_the_compile_statement_binds(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "probe.py": """\
            import torch
            import torch.autograd.forward_ad as fwAD
            from torch.nn.parallel import DistributedDataParallel as DDP

            def f(x):
                return x.sin()

            fast = torch.compile(f)
            wrapped = DDP(torch.compile(torch.nn.Tanh()))
            alias = fast


            def run(x, t):
                with fwAD.dual_level():
                    a = fast(fwAD.make_dual(x, t))
                    b = wrapped(fwAD.make_dual(x, t))
                    c = alias(fwAD.make_dual(x, t))
                return a, b, c
            """
        },
    )
    by_line = {f.location.line: f for f in _findings(tmp_path)}
    assert isinstance(by_line[15].fix.plan, CallUncompiled)  # type: ignore[union-attr]
    assert by_line[15].fix.edits[0].replacement == "fast.__wrapped__"  # type: ignore[union-attr]
    for line in (16, 17):  # a wrapper, an alias: no attribute to rely on; compiling eagerly remains
        if line in by_line:
            assert [type(f.plan) for f in by_line[line].fixes] == [CompileWithBackend], line


def test_cal001_configured_compile_wrappers_get_no_fix(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pyproject.toml": '[tool.compile-ad-lint]\ncompile-wrappers = ["probe.maybe_compile"]\n',
            "probe.py": "import torch.autograd.forward_ad as fwAD\n\n\ndef maybe_compile(f):\n    return f\n\n\nfast = maybe_compile(g)\n\nwith fwAD.dual_level():\n    y = fast(fwAD.make_dual(x, t))\n",
        },
    )
    report = Analyzer(Config(compile_wrappers=frozenset({"probe.maybe_compile"})), use_cache=False, jobs=1).check(
        [str(tmp_path / "probe.py")]
    )
    [finding] = resolve(report.findings, Sources(digests=dict(report.digests)))
    assert finding.code == "CAL001" and not finding.fixes


def test_diff_prints_and_writes_nothing(tmp_path: Path, capsys) -> None:
    _write(tmp_path, {"train.py": AMP})
    before = (tmp_path / "train.py").read_text()
    assert main(["check", str(tmp_path), "--diff", "--no-cache"]) == 1
    captured = capsys.readouterr()
    assert captured.out.startswith(f"--- {tmp_path / 'train.py'}\n+++ {tmp_path / 'train.py'}\n@@")
    assert '+        with torch._functorch.config.patch(backward_pass_autocast="off"):' in captured.out
    assert "would fix 1 finding in 1 file" in captured.err
    assert (tmp_path / "train.py").read_text() == before
    assert main(["check", str(tmp_path / "model.py"), "--diff", "--no-cache"]) in (0, 2)


def test_building_fixes_collects_less_often_and_puts_the_thresholds_back(tmp_path: Path, monkeypatch) -> None:
    """LibCST's trees pile up in a ``--diff``: its youngest generation is collected less often
    while fixes are built and applied, and a host process (the editor) gets its thresholds back."""
    import gc

    import compile_ad_lint.fixes.transform as transform

    _write(tmp_path, {"train.py": AMP})
    report = Analyzer(Config(), use_cache=False, jobs=1).check([str(tmp_path)])
    seen: list[int] = []
    building = transform.Changes.edits

    def watched(self):  # type: ignore[no-untyped-def]
        seen.append(gc.get_threshold()[0])
        return building(self)

    monkeypatch.setattr(transform.Changes, "edits", watched)
    before = gc.get_threshold()
    outcome = fix_loop(report, lambda contents: report, unsafe=False)
    assert outcome.fixed == 1 and seen and all(threshold > before[0] for threshold in seen)
    assert gc.get_threshold() == before


def test_unsafe_fixes_need_the_flag(tmp_path: Path, capsys) -> None:
    hazard = "import torch\nimport torch.autograd.forward_ad as fwAD\n\nf = torch.compile(torch.sin)\nwith fwAD.dual_level():\n    y = f(fwAD.make_dual(x, t))\n"
    _write(tmp_path, {"probe.py": hazard})
    assert main(["check", str(tmp_path), "--fix", "--no-cache"]) == 1
    captured = capsys.readouterr()
    assert (tmp_path / "probe.py").read_text() == hazard
    assert captured.out.splitlines()[-2] == "1 unsafe fix available with `--fix --unsafe-fixes`.", captured.out
    assert "Fixed" not in captured.out
    assert main(["check", str(tmp_path), "--fix", "--unsafe-fixes", "--no-cache"]) == 0
    captured = capsys.readouterr()
    assert "Fixed 1 finding in 1 file." in captured.out and "No findings" in captured.out
    assert "y = f.__wrapped__(fwAD.make_dual(x, t))" in (tmp_path / "probe.py").read_text()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--fix", "--add-noqa"], "--add-noqa cannot be combined"),
        (["--diff", "--format", "json"], "--diff prints a diff"),
        (["--fix", "--write-baseline", "b.json"], "--write-baseline records findings"),
        (["-", "--add-noqa"], "works on files on disk"),
        (["-", "--fix", "--format", "json"], "--fix on stdin prints the fixed source"),
    ],
)
def test_fix_option_errors(tmp_path: Path, capsys, monkeypatch, arguments: list[str], message: str) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["check", *arguments]) == 2
    assert message in capsys.readouterr().err


def test_a_file_changed_since_the_analysis_is_never_fixed(tmp_path: Path) -> None:
    _write(tmp_path, {"train.py": AMP})
    path = tmp_path / "train.py"
    analyzer = Analyzer(Config(), use_cache=False, jobs=1)
    report = analyzer.check([str(tmp_path)])

    def again(contents):  # type: ignore[no-untyped-def]
        return analyzer.check([str(tmp_path)], sources=dict(contents))

    # Changed before the fixes are built: none is built for it.
    path.write_text(AMP.replace("odd", "even"))
    outcome = fix_loop(report, again, unsafe=True)
    assert not outcome.changed and outcome.stale == [str(path)]
    # Changed after the fixes were built, before they are written: not written.
    path.write_text(AMP)
    report = analyzer.check([str(tmp_path)])
    outcome = fix_loop(report, again, unsafe=True)
    assert outcome.changed
    path.write_text(AMP + "# edited in the editor meanwhile\n")
    assert write_changes(outcome, dict(report.digests), tmp_path) == [str(path)]
    assert path.read_text() == AMP + "# edited in the editor meanwhile\n"


def test_json_fix_edits_give_what_fix_writes_and_sarif_carries_them(tmp_path: Path, capsys) -> None:
    from frontends.test_output_sarif import validate

    _write(tmp_path, {"train.py": AMP})
    document = json.loads(_json(tmp_path, capsys))
    [finding] = document["findings"]
    fix = finding["fix"]
    assert fix["applicability"] == "safe" and fix["description"].startswith("Wrap the compiled call at line 12")
    assert all(
        set(edit) == {"path", "line", "column", "end_line", "end_column", "replacement"} for edit in fix["edits"]
    )
    assert finding["alternative_fixes"][0]["applicability"] == "unsafe"  # the config for the whole module
    from compile_ad_lint.core.findings import Edit

    expected = apply_edits((tmp_path / "train.py").read_text(), [Edit(**edit) for edit in fix["edits"]])
    main(["check", str(tmp_path), "--no-cache", "--format", "sarif"])
    sarif = json.loads(capsys.readouterr().out)
    validate(sarif)
    [result] = sarif["runs"][0]["results"]
    sarif_fix, alternative = result["fixes"]
    assert alternative["properties"]["applicability"] == "unsafe"
    assert sarif_fix["properties"]["applicability"] == "safe"
    assert sum(len(change["replacements"]) for change in sarif_fix["artifactChanges"]) == len(fix["edits"])
    assert _fix(tmp_path) == 0
    assert (tmp_path / "train.py").read_text() == expected
    capsys.readouterr()


def test_notebooks_get_no_fixes(tmp_path: Path) -> None:
    cell = 'import torch\nstep = torch.compile(net)\nwith torch.autocast("cpu"):\n    loss = step(x).sum()\nloss.backward()\n'
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "source": cell, "outputs": [], "execution_count": None}],
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "train.ipynb").write_text(json.dumps(notebook))
    [finding] = _findings(tmp_path)
    assert finding.code == "CAL002" and not finding.fixes


def test_edits_between_are_minimal_and_apply_back() -> None:
    old = "a = 1\nb = f(x)\r\nc = 'of'\n"
    new = "import z\na = 1\nb = f.__wrapped__(x)\r\nc = 'off'\n"
    edits = edits_between("m.py", old, new)
    assert [(e.line, e.column, e.end_line, e.end_column, e.replacement) for e in edits] == [
        (1, 1, 1, 1, "import z\n"),
        (2, 5, 2, 6, "f.__wrapped__"),
        (3, 6, 3, 8, "off"),
    ]
    assert apply_edits(old, edits) == new


@pytest.mark.slow
def test_every_fix_on_the_fixtures_applies_and_removes_its_finding(tmp_path: Path, capsys) -> None:
    """All fixtures fixed at once with --unsafe-fixes: every finding that had a fix is gone, every
    file still parses, and a second run changes nothing."""
    project = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, project)

    def findings() -> list[dict]:
        capsys.readouterr()
        main(["check", str(project), "--no-cache", "--format", "json"])
        return json.loads(capsys.readouterr().out)["findings"]

    def key(finding: dict) -> tuple:
        return finding["code"], finding["path"], re.sub(r"\d+", "#", finding["message"])

    before = findings()
    fixable = Counter(key(f) for f in before if f["fix"])
    unfixable = Counter(key(f) for f in before if not f["fix"])
    assert sum(fixable.values()) > 100
    main(["check", str(project), "--fix", "--unsafe-fixes", "--no-cache", "-q"])
    after = Counter(key(f) for f in findings())
    assert after == unfixable, (after - unfixable, unfixable - after)
    for path in project.rglob("*.py"):
        if path.name != "cal900_syntax_error.py":
            compile(path.read_bytes(), str(path), "exec")
    snapshot = {path: path.read_bytes() for path in project.rglob("*.py")}
    main(["check", str(project), "--fix", "--unsafe-fixes", "--no-cache", "-q"])
    assert {path: path.read_bytes() for path in project.rglob("*.py")} == snapshot
    capsys.readouterr()


def test_fixes_built_in_worker_processes_equal_those_built_in_process(tmp_path, monkeypatch):
    """``resolve(..., jobs=2)`` shares the files with fixes out among workers (each with its own
    Sources and the same cache): the findings, fixes and edits must be exactly the in-process ones."""
    project = tmp_path / "fixtures"
    shutil.copytree(Path(__file__).resolve().parents[2] / "fixtures", project)
    monkeypatch.chdir(tmp_path)
    report = Analyzer(Config(root=project), use_cache=False).check(["fixtures"])
    files = {f.location.path for f in report.findings if f.fixes and f.location.cell is None}
    assert len(files) >= 8, "enough files with fixes for the worker processes to be used"
    serial = resolve(report.findings, Sources({}, dict(report.digests)))
    parallel = resolve(report.findings, Sources({}, dict(report.digests)), jobs=2)
    assert parallel == serial
    assert [f.fix for f in parallel] == [f.fix for f in serial]
    assert sum(1 for f in parallel if f.fix is not None and f.fix.edits) > 20
