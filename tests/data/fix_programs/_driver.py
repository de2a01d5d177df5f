"""Runs fix programs in one process (so torch is imported and warmed up once) and prints results.

Usage: python _driver.py JOBS.json RESULTS.json, where each job is
``{"label": ..., "dir": ..., "config": null | "off" | "same_as_forward" | [[device, dtype], ...]}``.
Each job imports ``main`` from its ``dir`` afresh (after ``torch._dynamo.reset()``, with the
functorch config back at its default) and calls ``run()``; with ``config``, ``run()`` runs inside
``torch._functorch.config.patch(backward_pass_autocast=config)`` (the matching-config run). The
result is the tensors ``run()`` returned (``None`` kept: a dropped tangent) or the error it raised.
"""

import importlib
import json
import os
import sys
import traceback

import torch
import torch._dynamo
import torch._functorch.config as functorch_config

DEFAULT = functorch_config.backward_pass_autocast


def _value(tensor):
    if tensor is None:
        return None
    return [float(v) for v in tensor.detach().double().flatten().tolist()]


def _config(spec):
    if isinstance(spec, str):
        return spec
    return [{"device_type": device, "dtype": getattr(torch, dtype)} for device, dtype in spec]


def _forget(directory):
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if path and os.path.dirname(os.path.abspath(path)) == directory:
            del sys.modules[name]


def main(jobs_path, results_path):
    with open(jobs_path) as handle:
        jobs = json.load(handle)
    results = {}
    for job in jobs:
        directory = os.path.abspath(job["dir"])
        torch._dynamo.reset()
        functorch_config.backward_pass_autocast = DEFAULT
        sys.path.insert(0, directory)
        try:
            module = importlib.import_module("main")  # module-level config writes run here
            if job.get("config") is not None:
                with functorch_config.patch(backward_pass_autocast=_config(job["config"])):
                    out = module.run()
            else:
                out = module.run()
            results[job["label"]] = {"values": {key: _value(value) for key, value in out.items()}}
        except Exception as error:
            results[job["label"]] = {
                "error": type(error).__name__,
                "detail": "".join(traceback.format_exception_only(error))[:600],
            }
        finally:
            sys.path.remove(directory)
            _forget(directory)
            functorch_config.backward_pass_autocast = DEFAULT
    with open(results_path, "w") as handle:
        json.dump(results, handle)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
