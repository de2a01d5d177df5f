"""Confirm mode's isolation: every process a run starts ends with it, and the runs write nothing into the project.

The process tests use real processes. The fast ones replace the child script with a small one that
needs no torch, so they test the runner's end-of-run scan alone; the slow ones run the real child
(it imports torch, nothing is compiled), whose subreaper catches processes that drop the marker.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import textwrap
import time
from pathlib import Path

import pytest

from compile_ad_lint.confirm import runner
from compile_ad_lint.confirm.runner import MARKER, SourceTree, relocate, run_child

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the end-of-run scan reads /proc (elsewhere: process group kill only)"
)

# A process that writes its pid to argv[1] (atomically) and sleeps far longer than any test.
SLEEPER = "import os, sys, time; open(sys.argv[1] + '.tmp', 'w').write(str(os.getpid())); os.replace(sys.argv[1] + '.tmp', sys.argv[1]); time.sleep(600)"

# Stands in for _child.py: starts a process the way ``how`` says, waits for its pid, then finishes or hangs.
FAKE_CHILD = textwrap.dedent(
    """
    import json, os, subprocess, sys, time

    spec = json.load(open(sys.argv[1]))
    command = [sys.executable, "-c", spec["sleeper"], spec["pidfile"]]
    if spec["how"] == "new-session":
        subprocess.Popen(command, start_new_session=True)
    elif spec["how"] == "new-session-empty-env":  # drops the marker: only the child's tree finds it
        subprocess.Popen(command, start_new_session=True, env={})
    else:  # "setsid-daemon": double fork and setsid, orphaned at once (reparented away from this process)
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, command)
            os._exit(0)
        os.wait()
    while not os.path.exists(spec["pidfile"]):
        time.sleep(0.01)
    if not spec["finish"]:
        time.sleep(600)
    """
)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie is dead: in a container nobody may reap it)."""
    try:
        line = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        return False
    return line[line.rfind(b")") + 2 :][:1] not in (b"Z", b"X")


def _assert_gone(pid: int, what: str) -> None:
    """Fail if ``pid`` still runs, killing it first so that a failing test leaves no sleeper behind."""
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)
        pytest.fail(f"{what} {pid} outlived the run")


def _fake_run(tmp_path: Path, monkeypatch, how: str, *, finish: bool, timeout: float) -> tuple[runner.RunOutcome, int]:
    script = tmp_path / "fake_child.py"
    script.write_text(FAKE_CHILD)
    monkeypatch.setattr(runner, "CHILD", script)
    pidfile = tmp_path / "grandchild.pid"
    spec = {"mode": "fake", "how": how, "finish": finish, "sleeper": SLEEPER, "pidfile": str(pidfile)}
    outcome = run_child(spec, tmp_path / "run", timeout)
    return outcome, int(pidfile.read_text())


@linux_only
@pytest.mark.parametrize("how", ["new-session", "setsid-daemon", "new-session-empty-env"])
def test_a_timed_out_run_kills_what_left_its_process_group(tmp_path, monkeypatch, how):
    outcome, grandchild = _fake_run(tmp_path, monkeypatch, how, finish=False, timeout=3)
    assert outcome.timed_out
    _assert_gone(grandchild, f"the {how} grandchild")


@linux_only
@pytest.mark.parametrize("how", ["new-session", "setsid-daemon"])
def test_a_finished_run_kills_the_daemon_it_left(tmp_path, monkeypatch, how):
    outcome, grandchild = _fake_run(tmp_path, monkeypatch, how, finish=True, timeout=30)
    assert not outcome.timed_out and outcome.returncode == 0
    _assert_gone(grandchild, f"the {how} daemon")


@linux_only
def test_processes_the_run_did_not_start_survive(tmp_path, monkeypatch):
    """Neither an unmarked process nor one of another (concurrent) run is touched."""
    import subprocess

    bystanders = []
    for index, env in enumerate([dict(os.environ), dict(os.environ, **{MARKER: "another-run"})]):
        pidfile = tmp_path / f"bystander{index}.pid"
        bystanders.append(
            subprocess.Popen([sys.executable, "-c", SLEEPER, str(pidfile)], env=env, start_new_session=True)
        )
    try:
        _, grandchild = _fake_run(tmp_path, monkeypatch, "setsid-daemon", finish=True, timeout=30)
        _assert_gone(grandchild, "the daemon")
        assert all(process.poll() is None for process in bystanders)
    finally:
        for process in bystanders:
            process.kill()
            process.wait()


# -- the real child (imports torch; nothing is compiled) --------------------------------------------

SPAWNER = textwrap.dedent(
    """
    import os, subprocess, sys, time

    SLEEPER = {sleeper!r}


    def daemon(pidfile):
        # Double fork, setsid and an empty environment: orphaned at once and without the marker.
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execve(sys.executable, [sys.executable, "-c", SLEEPER, pidfile], {{}})
            os._exit(0)
        os.wait()
        while not os.path.exists(pidfile):
            time.sleep(0.01)


    def leaves_a_daemon():
        daemon({pidfile!r})


    def hangs():
        daemon({pidfile!r})
        time.sleep(600)
    """
)


def _child_spec(module: str, function: str, root: Path, *, watch: list[str] = ()) -> dict:
    path = str((root / f"{module}.py").resolve())
    return {
        "mode": "run",
        "device": "cpu",
        "entry": {"kind": "function", "module": module, "path": path, "function": function},
        "roots": [str(root.resolve())],
        "focus": [path],
        "watch": list(watch),
        "force": [],
        "compiled": False,
    }


@linux_only
@pytest.mark.slow
@pytest.mark.parametrize("function", ["leaves_a_daemon", "hangs"])
def test_the_child_kills_daemons_that_dropped_the_marker(tmp_path, function):
    """The real child is a subreaper: a daemon with an empty environment stays in its tree, and is
    killed by the child when the run finishes, by the runner when it times out."""
    project, pidfile = tmp_path / "project", tmp_path / "daemon.pid"
    project.mkdir()
    (project / "spawner.py").write_text(SPAWNER.format(sleeper=SLEEPER, pidfile=str(pidfile)))
    tree = SourceTree.scan([str(project)], start=str(project))
    timeout = 30 if function == "hangs" else 120
    outcome = run_child(_child_spec("spawner", function, project), tmp_path / "run", timeout, compiled=False, tree=tree)
    assert outcome.timed_out == (function == "hangs"), outcome.output_summary()
    if function == "leaves_a_daemon":
        assert outcome.status == "ok", outcome.result
    _assert_gone(int(pidfile.read_text()), "the daemon without the marker")


WRITER = textwrap.dedent(
    """
    import os
    from pathlib import Path

    import helper


    def go():
        with open("out.txt", "w") as handle:  # relative to the working directory
            handle.write(str(helper.VALUE))
        beside = Path(__file__).with_name("beside.txt")  # next to this file
        beside.write_text("x")
        os.makedirs("outputs", exist_ok=True)
        Path("outputs", "run.log").write_text("log")
        print("WROTE", os.path.abspath("out.txt"), beside.resolve())
        raise ValueError("after the writes")
    """
)


def _snapshot(folder: Path) -> dict[str, float]:
    return {str(p.relative_to(folder)): p.stat().st_mtime for p in sorted(folder.rglob("*"))}


@pytest.mark.slow
def test_writes_land_in_the_runs_copy_and_paths_read_as_the_originals(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "writer.py").write_text(WRITER)
    (project / "helper.py").write_text("VALUE = 3\n")
    before = _snapshot(project)
    writer = str((project / "writer.py").resolve())
    tree = SourceTree.scan([str(project)], start=str(project), extra=[writer])
    run = tmp_path / "run"
    outcome = run_child(_child_spec("writer", "go", project, watch=[writer]), run, 120, compiled=False, tree=tree)
    assert outcome.status == "exception" and outcome.result["exception"]["message"] == "after the writes", (
        outcome.output_summary()
    )
    assert _snapshot(project) == before  # no out.txt, beside.txt, outputs/ or __pycache__ in the project
    wrote = next(line for line in (run / "stdout.txt").read_text().splitlines() if line.startswith("WROTE")).split()[1:]
    copy = str((run / "tree").resolve())
    assert all(path.startswith(copy + os.sep) for path in wrote), wrote  # both writes landed in the copy...
    assert not (run / "tree").exists()  # ...which is gone after the run
    # The child reports the original paths: the trace and the exception's frames name writer.py itself.
    assert outcome.result["exception"]["frames"][-1][0] == writer
    assert outcome.result["executed"][writer]


# -- the copy --------------------------------------------------------------------------------------


def test_the_copy_leaves_out_environments_big_data_and_the_work_folder(tmp_path):
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "model.py").write_text("x = 1\n")
    (project / "config.yaml").write_text("lr: 0.1\n")
    (project / "weights.pt").write_bytes(b"\0" * (runner.COPY_FILE_LIMIT + 1))
    (project / "fast.so").write_bytes(b"\0" * (runner.COPY_FILE_LIMIT + 1))  # importable: copied whatever its size
    (project / "outputs").mkdir()  # empty: recreated, so code that writes into it writes into the copy
    for excluded in (".git", ".venv", "__pycache__", ".compile_ad_lint_cache"):
        (project / excluded).mkdir()
        (project / excluded / "x.py").write_text("")
    (project / "work").mkdir()
    (project / "work" / "probe.py").write_text("")
    (project / "data").mkdir()
    (project / "latest").symlink_to(project / "data", target_is_directory=True)
    elsewhere = tmp_path / "shared"
    elsewhere.mkdir()
    (project / "shared").symlink_to(elsewhere, target_is_directory=True)
    (project / ".git" / "flagged.py").write_text("")  # a flagged file inside an excluded folder

    flagged = str(project / ".git" / "flagged.py")
    tree = SourceTree.scan(
        [str(project), str(project / "pkg")], start=str(project), extra=[flagged], skip=str(project / "work")
    )
    assert tree.roots == (str(project.resolve()),)  # nested roots are copied once
    copied = sorted(os.path.relpath(source, project) for source, _ in tree.files)
    assert copied == [".git/flagged.py", "config.yaml", "fast.so", "pkg/__init__.py", "pkg/model.py"]
    assert tree.left_out == 1 and tree.start == str(project.resolve())

    origins = tree.materialize(tmp_path / "copy")
    ((copy, original),) = origins
    assert original == str(project.resolve()) and copy == str((tmp_path / "copy" / "0" / "project").resolve())
    assert (Path(copy) / "outputs").is_dir() and not (Path(copy) / "weights.pt").exists()
    assert os.readlink(Path(copy) / "latest") == os.path.join(copy, "data")  # inside the project: the copy's
    assert os.readlink(Path(copy) / "shared") == str(elsewhere.resolve())  # outside: where it points
    assert relocate(os.path.join(copy, "pkg", "model.py"), origins) == str(project.resolve() / "pkg" / "model.py")


def test_copying_a_500_file_project_costs_little(tmp_path):
    """The figures the README quotes: listing once per session, then copying and deleting per run."""
    project = tmp_path / "big"
    body = "".join(f"def f{j}(x):\n    return x * {j}\n\n" for j in range(120))  # about 4 KB
    for index in range(500):
        package = project / "pkg" / f"sub{index % 25}"
        package.mkdir(parents=True, exist_ok=True)
        (package / "__init__.py").touch()
        (package / f"mod{index}.py").write_text(body)
    started = time.perf_counter()
    tree = SourceTree.scan([str(project)], start=str(project))
    scanned = time.perf_counter()
    tree.materialize(tmp_path / "copy")
    copied = time.perf_counter()
    import shutil

    shutil.rmtree(tmp_path / "copy")
    removed = time.perf_counter()
    figures = {
        "files": len(tree.files),
        "MB": round(tree.size() / 1e6, 1),
        "scan_ms": round(1000 * (scanned - started)),
        "copy_ms": round(1000 * (copied - scanned)),
        "delete_ms": round(1000 * (removed - copied)),
    }
    print(json.dumps(figures))
    assert len(tree.files) == 525
    assert copied - scanned < 5  # far below one run's torch import (seconds), even on a slow disk
