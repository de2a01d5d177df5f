"""An analysis is bounded in what its walks cost, not only in how many there are: a call graph
whose values grow at every call stops with CAL900 "analysis incomplete" in seconds (it took
minutes and gigabytes when each walk counted for one). Through the real CLI."""

from __future__ import annotations

import itertools
import subprocess
import sys
import time
from pathlib import Path

import pytest
from robustness_helpers import write

FUNCTIONS = 30


def _growing_call_graph() -> str:
    """30 functions each calling all the others, every call with a value larger than it was given
    (a compiled call's output, a dict around the other argument); 1,838 lines."""
    lines = ["import torch", "", "step = torch.compile(torch.sin)", ""]
    for i in range(FUNCTIONS):
        lines.append(f"def f{i}(x, y):")
        for j in range(FUNCTIONS):
            if j != i:
                lines += [f"    x = f{j}(y, step(x))", f"    y = f{j}(x, {{'a': y}})"]
        lines += ["    return step(x)", ""]
    lines += [
        "def train(x):",
        "    with torch.autocast('cpu'):",
        "        loss = f0(x, x).sum()",
        "    loss.backward()",
    ]
    return "\n".join(lines) + "\n"


#: The CLI, reporting the CPU seconds and the peak memory (kilobytes) of its process. The peak is
#: VmHWM, its own since exec: ``ru_maxrss`` keeps the peak of the process it was forked from (pytest's).
_MEASURED_CLI = """
import re, resource, sys
from compile_ad_lint.cli import main
code = main(sys.argv[1:])
usage = resource.getrusage(resource.RUSAGE_SELF)
with open("/proc/self/status") as status:
    peak = re.search(r"VmHWM:\\s*(\\d+)", status.read()).group(1)
print(f"usage {usage.ru_utime + usage.ru_stime} {peak}", file=sys.stderr)
sys.exit(code)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="reads the process's resource usage from /proc")
def test_a_call_graph_whose_values_grow_stops_in_seconds(tmp_path: Path) -> None:
    write(tmp_path, {"graph.py": _growing_call_graph()})
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-c", _MEASURED_CLI, "check", "graph.py", "--no-cache", "--jobs", "1"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=180,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"not done in {time.perf_counter() - started:.0f} s")
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    starts = [i for i, line in enumerate(lines) if "CAL900 analysis incomplete" in line]
    assert starts, done.stdout[-2000:]
    # The headline, then its details as indented notes.
    block = [lines[starts[0]], *itertools.takewhile(lambda line: line.startswith(" "), lines[starts[0] + 1 :])]
    assert "counted for the data the walks carried" in "\n".join(block), done.stdout[-2000:]
    cpu, peak = done.stderr.split("usage ")[-1].split()
    assert float(cpu) < 30, f"{float(cpu):.1f} s of CPU"
    assert int(peak) < 400 * 1024, f"{int(peak) // 1024} MB"
