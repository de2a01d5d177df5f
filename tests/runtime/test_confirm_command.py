"""``compile-ad-lint confirm [PATHS] -- COMMAND``: verdicts from the user's own run.

The fast tests cover the parts that need no torch run: sites, the verdicts judged from measurements,
the bootstrap ``sitecustomize``, the end of a run (max seconds, every process killed), the CLI's
usage errors. The slow ones run the real-shaped projects under ``tests/data/confirm_projects`` through
``confirm -- python ...`` on CPU under bf16 CPU autocast, each once (a module-scoped fixture), each on
a copy of the project so the test can tell that nothing was written into it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from compile_ad_lint import Config, ConfirmResult, Verdict, cli
from compile_ad_lint.api import Analyzer
from compile_ad_lint.confirm import live_verdicts
from compile_ad_lint.confirm.command import BOOTSTRAP, CommandOptions, confirm_command, site_of
from compile_ad_lint.confirm.runner import MARKER, _scan
from compile_ad_lint.core.findings import VerdictSource
from compile_ad_lint.testing import expected_in, reported

PROJECTS = Path(__file__).resolve().parents[1] / "data" / "confirm_projects"
PYTHON = sys.executable


def _findings(path: Path):
    return Analyzer(Config(), use_cache=False, jobs=1).check([str(path)]).findings


# -- the projects' markers ------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in PROJECTS.iterdir() if p.is_dir()))
def test_each_project_is_flagged_where_its_markers_say(name):
    project = PROJECTS / name
    expected = set()
    for path in project.rglob("*.py"):
        expected |= expected_in(path, str(path))
    assert expected, f"{name} has no # expect: marker"
    assert reported(_findings(project)) == expected


# -- what the instrumented run watches, and the verdicts judged from its measurements ---------------

HAZARDS = textwrap.dedent(
    """
    import torch
    import torch.autograd.forward_ad as fwAD

    f = torch.compile(lambda a: torch.sin(a) * a)
    model = torch.compile(torch.nn.Linear(4, 4))


    def jvp(x, t):
        with fwAD.dual_level():
            return f(fwAD.make_dual(x, t))


    def step(x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(x).sum()
        loss.backward()
    """
)


def test_sites_name_the_flagged_statement_and_the_compiled_call(tmp_path):
    (tmp_path / "m.py").write_text(HAZARDS)
    findings = sorted(_findings(tmp_path), key=lambda f: f.location.line)
    jvp, step = (site_of(number, finding) for number, finding in enumerate(findings))
    assert jvp.document["code"] == "CAL001" and jvp.document["lines"] == [11, 11]
    assert step.document["code"] == "CAL002" and step.document["lines"] == [17, 17]
    assert step.document["call"] == {"file": str((tmp_path / "m.py").resolve()), "lines": [16, 16]}
    assert step.document["file"] == str((tmp_path / "m.py").resolve())


def _cal002(**numbers):
    measured = {
        "kind": "cal002",
        "device": "cpu",
        "outcome": "measured",
        "written_text": "'same_as_forward'",
        "matching_text": "'off'",
        "forward": "autocast('cpu', bfloat16)",
        "backward": "no autocast",
        "assumed": "autocast('cpu', bfloat16)",
        "backend": "inductor",
        "dtypes": ["float32"],
        "size": 100,
        "seconds": 1.0,
        "differential": 2.4e-3,
        "vs_eager_written": 2.4e-3,
        "vs_eager_matching": 3e-8,
        "eager_differential": 2.4e-3,
    }
    measured.update(numbers)
    return measured


def test_cal002_from_measurements_uses_the_fix_differential():
    confirmed = live_verdicts.decide("CAL002", _cal002())
    assert confirmed.verdict is Verdict.CONFIRMED and confirmed.difference == pytest.approx(2.4e-3)
    assert confirmed.tolerance == pytest.approx(1e-5) and "(as traced) vs 'off'" in confirmed.compared
    noise = live_verdicts.decide("CAL002", _cal002(differential=3e-9, eager_differential=0.0))
    assert noise.verdict is Verdict.NOT_REPRODUCED and "within noise" in noise.detail
    infinite = live_verdicts.decide("CAL002", _cal002(vs_eager_written="inf", vs_eager_matching="inf"))
    assert infinite.verdict is Verdict.NOT_REPRODUCED  # eager could not be lined up: never a confirmation
    same = live_verdicts.decide("CAL002", _cal002(outcome="same", backward="autocast('cpu', bfloat16)"))
    assert same.verdict is Verdict.NOT_REPRODUCED and "no mismatch in this run" in same.detail
    none = live_verdicts.decide("CAL002", {"kind": "cal002", "outcome": "no-region"})
    assert none.verdict is Verdict.NOT_REPRODUCED and "no compiled region" in none.detail


def test_cal001_cal004_cal005_from_measurements():
    dropped = {"kind": "cal001", "device": "cpu", "outcome": "measured"}
    dropped["pairs"] = [{"eager_none": False, "compiled_none": True, "rel": None, "dtype": "float32"}]
    assert live_verdicts.decide("CAL001", dropped).verdict is Verdict.CONFIRMED
    equal = dict(dropped, pairs=[{"eager_none": False, "compiled_none": False, "rel": 1e-7, "dtype": "float32"}])
    assert live_verdicts.decide("CAL001", equal).verdict is Verdict.NOT_REPRODUCED
    raised = {"kind": "cal001", "outcome": "raised", "eager_raised": None}
    raised["written_raised"] = {"type": "NotImplementedError", "message": "You must implement the jvp function"}
    assert live_verdicts.decide("CAL001", raised).verdict is Verdict.CONFIRMED
    double = {"kind": "cal004", "outcome": "later-raised", "later": ["/p/train.py", 40], "eager": {"ok": True}}
    double["raised"] = {
        "type": "RuntimeError",
        "message": "torch.compile with aot_autograd does not currently support double backward",
    }
    result = live_verdicts.decide("CAL004", double)
    assert result.verdict is Verdict.CONFIRMED and "line 40" in result.detail
    ran = live_verdicts.decide("CAL004", {"kind": "cal004", "outcome": "no-later-backward", "eager": None})
    assert ran.verdict is Verdict.NOT_REPRODUCED
    rows = [{"name": "aux.weight", "shape": [3, 4], "compiled": "zeros", "eager": "none", "real": "none->zeros"}]
    zeros = live_verdicts.decide("CAL005", {"kind": "cal005", "outcome": "measured", "leaves": rows, "unused": 1})
    assert zeros.verdict is Verdict.CONFIRMED and "aux.weight (3, 4)" in zeros.detail
    rows[0]["compiled"] = "none"
    kept = live_verdicts.decide("CAL005", {"kind": "cal005", "outcome": "measured", "leaves": rows})
    assert kept.verdict is Verdict.NOT_REPRODUCED
    failed = live_verdicts.decide("CAL002", {"kind": "error", "reason": "BackendCompilerFailed: x"})
    assert failed.verdict is Verdict.ERROR and "BackendCompilerFailed" in failed.detail


def test_verdict_text_is_escaped_and_names_its_source(tmp_path, capsys):
    """A detail carries text from the checked code (exception messages): it is escaped in the text
    report, and each verdict says what ran."""
    from compile_ad_lint.api import Report, Stats
    from compile_ad_lint.output import json_format, text

    (tmp_path / "m.py").write_text(HAZARDS)
    finding = _findings(tmp_path)[0]
    result = ConfirmResult(
        Verdict.ERROR, "ValueError: \x1b[31mred\x1b[0m\nforged line", VerdictSource.NONE, "cpu", "2.13.0+cpu"
    )
    probe = ConfirmResult(Verdict.TORCH_HAS_HAZARD, "probe", VerdictSource.SYNTHETIC, "cpu", "2.13.0+cpu")
    report = Report((finding.with_confirm({"cpu": result}), finding.with_confirm({"cpu": probe})), Stats(1, 1, 0, 0.1))
    rendered = text.render(report, text.TextOptions())
    assert "\x1b" not in rendered and "\\x1b[31m" in rendered and "forged line" in rendered
    assert "\nforged line" not in rendered
    assert "torch-has-hazard [synthetic probe, not your code, torch 2.13.0+cpu]" in rendered
    document = json.loads(json_format.render(report))
    assert document["findings"][1]["confirm"]["cpu"]["source"] == "synthetic-probe"
    assert document["findings"][1]["confirm"]["cpu"]["torch"] == "2.13.0+cpu"


def test_language_server_diagnostic_names_the_verdict_and_its_source(tmp_path):
    pytest.importorskip("pygls")
    from compile_ad_lint.integrations.lsp import CompileAdLintServer, Files

    (tmp_path / "m.py").write_text(HAZARDS)
    finding = _findings(tmp_path)[0]
    probe = ConfirmResult(Verdict.TORCH_LACKS_HAZARD, "equal", VerdictSource.SYNTHETIC, "cpu", "2.13.0+cpu")
    diagnostic = CompileAdLintServer().diagnostic(finding.with_confirm({"cpu": probe}), Files({}, None))
    assert diagnostic.message.startswith(finding.message)
    assert "confirm: cpu: torch-lacks-hazard [synthetic probe, not your code, torch 2.13.0+cpu]" in diagnostic.message
    assert diagnostic.data["confirm"]["cpu"]["source"] == "synthetic-probe"
    plain = CompileAdLintServer().diagnostic(finding, Files({}, None))
    assert plain.message == "\n".join([finding.message, *finding.details]) and plain.data is None


# -- the bootstrap sitecustomize ---------------------------------------------------------------------


def test_bootstrap_hands_over_to_the_sitecustomize_it_shadows(tmp_path):
    own = tmp_path / "site"
    own.mkdir()
    (own / "sitecustomize.py").write_text("print('the environment sitecustomize ran')\n")
    env = dict(os.environ, PYTHONPATH=f"{BOOTSTRAP}{os.pathsep}{own}")
    env.pop("COMPILE_AD_LINT_CONFIRM_SITES", None)
    completed = subprocess.run(
        [PYTHON, "-c", "import sys; print('torch' in sys.modules)"], env=env, capture_output=True, text=True, timeout=60
    )
    assert completed.stdout.splitlines() == ["the environment sitecustomize ran", "False"], completed.stderr


# -- how a run ends ------------------------------------------------------------------------------------

DAEMON = textwrap.dedent(
    """
    import subprocess, sys, time
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True)
    print("started", flush=True)
    time.sleep(300)
    """
)


def test_max_seconds_ends_the_run_and_everything_it_started(tmp_path):
    (tmp_path / "m.py").write_text(HAZARDS)
    (tmp_path / "daemon.py").write_text(DAEMON)
    findings = _findings(tmp_path)
    started = time.monotonic()
    run = confirm_command(findings, CommandOptions([PYTHON, str(tmp_path / "daemon.py")], max_seconds=4, cwd=tmp_path))
    assert time.monotonic() - started < 30
    assert "stopped at --max-seconds 4" in run.ended and run.output_tail == ["started"]
    for finding in run.findings:
        ((device, result),) = finding.confirm
        assert device == "run" and result.verdict is Verdict.NOT_REACHED
        assert "never reached line" in result.detail and "no process of the command imported torch" in result.detail
    # Other confirm runs on the machine (another checkout's tests) carry the marker too: only this
    # command's processes (they run this test's daemon.py) count.
    survivors = [pid for pid in _scan_all() if _has_marker(pid) and _runs(pid, tmp_path)]
    assert survivors == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["daemon.py", "m.py"]  # nothing written beside them


def _scan_all() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()] if os.path.isdir("/proc") else []


def _runs(pid: int, folder: Path) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return str(folder).encode() in handle.read()
    except OSError:
        return False


def _has_marker(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return any(item.startswith(MARKER.encode() + b"=") for item in handle.read().split(b"\0"))
    except OSError:
        return False


def test_cli_needs_a_command_and_runs_none_without_findings(tmp_path, capsys, monkeypatch):
    (tmp_path / "clean.py").write_text("import torch\nprint(torch.ones(2))\n")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["confirm", "."]) == 2
    assert "needs the command to run after --" in capsys.readouterr().err
    marker = tmp_path / "ran.txt"
    code = cli.main(["confirm", ".", "--no-cache", "--", PYTHON, "-c", f"open({str(marker)!r}, 'w')"])
    assert code == 0 and not marker.exists()
    assert "was not run" in capsys.readouterr().err
    assert _scan(os.urandom(4).hex())[0] == set()


# -- real-shaped projects through `confirm -- ...` (torch.compile on CPU) ---------------------------------


def _confirm(
    tmp_path_factory, name: str, command: list[str], options: tuple[str, ...] = ()
) -> tuple[Path, dict, float, set[str]]:
    project = tmp_path_factory.mktemp("confirm") / name
    shutil.copytree(PROJECTS / name, project)
    before = {str(p.relative_to(project)) for p in project.rglob("*")}
    report = project.parent / "report.json"
    cwd = os.getcwd()
    previous = os.environ.get("PYTHONDONTWRITEBYTECODE")
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"  # the user's own interpreter would write bytecode; we never do
    os.chdir(project)
    started = time.perf_counter()
    try:
        code = cli.main(["confirm", ".", "--no-cache", *options, "--format", "json", "-o", str(report), "--", *command])
    finally:
        os.chdir(cwd)
        if previous is None:
            os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        else:
            os.environ["PYTHONDONTWRITEBYTECODE"] = previous
    seconds = time.perf_counter() - started
    assert code == 1
    after = {str(p.relative_to(project)) for p in project.rglob("*")}
    return project, json.loads(report.read_text()), seconds, after - before


def _verdicts(document: dict) -> dict[tuple[str, int, str], tuple[str, dict]]:
    found = {}
    for finding in document["findings"]:
        ((device, result),) = finding["confirm"].items()
        found[(Path(finding["path"]).as_posix(), finding["line"], finding["code"])] = (device, result)
    return found


def _line(path: Path, marker: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), start=1) if marker in line)


def _from_the_code(device: str, result: dict, verdict: str) -> None:
    import torch

    assert result["verdict"] == verdict, result
    assert device == "cpu" and result["source"] == "project-code" and result["torch"] == torch.__version__


def _not_reached(device: str, result: dict, line: int) -> None:
    assert result["verdict"] == "not-reached" and result["source"] == "none", result
    assert f"never reached line {line}" in result["detail"]


@pytest.fixture(scope="module")
def gpt_script(tmp_path_factory):
    return _confirm(tmp_path_factory, "gpt_script", [PYTHON, "train.py", "config/train_tiny.py", "--max_iters=20"])


@pytest.mark.slow
def test_gpt_script_gets_its_verdict_from_its_own_run(gpt_script):
    """nanoGPT's shape: a module-level script, a configurator that rebinds globals from argv, a data file.
    Its own 2-layer model under bf16 CPU autocast gives the same gradients under the written config and
    the matching one: not-reproduced, from its code (the issue's finding, never a synthetic confirmed)."""
    project, document, seconds, written = gpt_script
    verdicts = _verdicts(document)
    train = project / "train.py"
    device, result = verdicts[("train.py", _line(train, "# expect: CAL002"), "CAL002")]
    _from_the_code(device, result, "not-reproduced")
    assert result["difference"] <= result["tolerance"] and "fix differential within noise" in result["detail"]
    cal001 = _line(train, "# expect: CAL001")
    _not_reached(*verdicts[("train.py", cal001, "CAL001")], cal001)
    assert written == set() and seconds < 240


@pytest.fixture(scope="module")
def argparse_trainer(tmp_path_factory):
    command = [PYTHON, "train.py", "--data-dir", "data", "--epochs", "3", "--head-warmup-steps", "1"]
    return _confirm(tmp_path_factory, "argparse_trainer", command)


@pytest.mark.slow
def test_argparse_trainer_confirms_its_fp32_island_and_zero_grads(argparse_trainer):
    project, document, seconds, written = argparse_trainer
    verdicts = _verdicts(document)
    loop = project / "trainer" / "loop.py"
    warmup = _line(loop, "# expect: CAL002, CAL005")
    epoch = next(
        n for n, line in enumerate(loop.read_text().splitlines(), start=1) if line.endswith("# expect: CAL002")
    )
    device, zeros = verdicts[("trainer/loop.py", warmup, "CAL005")]
    _from_the_code(device, zeros, "confirmed")
    assert "aux_head.weight" in zeros["detail"] and "your run's .grad: none->zeros" in zeros["detail"]
    device, island = verdicts[("trainer/loop.py", epoch, "CAL002")]
    _from_the_code(device, island, "confirmed")
    assert island["difference"] > island["tolerance"] and "eager differential" in island["detail"]
    probe = project / "trainer" / "probe.py"
    _not_reached(*verdicts[("trainer/probe.py", _line(probe, "# expect: CAL001"), "CAL001")], _line(probe, "# expect"))
    assert written == set() and seconds < 240


@pytest.fixture(scope="module")
def accelerate_project(tmp_path_factory):
    pytest.importorskip("accelerate")
    accelerate = shutil.which("accelerate", path=str(Path(PYTHON).parent)) or "accelerate"
    command = [accelerate, "launch", "--cpu", "--num_processes", "1", "--num_machines", "1"]
    command += [
        "--mixed_precision",
        "bf16",
        "--dynamo_backend",
        "no",
        "train.py",
        "--data-dir",
        "data",
        "--num-epochs",
        "3",
    ]
    return _confirm(tmp_path_factory, "accelerate_project", command)


@pytest.mark.slow
def test_accelerate_script_confirms_the_autocast_its_prepare_adds(accelerate_project):
    """accelerate's prepare() enters autocast inside the compiled module's forward: the region is
    traced under bf16 autocast, the backward runs outside it. The worker process accelerate launches is
    the one instrumented."""
    project, document, seconds, written = accelerate_project
    verdicts = _verdicts(document)
    train = project / "train.py"
    _from_the_code(*verdicts[("train.py", _line(train, "accelerator.backward(loss)"), "CAL002")], "confirmed")
    penalty = _line(train, "# expect: CAL002, CAL004")
    for code in ("CAL002", "CAL004"):
        _not_reached(*verdicts[("train.py", penalty, code)], penalty)
    assert written == set() and seconds < 240


@pytest.fixture(scope="module")
def torchrun_project(tmp_path_factory):
    torchrun = shutil.which("torchrun", path=str(Path(PYTHON).parent)) or "torchrun"
    command = [torchrun, "--standalone", "--nproc-per-node", "1", "train_ddp.py", "--data", "data/series.csv"]
    return _confirm(tmp_path_factory, "torchrun_project", [*command, "--steps", "50"])


@pytest.mark.slow
def test_torchrun_worker_is_instrumented(torchrun_project):
    """torchrun starts the worker (world size 1, gloo); the worker inherits the bootstrap and is the
    process that measures; DDP wraps the compiled module."""
    project, document, seconds, written = torchrun_project
    verdicts = _verdicts(document)
    train = project / "train_ddp.py"
    _from_the_code(*verdicts[("train_ddp.py", _line(train, "# expect: CAL002"), "CAL002")], "confirmed")
    cal001 = _line(train, "# expect: CAL001")
    _not_reached(*verdicts[("train_ddp.py", cal001, "CAL001")], cal001)
    assert written == set() and seconds < 240


CUDA_AUTOCAST = textwrap.dedent(
    """
    import torch

    model = torch.compile(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)))
    for step in range(3):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(torch.randn(4, 8)).sum()
        loss.backward()
    """
)


@pytest.fixture(scope="module")
def torchrun_probe(tmp_path_factory):
    torchrun = shutil.which("torchrun", path=str(Path(PYTHON).parent)) or "torchrun"
    command = [torchrun, "--standalone", "--nproc-per-node", "1", "train_ddp.py", "--data", "data/series.csv"]
    return _confirm(tmp_path_factory, "torchrun_project", [*command, "--steps", "2", "--probe"], ("--until-exit",))


@pytest.mark.slow
def test_until_exit_reaches_the_probe_after_training(torchrun_probe):
    """With --until-exit the run goes past the training loop to the forward-mode probe: the compiled
    module with parameters raises NotImplementedError under forward AD where its eager replay runs.
    Once both sites are measured the worker stops itself."""
    project, document, seconds, written = torchrun_probe
    verdicts = _verdicts(document)
    train = project / "train_ddp.py"
    device, probe = verdicts[("train_ddp.py", _line(train, "# expect: CAL001"), "CAL001")]
    _from_the_code(device, probe, "confirmed")
    assert "raises NotImplementedError" in probe["detail"] and "eager returns normally" in probe["detail"]
    _from_the_code(*verdicts[("train_ddp.py", _line(train, "# expect: CAL002"), "CAL002")], "confirmed")
    assert written == set() and seconds < 240


@pytest.fixture(scope="module")
def gan_penalty(tmp_path_factory):
    return _confirm(tmp_path_factory, "gan_penalty", [PYTHON, "train_wgan_gp.py", "--steps", "50"])


@pytest.mark.slow
def test_gradient_penalty_double_backward_is_confirmed_from_the_run(gan_penalty):
    """WGAN-GP: grad(create_graph=True) through the compiled critic runs; the critic loss's backward
    after it raises the double-backward error in the user's run, and the critic replayed eagerly is
    differentiated twice without error."""
    project, document, seconds, written = gan_penalty
    ((device, result),) = [v for k, v in _verdicts(document).items() if k[2] == "CAL004"]
    _from_the_code(device, result, "confirmed")
    assert "does not currently support double backward" in result["detail"]
    assert "differentiated twice without error" in result["detail"]
    assert written == set() and seconds < 240


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


@pytest.mark.slow
def test_cuda_autocast_without_a_gpu_says_this_device_cannot_show_it(tmp_path, monkeypatch):
    """The code's autocast is for CUDA; on a machine without one, torch disables it and the run has no
    mismatch to show: the verdict is cannot-show, from the code's own run, and says why."""
    if _cuda():
        pytest.skip("a CUDA device is present: autocast('cuda') is active here")
    (tmp_path / "train.py").write_text(CUDA_AUTOCAST)
    monkeypatch.chdir(tmp_path)
    report = tmp_path.parent / f"{tmp_path.name}-report.json"
    assert (
        cli.main(["confirm", ".", "--no-cache", "--format", "json", "-o", str(report), "--", PYTHON, "train.py"]) == 1
    )
    ((finding,),) = [json.loads(report.read_text())["findings"]]
    ((device, result),) = finding["confirm"].items()
    assert (device, result["verdict"], result["source"]) == ("cpu", "cannot-show", "project-code"), result
    assert "autocast is for cuda (this machine has no CUDA device)" in result["detail"]
