"""The CUDA path of ``compile-ad-lint confirm -- COMMAND``, in one script for a machine with a GPU.

It copies two of the real-shaped projects under ``tests/data/confirm_projects`` to a scratch folder
and runs each through ``compile-ad-lint confirm`` on CUDA, under ``torch.autocast("cuda", ...)``
in bf16 and in fp16 (where the projects' GradScaler is enabled):

* ``gpt_script``: nanoGPT's shape (``--device=cuda --dtype=bfloat16|float16``, GradScaler for fp16);
* ``torchrun_project``: DDP under ``torchrun --standalone --nproc-per-node 1`` (nccl on a GPU,
  ``--amp-dtype bfloat16|float16``, GradScaler for fp16).

Usage (from the repository root, in the environment the tests use)::

    python bench/cuda_confirm.py [--out DIR] [--steps N]

It prints one line per finding and run (site, verdict, source, device, torch, measured difference,
seconds) and writes each run's JSON report and a ``summary.json`` to ``--out`` (default: a scratch
folder it names). Expect about 1-3 minutes per run (one compile of the model in the run, two for
the replays). Without a GPU it exits 2 at once.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROJECTS = ROOT / "tests" / "data" / "confirm_projects"
BIN = Path(sys.executable).parent


def _runs(steps: int) -> list[tuple[str, str, list[str]]]:
    torchrun = str(BIN / "torchrun") if (BIN / "torchrun").exists() else "torchrun"
    runs = []
    for dtype in ("bfloat16", "float16"):
        gpt = [sys.executable, "train.py", "config/train_tiny.py", "--device=cuda", f"--dtype={dtype}"]
        runs.append((f"gpt_script {dtype}", "gpt_script", [*gpt, f"--max_iters={steps}"]))
        ddp = [torchrun, "--standalone", "--nproc-per-node", "1", "train_ddp.py", "--data", "data/series.csv"]
        runs.append(
            (f"torchrun_project {dtype}", "torchrun_project", [*ddp, "--amp-dtype", dtype, "--steps", str(steps)])
        )
    return runs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="where the reports go (default: a scratch folder)")
    parser.add_argument("--steps", type=int, default=20, help="training steps each command is given (default: 20)")
    parser.add_argument("--max-seconds", default="600", help="confirm's --max-seconds per run (default: 600)")
    args = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("cuda_confirm: no CUDA device: nothing to run", file=sys.stderr)
        return 2
    out = args.out or Path(tempfile.mkdtemp(prefix="cuda-confirm-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}; reports in {out}", flush=True)
    summary = []
    for label, name, command in _runs(args.steps):
        work = Path(tempfile.mkdtemp(prefix="cuda-confirm-project-")) / name
        shutil.copytree(PROJECTS / name, work)
        report = out / f"{label.replace(' ', '-')}.json"
        confirm = [sys.executable, "-m", "compile_ad_lint", "confirm", ".", "--no-cache", "--quiet"]
        confirm += ["--format", "json", "-o", str(report), "--max-seconds", args.max_seconds, "--", *command]
        started = time.monotonic()
        completed = subprocess.run(confirm, cwd=work, env=dict(os.environ), capture_output=True, text=True)
        seconds = time.monotonic() - started
        if completed.returncode not in (0, 1) or not report.exists():
            print(f"{label}: confirm exited {completed.returncode}: {completed.stderr[-2000:]}", flush=True)
            summary.append({"run": label, "exit": completed.returncode, "seconds": round(seconds, 1)})
            continue
        for finding in json.loads(report.read_text())["findings"]:
            for device, result in (finding["confirm"] or {}).items():
                row = {
                    "run": label,
                    "site": f"{finding['path']}:{finding['line']} {finding['code']}",
                    "verdict": result["verdict"],
                    "source": result["source"],
                    "device": device,
                    "torch": result["torch"],
                    "difference": result["difference"],
                    "seconds": round(seconds, 1),
                }
                summary.append(row)
                print(
                    f"{label:26s} {row['site']:34s} {row['verdict']:15s} {row['source']:15s} {device:5s} "
                    f"diff={row['difference']} {row['seconds']} s",
                    flush=True,
                )
        shutil.rmtree(work.parent, ignore_errors=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
