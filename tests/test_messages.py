"""What findings say, through the real CLI: a backend the analysis cannot evaluate is never shown
as if it were a string named ``<unknown>``."""

from __future__ import annotations

import json
from pathlib import Path

from test_cli_contract import cli

from compile_ad_lint.testing import write_files

UNKNOWN_BACKENDS = """\
import os

import torch
from accelerate import Accelerator
from accelerate.utils import TorchDynamoPlugin

model = torch.nn.Linear(4, 4)
compiled = torch.compile(model, backend=os.environ["BACKEND"])


def train(x):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = compiled(x).sum()
    loss.backward()


def penalty(x):
    y = compiled(x).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    g.sum().backward()


def accelerated(x):
    accelerator = Accelerator(dynamo_plugin=TorchDynamoPlugin())
    net = accelerator.prepare(torch.nn.Linear(4, 4))
    (g,) = torch.autograd.grad(net(x).sum(), x, create_graph=True)
    g.sum().backward()
"""


def test_an_unknown_backend_is_not_shown_as_a_string(tmp_path: Path):
    project = write_files(tmp_path, {"pyproject.toml": "[tool.compile-ad-lint]\n", "train.py": UNKNOWN_BACKENDS})
    text = cli(project, "check", "train.py", "--no-cache")
    assert text.returncode == 1, text.stderr
    assert "CAL002" in text.stdout and "CAL004" in text.stdout
    assert "<unknown>" not in text.stdout, text.stdout
    assert text.stdout.count("compiled here (torch.compile, an unknown backend)") == 2, text.stdout
    assert "(a dynamo backend from the environment), an unknown backend)" in text.stdout, text.stdout
    document = json.loads(cli(project, "check", "train.py", "--no-cache", "--format", "json").stdout)
    messages = [f["message"] for f in document["findings"]]
    messages += [r["message"] for f in document["findings"] for r in f["related"]]
    assert messages and not any("'<unknown>'" in message for message in messages), messages
