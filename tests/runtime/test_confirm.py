"""Confirm mode: device selection, entry points and verdict logic (fast), and real runs (slow, CPU torch).

The slow tests share work: one module-scoped confirm run over a temporary project holding every
case, one short-timeout run, and a cached rerun.
"""

from __future__ import annotations

import json
import math
import textwrap
import time
from pathlib import Path

import pytest

from compile_ad_lint import Config, Verdict, cli
from compile_ad_lint.api import Analyzer
from compile_ad_lint.confirm import (
    EntrySpecError,
    TorchEnvironment,
    compare,
    parse_devices,
    parse_entry,
    plan_devices,
)
from compile_ad_lint.confirm.entries import candidates, main_entry
from compile_ad_lint.confirm.environment import torch_version_without_import
from compile_ad_lint.confirm.probes import cal002_probe, config_json
from compile_ad_lint.core.locations import StatementSite

# -- device selection (no GPU needed) --------------------------------------------------------------


def test_default_devices_cpu_only_without_cuda():
    plans = plan_devices(None, TorchEnvironment("2.13.0+cpu", cuda=False))
    assert [(p.device, p.skip_reason) for p in plans] == [("cpu", None)]


def test_default_devices_include_cuda_when_available():
    plans = plan_devices(None, TorchEnvironment("2.13.0", cuda=True, gpus=("NVIDIA H200",)))
    assert [(p.device, p.skip_reason) for p in plans] == [("cpu", None), ("cuda", None)]


def test_requested_cuda_without_gpu_is_skipped_with_reason():
    plans = plan_devices(["cpu", "cuda"], TorchEnvironment("2.13.0+cpu", cuda=False))
    assert plans[0].skip_reason is None
    assert (
        plans[1].device == "cuda" and "no CUDA device" in plans[1].skip_reason and "2.13.0+cpu" in plans[1].skip_reason
    )


def test_no_torch_skips_every_device():
    plans = plan_devices(None, TorchEnvironment(None, problem="No module named 'torch'"))
    assert [p.device for p in plans] == ["cpu"] and "torch is not installed" in plans[0].skip_reason


def test_parse_devices():
    assert parse_devices(None) is None
    assert parse_devices("cpu, cuda,cpu") == ["cpu", "cuda"]
    with pytest.raises(ValueError):
        parse_devices("tpu")


def test_torch_version_read_without_import():
    import sys

    had_torch = "torch" in sys.modules
    version = torch_version_without_import()
    assert version is not None and version.startswith("2.")
    assert ("torch" in sys.modules) == had_torch


def test_confirm_package_does_not_import_torch():
    import subprocess
    import sys

    code = "import compile_ad_lint.cli, compile_ad_lint.confirm, sys; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# -- entry points ---------------------------------------------------------------------------------


def test_parse_entry(tmp_path):
    entry = parse_entry("pkg.mod:Class.method")
    assert (entry.module, entry.function) == ("pkg.mod", "Class.method")
    (tmp_path / "run.py").write_text("def go():\n    pass\n")
    entry = parse_entry("run.py:go", tmp_path)
    assert entry.module == "run" and entry.root == str(tmp_path.resolve())
    for bad in ["nomodule", "mod:", "mod:f(x)", "missing.py:f"]:
        with pytest.raises(EntrySpecError):
            parse_entry(bad, tmp_path)


def test_entry_candidates(tmp_path):
    source = textwrap.dedent(
        """
        import torch

        def helper(x):
            return x.backward()

        def test_zero(flag=True):
            def inner(y):
                return y.backward()
            return inner

        class TestThing:
            def test_method(self):
                z.backward()

        if __name__ == "__main__":
            test_zero()
        """
    )
    path = tmp_path / "mod.py"
    path.write_text(source)
    lines = source.splitlines()
    helper_line = lines.index("    return x.backward()") + 1
    inner_line = lines.index("        return y.backward()") + 1
    method_line = lines.index("        z.backward()") + 1
    assert [e.label for e in candidates(path, helper_line, [])] == ["`python -m mod` (its __main__ block)"]
    assert [e.label for e in candidates(path, inner_line, [])][0] == "mod:test_zero"
    assert [e.label for e in candidates(path, method_line, [])][0] == "mod:TestThing.test_method"
    user = parse_entry("other:main")
    assert candidates(path, helper_line, [user])[0] is user
    assert main_entry(path) is not None


def test_evidence_carries_the_flagged_and_compiled_statements(tmp_path):
    """Confirm matches run stacks against the statements the analysis saw (no second parse): the
    backward's statement and function, and the compiled call's statement (a multi-line one here)."""
    source = textwrap.dedent(
        """\
        import torch

        model = torch.compile(torch.nn.Linear(4, 4))


        def train_step(x):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = model(
                    x,
                ).sum()
            if x is not None:
                loss.backward()
        """
    )
    (tmp_path / "train.py").write_text(source)
    (finding,) = Analyzer(Config(root=tmp_path), use_cache=False).check([str(tmp_path / "train.py")]).findings
    assert finding.code == "CAL002"
    evidence = finding.evidence
    assert evidence.flagged_site == StatementSite((12, 12), (6, 12))
    assert evidence.compiled_call_site == StatementSite((8, 10), (6, 12))


# -- verdict logic --------------------------------------------------------------------------------


def _loader(values):
    return lambda entry: values[entry["offset"]]


FORCED = frozenset({0})


def _grad_run(key, stack, dtype="float32", status="ok"):
    return {
        "status": status,
        "forced_hits": [{"handle": 0, "written": "x"}],
        "records": [
            {
                "kind": "backward",
                "stack": stack,
                "tensors": [{"offset": key, "count": 3, "numel": 3, "dtype": dtype, "shape": [3]}],
            }
        ],
    }


def test_cal002_backend_noise_alone_is_not_confirmed():
    site = compare.Site("/p/m.py", (10, 10))
    stack = [["/p/m.py", 10]]
    values = {0: [1.0, 2.0, 3.0], 1: [1.004, 2.0, 3.0], 2: [1.004, 2.0, 3.0]}  # compiled != eager, written == matching
    result = compare.verdict_cal002(
        _grad_run(0, stack),
        _loader(values),
        _grad_run(1, stack),
        _loader(values),
        _grad_run(2, stack),
        _loader(values),
        site,
        "cpu",
        "'same_as_forward'",
        "'off'",
        "inductor",
        FORCED,
    )
    assert result.verdict is Verdict.NOT_REPRODUCED and "within noise" in result.detail


def test_cal002_fix_differential_confirms_and_names_numbers():
    site = compare.Site("/p/m.py", (10, 10))
    stack = [["/p/m.py", 10]]
    values = {0: [1.0, 2.0, 3.0], 1: [1.01, 2.0, 3.0], 2: [1.0, 2.0, 3.0]}
    result = compare.verdict_cal002(
        _grad_run(0, stack),
        _loader(values),
        _grad_run(1, stack),
        _loader(values),
        _grad_run(2, stack),
        _loader(values),
        site,
        "cpu",
        "'same_as_forward'",
        "'off'",
        "inductor",
        FORCED,
    )
    assert result.verdict is Verdict.CONFIRMED and "relative difference 2.7e-03 > tolerance 1.0e-05" in result.detail


def test_cal002_matching_config_never_applied_at_the_flagged_call():
    site = compare.Site("/p/m.py", (10, 10))
    stack = [["/p/m.py", 10]]
    values = {0: [1.0, 2.0, 3.0], 1: [1.01, 2.0, 3.0], 2: [1.0, 2.0, 3.0]}
    result = compare.verdict_cal002(
        _grad_run(0, stack),
        _loader(values),
        _grad_run(1, stack),
        _loader(values),
        _grad_run(2, stack),
        _loader(values),
        site,
        "cpu",
        "'same_as_forward'",
        "'off'",
        "inductor",
        frozenset({1}),
    )
    assert result.verdict is Verdict.NOT_REPRODUCED and "never traced in the matching run" in result.detail


def test_cal002_compiled_run_that_stops_before_the_backward_is_unusable():
    site = compare.Site("/p/m.py", (10, 10))
    stack = [["/p/m.py", 10]]
    stopped = {
        "status": "exception",
        "forced_hits": [],
        "records": [],
        "exception": {"type": "NotImplementedError", "message": "jvp", "frames": [["/p/m.py", 4]]},
    }
    values = {0: [1.0, 2.0, 3.0], 2: [1.0, 2.0, 3.0]}
    result = compare.verdict_cal002(
        _grad_run(0, stack),
        _loader(values),
        stopped,
        _loader(values),
        _grad_run(2, stack),
        _loader(values),
        site,
        "cpu",
        "'same_as_forward'",
        "'off'",
        "inductor",
        FORCED,
    )
    assert isinstance(result, compare.Unusable) and "before reaching the flagged backward" in result.reason


def _call(line, tangents=(), raised=None):
    return {
        "kind": "compiled-call",
        "stack": [["/p/m.py", 20], ["/p/m.py", line]],
        "raised": raised,
        "tangents": list(tangents),
    }


TANGENT = {"offset": 0, "count": 1, "dtype": "float32"}


def test_cal001_tangent_dropped_at_the_flagged_call():
    site = compare.Site("/p/m.py", (5, 5), (3, 8))
    eager = {"status": "ok", "records": [_call(5, [TANGENT]), _call(6, [TANGENT])]}
    compiled = {"status": "ok", "records": [_call(5, [None]), _call(6, [TANGENT])]}
    result = compare.verdict_cal001(eager, _loader({0: [1.0]}), compiled, _loader({0: [1.0]}), site, "cpu")
    assert (
        result.verdict is Verdict.CONFIRMED
        and "1 of 1 output tangent(s) of 1 call(s)" in result.detail
        and "are None in the compiled run" in result.detail
    )


def test_cal001_attributes_by_call_site_not_by_run():
    """Another flagged call dropping its tangent says nothing about this one."""
    site = compare.Site("/p/m.py", (6, 6))
    eager = {"status": "ok", "records": [_call(5, [TANGENT]), _call(6, [TANGENT])]}
    compiled = {"status": "ok", "records": [_call(5, [None]), _call(6, [TANGENT])]}
    result = compare.verdict_cal001(eager, _loader({0: [1.0]}), compiled, _loader({0: [1.0]}), site, "cpu")
    assert result.verdict is Verdict.NOT_REPRODUCED and "present and equal" in result.detail


def test_cal001_raise_at_the_flagged_call_is_confirmed_even_when_caught():
    site = compare.Site("/p/m.py", (5, 5))
    raised = {"type": "NotImplementedError", "message": "You must implement the jvp function", "frames": []}
    eager = {"status": "ok", "records": [_call(5, [TANGENT])]}
    compiled = {"status": "ok", "records": [_call(5, raised=raised)]}
    result = compare.verdict_cal001(eager, _loader({0: [1.0]}), compiled, _loader({}), site, "cpu")
    assert result.verdict is Verdict.CONFIRMED and "raises NotImplementedError" in result.detail


def test_cal001_other_compiled_failures_are_errors_not_confirmations():
    site = compare.Site("/p/m.py", (5, 5))
    raised = {"type": "CalledProcessError", "message": "C++ compile error", "frames": []}
    eager = {"status": "ok", "records": [_call(5, [TANGENT])]}
    compiled = {"status": "ok", "records": [_call(5, raised=raised)]}
    result = compare.verdict_cal001(eager, _loader({0: [1.0]}), compiled, _loader({}), site, "cpu")
    assert result.verdict is Verdict.ERROR and "not forward AD's NotImplementedError" in result.detail


def test_nan_is_a_difference_never_a_match():
    site = compare.Site("/p/m.py", (5, 5))
    eager = {"status": "ok", "records": [_call(5, [TANGENT])]}
    compiled = {"status": "ok", "records": [_call(5, [TANGENT])]}
    result = compare.verdict_cal001(
        eager, _loader({0: [1.0, 2.0]}), compiled, _loader({0: [math.nan, math.nan]}), site, "cpu"
    )
    assert result.verdict is Verdict.CONFIRMED and "relative difference inf" in result.detail
    assert math.isinf(compare.relative_difference([math.nan], [1.0]))


def test_cal002_eager_that_cannot_be_compared_does_not_confirm():
    site = compare.Site("/p/m.py", (10, 10))
    stack = [["/p/m.py", 10]]
    values = {0: [1.0, 2.0], 1: [1.01, 2.0, 3.0], 2: [1.0, 2.0, 3.0]}
    eager = _grad_run(0, stack)
    eager["records"][0]["tensors"][0]["shape"] = [2]  # another layout than the compiled runs
    result = compare.verdict_cal002(
        eager,
        _loader(values),
        _grad_run(1, stack),
        _loader(values),
        _grad_run(2, stack),
        _loader(values),
        site,
        "cpu",
        "'same_as_forward'",
        "'off'",
        "inductor",
        FORCED,
    )
    assert result.verdict is Verdict.NOT_REPRODUCED and "could not be compared" in result.detail


def test_cache_key_follows_every_source_file(tmp_path):
    from compile_ad_lint.confirm.runner import SourceTree
    from compile_ad_lint.confirm.session import sources_digest

    digest = lambda: sources_digest(SourceTree.scan([str(tmp_path)]))
    (tmp_path / "train.py").write_text("from model import Net\n")
    (tmp_path / "model.py").write_text("class Net: pass\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "site.py").write_text("x = 1\n")
    before = digest()
    (tmp_path / ".venv" / "site.py").write_text("x = 2\n")
    (tmp_path / "report.json").write_text("{}")
    assert digest() == before  # environments and data are not the project's code
    (tmp_path / "model.py").write_text("class Net:\n    scale = 2\n")
    assert digest() != before  # an imported model changed: verdicts are stale


def test_cal001_site_masked_by_an_earlier_compiled_raise_is_unusable():
    site = compare.Site("/p/m.py", (6, 6))
    exception = {"type": "NotImplementedError", "message": "jvp", "frames": [["/p/m.py", 5]]}
    eager = {"status": "ok", "records": [_call(5, [TANGENT]), _call(6, [TANGENT])]}
    compiled = {"status": "exception", "exception": exception, "records": [_call(5, raised=exception)]}
    result = compare.verdict_cal001(eager, _loader({0: [1.0]}), compiled, _loader({}), site, "cpu")
    assert isinstance(result, compare.Unusable) and "before reaching the flagged call" in result.reason


def test_cal001_unpack_dual_fallback_stays_in_the_flagged_function():
    site = compare.Site("/p/m.py", (5, 5), (3, 8))
    eager = {"status": "ok", "records": [{"kind": "tangent", "stack": [["/p/m.py", 6]], "tangent": TANGENT}]}
    compiled = {"status": "ok", "records": [{"kind": "tangent", "stack": [["/p/m.py", 6]], "tangent": None}]}
    result = compare.verdict_cal001(eager, _loader({0: [1.0]}), compiled, _loader({}), site, "cpu")
    assert result.verdict is Verdict.CONFIRMED and "tangent dropped to None" in result.detail
    elsewhere = compare.Site("/p/m.py", (15, 15), (12, 18))
    result = compare.verdict_cal001(eager, _loader({0: [1.0]}), compiled, _loader({}), elsewhere, "cpu")
    assert result.verdict is Verdict.NOT_REPRODUCED


def test_relative_difference():
    assert compare.relative_difference([1.0, 0.0], [1.0, 0.0]) == 0.0
    assert math.isinf(compare.relative_difference([1.0], [1.0, 2.0]))


def test_probe_keeps_the_autocast_device_as_written():
    assert config_json("off", "cpu") == "off"
    assert config_json((("cuda", "float16"),), "cpu") == [{"device_type": "cuda", "dtype": "torch.float16"}]
    assert config_json((("cpu", "bfloat16"),), "cuda") == [{"device_type": "cpu", "dtype": "torch.bfloat16"}]
    assert config_json(None, "cuda") == "same_as_forward"  # not a literal
    facts = {
        "backend": "inductor",
        "config": "'same_as_forward'",
        "forward_autocast": "cuda/bfloat16",
        "backward_autocast": "off",
    }
    source = cal002_probe(_cal002_evidence(facts), "cpu")
    compile(source, "probe", "exec")
    assert "torch.autocast('cuda', dtype=torch.bfloat16, enabled=True)" in source
    unknown = cal002_probe(_cal002_evidence(dict(facts, forward_autocast="?/bfloat16")), "cpu")
    assert "torch.autocast('cpu', dtype=torch.bfloat16, enabled=True)" in unknown


def test_cal002_verdict_explains_an_autocast_for_another_device():
    from compile_ad_lint.confirm.verdicts import cannot_show_reason

    finding = _finding("CAL002", {"forward_autocast": "cuda/bfloat16", "backward_autocast": "off"})
    assert "does not change cpu tensors" in cannot_show_reason(finding, "cpu")
    assert "this machine has no CUDA device" in cannot_show_reason(finding, "cpu", gpu_present=False)
    assert cannot_show_reason(finding, "cuda") is None
    unknown = _finding("CAL002", {"forward_autocast": "?/bfloat16", "backward_autocast": "off"})
    assert cannot_show_reason(unknown, "cpu") is None
    kwargs_list = {"forward_autocast": "off", "backward_autocast": "off", "config": "(('cuda', 'bfloat16'),)"}
    assert "autocast is for cuda" in cannot_show_reason(_finding("CAL002", kwargs_list), "cpu")


def test_a_probe_never_reads_as_a_verdict_on_the_code():
    """A synthetic probe's comparison becomes torch-has-hazard / torch-lacks-hazard (or cannot-show);
    confirmed and not-reproduced are only given to the project's own code, and the types enforce it."""
    from compile_ad_lint import ConfirmResult
    from compile_ad_lint.confirm.verdicts import project_result, synthetic_result
    from compile_ad_lint.core.findings import VerdictSource

    shown = ConfirmResult(Verdict.CONFIRMED, "tangent dropped", compared="tangents", difference=None)
    probe = synthetic_result(shown, "cpu", "2.13.0+cpu")
    assert (probe.verdict, probe.source, probe.torch_version) == (
        Verdict.TORCH_HAS_HAZARD,
        VerdictSource.SYNTHETIC,
        "2.13.0+cpu",
    )
    quiet = synthetic_result(ConfirmResult(Verdict.NOT_REPRODUCED, "equal"), "cpu", "2.13.0+cpu")
    assert quiet.verdict is Verdict.TORCH_LACKS_HAZARD
    cuda_only = synthetic_result(
        ConfirmResult(Verdict.NOT_REPRODUCED, "equal"), "cpu", "2.13.0", "autocast is for cuda"
    )
    assert cuda_only.verdict is Verdict.CANNOT_SHOW and cuda_only.detail.startswith("autocast is for cuda")
    code = project_result(shown, "cpu", "2.13.0+cpu")
    assert (code.verdict, code.source) == (Verdict.CONFIRMED, VerdictSource.PROJECT)
    with pytest.raises(ValueError):
        ConfirmResult(Verdict.CONFIRMED, "x", VerdictSource.SYNTHETIC)
    with pytest.raises(ValueError):
        ConfirmResult(Verdict.TORCH_HAS_HAZARD, "x", VerdictSource.PROJECT)


def test_unknown_autocast_device_stays_unknown_in_the_fix(tmp_path):
    """``torch.autocast(device_type=dev)`` in the backward: the fix names no device; the probe uses the checked one."""
    from compile_ad_lint import Config
    from compile_ad_lint.api import Analyzer

    (tmp_path / "m.py").write_text(
        textwrap.dedent(
            """
        import torch

        model = torch.compile(torch.nn.Linear(4, 4))


        def step(x, dev):
            loss = model(x).sum()
            with torch.autocast(device_type=dev, dtype=torch.bfloat16):
                loss.backward()
        """
        )
    )
    (finding,) = Analyzer(Config(), use_cache=False, jobs=1).check([str(tmp_path)]).findings
    assert finding.code == "CAL002" and "'?'" in finding.facts_dict["matching_config"]
    assert "<the backward's autocast device>" in finding.full_message
    assert config_json(finding.evidence.matching_config, "cpu") == [{"device_type": "cpu", "dtype": "torch.bfloat16"}]
    from compile_ad_lint.confirm.session import _Fix

    assert _Fix.of(finding).value == [{"device_type": "?", "dtype": "torch.bfloat16"}]  # the child resolves "?"


def test_matching_runs_are_shared_unless_a_fix_is_ambiguous():
    from compile_ad_lint.confirm.session import _Fix, _ForcePlan

    def fix(line, value, backward):
        return _Fix(("/p/m.py", line, line), value, ("/p/m.py", backward))

    fixes = {
        0: fix(3, "off", 10),
        1: fix(4, "off", 11),
        # the callable behind line 5 is flagged with two different fixes: each gets its own run
        2: fix(5, "off", 12),
        3: fix(6, "same_as_forward", 13),
        4: None,  # not a CAL002 finding
        5: fix(7, "off", 14),  # never called in the eager run
    }
    # handle_calls: which compiled callable (creation order) each call stack reached
    eager = {
        "handle_calls": [
            [0, [["/p/m.py", 3]]],
            [1, [["/p/other.py", 1], ["/p/m.py", 4]]],
            [2, [["/p/m.py", 5]]],
            [2, [["/p/m.py", 6]]],
        ]
    }
    plan = _ForcePlan.of(fixes, eager)
    assert plan.handles == {0: {0}, 1: {1}, 2: {2}, 3: {2}}
    assert plan.shared == [[0, "off"], [1, "off"]]
    assert plan.force_for(0) == plan.force_for(1) == plan.shared
    assert plan.force_for(2) == [[2, "off"]] and plan.force_for(3) == [[2, "same_as_forward"]]


def _finding(code, facts, path="/p/m.py", line=5):
    """A CAL002 finding whose evidence has the contexts ``facts`` spell as the report renders them."""
    from compile_ad_lint import Finding, Location, Severity

    assert code == "CAL002"
    return Finding(
        code=code,
        message="m",
        severity=Severity.ERROR,
        location=Location(path, line, 1, line, 2),
        evidence=_cal002_evidence(facts, path),
    )


def _cal002_evidence(facts, path="/p/m.py"):
    """CAL002 evidence from rendered facts (``cuda/bfloat16``, ``?/float16``, ``off``; configs as literals)."""
    import ast

    from compile_ad_lint import Location
    from compile_ad_lint.linking.contexts import NO_AUTOCAST, AutocastState, ConfigState
    from compile_ad_lint.rules.backward_autocast_mismatch import Cal002Evidence

    def state(fact):
        if fact == "off":
            return NO_AUTOCAST
        device, _, dtype = fact.partition("/")
        return AutocastState(True, None if device == "?" else device, None if dtype == "?" else dtype)

    call = Location(path, 3, 1, 3, 2)
    return Cal002Evidence(
        call,
        call,
        facts.get("backend", "inductor"),
        ConfigState(ast.literal_eval(facts.get("config", "'same_as_forward'"))),
        state(facts["forward_autocast"]),
        state(facts["backward_autocast"]),
        "off",
    )


def test_cli_rejects_bad_devices(tmp_path, capsys):
    (tmp_path / "m.py").write_text(
        HAZARD_HEADER
        + "\ndef test_a():\n    with fwAD.dual_level():\n        f(fwAD.make_dual(torch.ones(2), torch.ones(2)))\n"
    )
    assert cli.main(["check", str(tmp_path), "--confirm", "--devices", "tpu", "--no-cache"]) == 2
    assert "--devices" in capsys.readouterr().err


# -- real runs (torch.compile on CPU) ------------------------------------------------------------

HAZARD_HEADER = textwrap.dedent(
    """
    import torch
    import torch.autograd.forward_ad as fwAD
    import torch._functorch.config as fc

    f = torch.compile(lambda a: torch.sin(a) * a)
    """
)

CASES = HAZARD_HEADER + textwrap.dedent(
    """
    lin = torch.compile(torch.nn.Linear(4, 4))


    def island(x, w):
        with torch.autocast("cpu", enabled=False):
            y = x.float() @ w.float()
        return y.pow(2).sum()


    cisland = torch.compile(island)


    def test_tangent_dropped():
        x, t = torch.randn(3), torch.randn(3)
        with fwAD.dual_level():
            out = f(fwAD.make_dual(x, t))  # tangent-site
            print("tangent is", fwAD.unpack_dual(out).tangent)


    def test_requires_grad_raises():
        x, t = torch.randn(4, requires_grad=True), torch.randn(4)
        with fwAD.dual_level():
            out = lin(fwAD.make_dual(x, t))  # raise-site
        return out


    def test_island_mismatch():
        x = torch.randn(64, 64)
        w = torch.randn(64, 64, requires_grad=True)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            z = cisland(x, w)
        z.backward()  # island-site


    class NormedIsland(torch.nn.Module):
        # Two LayerNorms (all-ones weights at init) around an fp32 island.

        def __init__(self):
            super().__init__()
            self.norm_in = torch.nn.LayerNorm(64)
            self.w = torch.nn.Parameter(torch.randn(64, 64))
            self.norm_out = torch.nn.LayerNorm(64)

        def forward(self, x):
            with torch.autocast("cpu", enabled=False):
                y = self.norm_in(x).float() @ self.w.float()
            return (self.norm_out(y) * y).sum()


    cnormed = torch.compile(NormedIsland())


    def test_region_traced_at_an_earlier_call():
        x = torch.randn(64, 64)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            cnormed(x)  # traced here; the next call reuses the compiled graph
            z = cnormed(x)
        z.backward()  # reuse-site


    def test_island_fixed():
        x = torch.randn(64, 64)
        w = torch.randn(64, 64, requires_grad=True)
        with fc.patch(backward_pass_autocast="off"):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                z = cisland(x, w)
        z.backward()  # fixed-site
    """
)

NO_ENTRY = HAZARD_HEADER + textwrap.dedent(
    """
    def jvp_of(x, t):
        with fwAD.dual_level():
            return fwAD.unpack_dual(f(fwAD.make_dual(x, t))).tangent  # synthetic-site
    """
)

SCRIPT = HAZARD_HEADER + textwrap.dedent(
    """
    lin = torch.compile(torch.nn.Linear(4, 4))


    def raises(x, t):
        with fwAD.dual_level():
            return lin(fwAD.make_dual(x, t))  # script-raise-site


    def drops(x, t):
        with fwAD.dual_level():
            out = f(fwAD.make_dual(x, t))  # script-drop-site
            return fwAD.unpack_dual(out).tangent


    if __name__ == "__main__":
        x, t = torch.randn(4), torch.randn(4)
        print(raises(x, t))  # compiled, this raises and ends the script before drops() runs
        print(drops(x, t))
    """
)

WRITES = HAZARD_HEADER + textwrap.dedent(
    """
    from pathlib import Path

    import helper


    def test_writes():
        with open("out.txt", "w") as handle:  # relative: the copy of the project root
            handle.write(str(helper.VALUE))
        Path(__file__).with_name("beside.txt").write_text("x")  # next to this file: in the copy too
        with fwAD.dual_level():
            f(fwAD.make_dual(torch.ones(2), torch.ones(2)))  # writes-site
    """
)

SLOW = HAZARD_HEADER + textwrap.dedent(
    """
    import time


    def test_sleeps():
        time.sleep(120)
        with fwAD.dual_level():
            f(fwAD.make_dual(torch.ones(2), torch.ones(2)))  # sleep-site


    def test_fails_first():
        raise ValueError("broken before the site")
        with fwAD.dual_level():
            f(fwAD.make_dual(torch.ones(2), torch.ones(2)))  # fail-site
    """
)


def _line(source: str, marker: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), start=1) if line.rstrip().endswith(f"# {marker}"))


def _run_cli(project: Path, *extra: str) -> tuple[dict, float]:
    report = project / "report.json"
    started = time.perf_counter()
    code = cli.main(["check", str(project), "--confirm", "--format", "json", "-o", str(report), *extra])
    seconds = time.perf_counter() - started
    assert code in (0, 1)
    return json.loads(report.read_text()), seconds


def _by_line(document: dict, filename: str) -> dict[int, dict]:
    return {f["line"]: f for f in document["findings"] if f["path"].endswith(filename)}


@pytest.fixture(scope="module")
def confirmed_project(tmp_path_factory):
    project = tmp_path_factory.mktemp("confirm_project")
    (project / "cases.py").write_text(CASES)
    (project / "noentry.py").write_text(NO_ENTRY)
    (project / "script.py").write_text(SCRIPT)
    (project / "writes.py").write_text(WRITES)
    (project / "helper.py").write_text("VALUE = 3\n")
    document, seconds = _run_cli(project, "--devices", "cpu")
    return project, document, seconds


@pytest.mark.slow
def test_cal001_dropped_tangent_confirmed(confirmed_project):
    _, document, _ = confirmed_project
    finding = _by_line(document, "cases.py")[_line(CASES, "tangent-site")]
    assert finding["code"] == "CAL001"
    result = finding["confirm"]["cpu"]
    assert result["verdict"] == "confirmed" and result["source"] == "project-code", result
    assert "tangent dropped to None" in result["detail"] and "cases:test_tangent_dropped" in result["detail"]


@pytest.mark.slow
def test_cal001_requires_grad_confirmed_as_raise(confirmed_project):
    _, document, _ = confirmed_project
    result = _by_line(document, "cases.py")[_line(CASES, "raise-site")]["confirm"]["cpu"]
    assert result["verdict"] == "confirmed", result
    assert "raises NotImplementedError" in result["detail"]


@pytest.mark.slow
def test_cal002_fp32_island_confirmed_with_relative_difference(confirmed_project):
    _, document, _ = confirmed_project
    finding = _by_line(document, "cases.py")[_line(CASES, "island-site")]
    assert finding["code"] == "CAL002"
    result = finding["confirm"]["cpu"]
    assert result["verdict"] == "confirmed", result
    assert "relative difference" in result["detail"] and "'off' (matching)" in result["detail"]
    # The eager differential: eager's own backward of the region under the bf16 autocast the compiled one assumed.
    assert "eager with the region's backward under autocast('cpu', bfloat16)" in result["detail"]
    assert "the mismatch changes eager's own gradients" in result["detail"]


@pytest.mark.slow
def test_each_call_in_a_script_is_judged_on_its_own(confirmed_project):
    """The first flagged call raises compiled and ends the script: it is confirmed from the script; the
    second one never ran compiled, so its verdict comes from a probe and says why."""
    _, document, _ = confirmed_project
    by_line = _by_line(document, "script.py")
    raised = by_line[_line(SCRIPT, "script-raise-site")]["confirm"]["cpu"]
    assert raised["verdict"] == "confirmed", raised
    assert "__main__ block" in raised["detail"] and "the flagged call raises NotImplementedError" in raised["detail"]
    dropped = by_line[_line(SCRIPT, "script-drop-site")]["confirm"]["cpu"]
    assert dropped["verdict"] == "torch-has-hazard" and dropped["source"] == "synthetic-probe", dropped
    assert "synthetic probe" in dropped["detail"] and "before reaching the flagged call" in dropped["detail"]


@pytest.mark.slow
def test_cal002_region_traced_at_an_earlier_call_is_still_compared(confirmed_project):
    """The matching config is forced for the flagged compiled callable wherever it is traced, so a graph
    compiled at an earlier call and reused at the flagged one is compared too; parameters that tie by
    value (two LayerNorm weights) are matched across runs by creation order."""
    _, document, _ = confirmed_project
    result = _by_line(document, "cases.py")[_line(CASES, "reuse-site")]["confirm"]["cpu"]
    assert result["verdict"] == "confirmed", result
    assert "eager agrees with the matching config" in result["detail"]


@pytest.mark.slow
def test_cal002_fixed_config_not_confirmed(confirmed_project):
    _, document, _ = confirmed_project
    finding = _by_line(document, "cases.py").get(_line(CASES, "fixed-site"))
    assert finding is None or finding["confirm"]["cpu"]["verdict"] == "not-reproduced"


@pytest.mark.slow
def test_no_entry_point_uses_synthetic_probe(confirmed_project):
    _, document, _ = confirmed_project
    result = _by_line(document, "noentry.py")[_line(NO_ENTRY, "synthetic-site")]["confirm"]["cpu"]
    assert "synthetic probe" in result["detail"]
    assert result["verdict"] == "torch-has-hazard" and result["source"] == "synthetic-probe", result
    assert result["torch"] == torch_version_without_import()


@pytest.mark.slow
def test_nothing_written_next_to_user_files_but_the_cache(confirmed_project):
    """writes.py imports a sibling and writes relative to the working directory and to ``__file__``:
    its runs work on a copy of the project, so neither file (nor bytecode) appears in the project."""
    project, document, _ = confirmed_project
    result = _by_line(document, "writes.py")[_line(WRITES, "writes-site")]["confirm"]["cpu"]
    assert result["verdict"] == "confirmed", result  # the entry ran past its writes to the site
    names = {str(p.relative_to(project)).split("/")[0] for p in project.rglob("*")}
    assert names <= {
        "cases.py",
        "noentry.py",
        "script.py",
        "writes.py",
        "helper.py",
        "report.json",
        ".compile_ad_lint_cache",
    }
    assert any((project / ".compile_ad_lint_cache").glob("??/*.json"))  # verdicts are cache entries too


@pytest.mark.slow
def test_second_run_is_served_from_the_cache(confirmed_project, capsys):
    project, first, _ = confirmed_project
    capsys.readouterr()
    second, _ = _run_cli(project, "--devices", "cpu")
    assert "confirm: run" not in capsys.readouterr().err  # no subprocess was started
    verdicts = lambda doc: [(f["line"], f["confirm"]) for f in doc["findings"]]
    assert verdicts(second) == verdicts(first)


@pytest.mark.slow
def test_timeout_is_an_error_and_the_run_continues(tmp_path):
    (tmp_path / "slow.py").write_text(SLOW)
    document, seconds = _run_cli(tmp_path, "--devices", "cpu", "--confirm-timeout", "12", "--no-cache")
    findings = _by_line(document, "slow.py")
    timed_out = findings[_line(SLOW, "sleep-site")]["confirm"]["cpu"]
    assert timed_out["verdict"] == "error" and "timed out after 12s in the eager run" in timed_out["detail"]
    failed = findings[_line(SLOW, "fail-site")]["confirm"]["cpu"]
    assert failed["verdict"] == "error" and "ValueError: broken before the site" in failed["detail"]
    assert seconds < 60


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.mark.slow
@pytest.mark.cuda
@pytest.mark.skipif(not _cuda_available(), reason="needs a CUDA device (torch.cuda.is_available() is False here)")
def test_cuda_dropped_tangent_confirmed(tmp_path):
    source = HAZARD_HEADER + textwrap.dedent(
        """
        def test_gpu():
            x, t = torch.randn(3), torch.randn(3)
            with fwAD.dual_level():
                out = f(fwAD.make_dual(x, t))  # gpu-site
                fwAD.unpack_dual(out)
        """
    )
    (tmp_path / "gpu.py").write_text(source)
    document, _ = _run_cli(tmp_path, "--devices", "cuda", "--no-cache")
    result = _by_line(document, "gpu.py")[_line(source, "gpu-site")]["confirm"]["cuda"]
    assert result["verdict"] == "confirmed", result
    assert "torch " in result["detail"] and "cuda (" in result["detail"]


def test_entry_points_parse_safely_from_many_threads(tmp_path):
    """The shape of the confirm crash (CPython 3.11, python/cpython#106905): findings evaluated in
    threads, each parsing its file for entry points. A thread switch in the middle of one thread's
    tree conversion (here forced: a garbage-collection callback that waits while the conversion
    runs, as a finalizer that releases the GIL does), then a parse in a second thread, made the first
    fail with ``SystemError: AST constructor recursion depth mismatch``. Every parse goes through one
    lock (``pyast``): the second thread waits, and both get their entry points."""
    import gc
    import sys
    import threading
    from concurrent.futures import ThreadPoolExecutor

    body = "".join(f"def f{i}(a):\n    return [[[x, (a, {{{i}: [a]}})] for x in a]]\n" for i in range(40))
    files = []
    for name in ("first", "second"):
        path = tmp_path / f"{name}.py"
        path.write_text(body + "def test_entry():\n    return f0([1])\n")
        files.append(path)
    converting = {"first": threading.Event(), "second": threading.Event()}
    first_done = threading.Event()
    roles: dict[int, str] = {}
    seen: dict[str, int] = {"first": 0, "second": 0}

    def pause_inside_conversion(phase: str, info: dict) -> None:
        role = roles.get(threading.get_ident())
        caller = sys._getframe(1).f_code
        if phase != "start" or role is None or caller.co_name != "parse" or not caller.co_filename.endswith("ast.py"):
            return
        seen[role] += 1
        if seen[role] != 50:  # well inside the tree conversion (ast.parse's own Python code allocates little)
            return
        converting[role].set()
        (converting["second"] if role == "first" else first_done).wait(3)

    def first() -> list:
        roles[threading.get_ident()] = "first"
        try:
            return candidates(files[0], body.count("\n") + 2, [])
        finally:
            first_done.set()

    def second() -> list:
        converting["first"].wait(10)
        roles[threading.get_ident()] = "second"
        return candidates(files[1], body.count("\n") + 2, [])

    previous = gc.get_threshold()
    gc.collect()
    gc.callbacks.append(pause_inside_conversion)
    gc.set_threshold(1)
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            found = [future.result() for future in [pool.submit(first), pool.submit(second)]]
    finally:
        gc.set_threshold(*previous)
        gc.callbacks.remove(pause_inside_conversion)
    assert converting["first"].is_set()  # the first conversion was paused
    assert [[entry.function for entry in entries] for entries in found] == [["test_entry"], ["test_entry"]]


def test_a_file_that_cannot_be_parsed_is_an_error_verdict_and_the_others_go_on(tmp_path):
    from compile_ad_lint.confirm.entries import parse_problem

    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text("def test_a():\n    pass\n")
    bad.write_bytes(b"def test_a(:\n")
    assert parse_problem(good) is None
    assert parse_problem(bad).startswith("cannot parse bad.py")
    assert parse_problem(tmp_path / "gone.py").startswith("cannot read gone.py")
