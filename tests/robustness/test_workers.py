"""The worker pool of a check: largest tasks first, a root back to the worker that analyzed it."""

from __future__ import annotations

import os
import time

import pytest

from compile_ad_lint.pipeline.workers import WorkerPool
from compile_ad_lint.pipeline.workspace import start_worker


def _pid(_task: object) -> int:
    return os.getpid()


def _clock(_task: object) -> int:
    return time.monotonic_ns()


def _frozen(_task: object) -> int:
    import gc

    return gc.get_freeze_count()


def _started(jobs: int) -> WorkerPool:
    """``jobs`` workers, started like a check's (a workspace with the default configuration)."""
    from compile_ad_lint import Config

    return WorkerPool(jobs, start_worker, (Config(), None, [], {}, {}, True))


@pytest.fixture
def pool():
    started = _started(2)
    yield started
    started.close()


def _ran_by(pool: WorkerPool, homes: list[str], costs: list[float]) -> dict[str, int]:
    return {homes[position]: pid for position, pid in pool.run(_pid, homes, costs, homes=homes)}


def test_a_task_goes_back_to_the_worker_that_ran_its_home_before(pool):
    """A root analyzed again in a later round costs least where its modules were read: the order
    of the second round (reversed costs) would send every task to the other worker."""
    homes = ["a.py", "b.py", "c.py", "d.py"]
    first = _ran_by(pool, homes, [4.0, 3.0, 2.0, 1.0])
    assert len(set(first.values())) == 2, "the first round was not spread over both workers"
    second = _ran_by(pool, homes, [1.0, 2.0, 3.0, 4.0])
    assert second == first


def test_a_worker_takes_another_workers_task_only_when_that_one_has_plenty_waiting(pool):
    """Every task homed on one worker: two tasks stay there (the second waits for one task of its
    cost, less than a move costs), six are shared (a round on one worker would take twice as long)."""
    homes = [f"root_{index}.py" for index in range(6)]
    for home in homes:  # one task per run: each goes to the first worker
        _ran_by(pool, [home], [1.0])
    (home_pid,) = set(_ran_by(pool, homes[:2], [1.0, 1.0]).values())
    spread = _ran_by(pool, homes, [1.0] * len(homes))
    assert home_pid in spread.values() and len(set(spread.values())) == 2


def test_tasks_go_out_largest_first():
    """One worker runs the tasks in the order of their costs, largest first, ties in order."""
    alone = _started(1)
    try:
        started = dict(alone.run(_clock, ["x"] * 5, [1.0, 3.0, 2.0, 3.0, 0.5]))
    finally:
        alone.close()
    assert sorted(started, key=started.__getitem__) == [1, 3, 2, 0, 4]


def test_shares_without_homes_are_spread_one_per_worker_first(pool):
    """The callers round's two scan shares ran one after the other on one worker (each worker may
    hold two tasks): each worker gets one before any gets a second."""
    pids = [pid for _, pid in pool.run(_pid, ["share 1", "share 2"], [2.0, 2.0])]
    assert len(set(pids)) == 2


# -- a check's workers end with it --------------------------------------------------------------------


def _children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(entry))
    return found


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads processes from /proc")
@pytest.mark.parametrize("signal_number", [15, 9], ids=["SIGTERM", "SIGKILL"])
def test_the_workers_exit_when_the_check_is_killed(tmp_path, signal_number):
    """Only the main process is killed (an IDE stopping a run, the OOM killer): its workers, each
    waiting on a pipe it also holds, must not wait for ever."""
    import subprocess
    import sys
    from pathlib import Path

    bench = str(Path(__file__).resolve().parents[2] / "bench")
    sys.path.insert(0, bench)
    try:
        import framework_corpus
    finally:
        sys.path.remove(bench)
    framework_corpus.generate(tmp_path)
    check = subprocess.Popen(
        [sys.executable, "-m", "compile_ad_lint", "check", ".", "--jobs", "2", "--no-cache"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while len(workers) < 2 and check.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
            workers = _children(check.pid)
        assert len(workers) == 2, "the check started no workers"
        check.send_signal(signal_number)
        check.wait(30)
        deadline = time.monotonic() + 15
        while any(_running(worker) for worker in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_running(worker) for worker in workers), "a worker outlived the check"
    finally:
        if check.poll() is None:
            check.kill()
        for worker in workers:
            if _running(worker):
                os.kill(worker, 9)


def test_a_worker_freezes_what_it_inherits(pool):
    """A worker's full collections skip the objects it started with (the parent's, by fork: after a
    ``--diff``'s fixes, their LibCST trees), which are never garbage of its own work."""
    assert all(frozen > 0 for _, frozen in pool.run(_frozen, ["a.py", "b.py"], [1.0, 1.0]))
