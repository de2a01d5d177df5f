"""Run ``_child.py`` in an isolated subprocess: own process group, temp cwd, no bytecode written, timeout.

Nothing here imports torch; the child does.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

CHILD = Path(__file__).with_name("_child.py")


@dataclass
class RunOutcome:
    """What one subprocess run produced. ``result`` is the child's result.json (None if it wrote none)."""

    directory: Path
    result: dict | None
    returncode: int | None
    timed_out: bool
    seconds: float
    stdout_lines: int = 0
    stderr_tail: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        if self.timed_out:
            return "timeout"
        if self.result is None:
            return "crashed"
        return self.result.get("status", "crashed")

    def output_summary(self) -> str:
        tail = " | ".join(line.strip() for line in self.stderr_tail[-3:] if line.strip())
        text = f"stdout {self.stdout_lines} lines"
        return f"{text}; stderr tail: {tail[:300]}" if tail else text

    def tensor(self, entry: dict) -> list[float]:
        from array import array

        data = array("d")
        with open(self.directory / "tensors.bin", "rb") as handle:
            handle.seek(entry["offset"])
            data.fromfile(handle, entry["count"])
        return list(data)


def child_environment(compiled: bool, inductor_cache: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYTHONSTARTUP", None)
    if compiled:
        env.pop("TORCHDYNAMO_DISABLE", None)
        env.pop("TORCH_COMPILE_DISABLE", None)
    else:
        env["TORCHDYNAMO_DISABLE"] = "1"
        env["TORCH_COMPILE_DISABLE"] = "1"
    # The matching-config run forces the config at read time; the AOTAutograd cache key would not see that.
    env["TORCHINDUCTOR_AUTOGRAD_CACHE"] = "0"
    env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    if inductor_cache is not None:
        env["TORCHINDUCTOR_CACHE_DIR"] = str(inductor_cache)
        env["TRITON_CACHE_DIR"] = str(inductor_cache / "triton")
    return env


def run_child(spec: dict, directory: Path, timeout: float, *, compiled: bool = True, inductor_cache: Path | None = None) -> RunOutcome:
    """Run the child with ``spec`` (``out`` is set to ``directory``); kill its whole process group on timeout."""
    directory.mkdir(parents=True, exist_ok=True)
    work = directory / "cwd"
    work.mkdir(exist_ok=True)
    spec = dict(spec, out=str(directory))
    spec_path = directory / "spec.json"
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    stdout_path, stderr_path = directory / "stdout.txt", directory / "stderr.txt"
    started = time.monotonic()
    timed_out = False
    with open(stdout_path, "wb") as stdout, open(stderr_path, "wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-B", str(CHILD), str(spec_path)],
            cwd=work,
            env=child_environment(compiled, inductor_cache),
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            _kill_group(process)
    seconds = time.monotonic() - started
    result = None
    result_path = directory / "result.json"
    if not timed_out and result_path.is_file():
        try:
            result = json.loads(result_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            result = None
    return RunOutcome(
        directory=directory,
        result=result,
        returncode=None if timed_out else process.returncode,
        timed_out=timed_out,
        seconds=seconds,
        stdout_lines=_count_lines(stdout_path),
        stderr_tail=_tail(stderr_path),
    )


def _kill_group(process: subprocess.Popen) -> None:
    """Kill the child's process group (compile workers and anything the user's code started)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not ignorable
        pass


def _count_lines(path: Path) -> int:
    try:
        with open(path, "rb") as handle:
            return sum(1 for _ in handle)
    except OSError:
        return 0


def _tail(path: Path, lines: int = 8) -> list[str]:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 8192))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return []
    noise = ("Failed to initialize NumPy", "_conversion_method_template")
    kept = [line for line in text.splitlines() if line.strip() and not any(n in line for n in noise)]
    return kept[-lines:]
