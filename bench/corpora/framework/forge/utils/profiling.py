"""forge: the torch profiler around a few steps.

Module utils/profiling.py.
"""

import contextlib

import torch


@contextlib.contextmanager
def maybe_profile(enabled, folder, wait=1, warmup=1, active=3):
    if not enabled:
        yield None
        return
    schedule = torch.profiler.schedule(wait=wait, warmup=warmup, active=active)
    with torch.profiler.profile(schedule=schedule, on_trace_ready=torch.profiler.tensorboard_trace_handler(folder)) as profiler:
        yield profiler
