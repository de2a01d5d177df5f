"""What findings say, through the real CLI: a backend the analysis cannot evaluate is never shown
as if it were a string named ``<unknown>``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from frontends.test_cli_contract import cli

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


def test_an_undecodable_file_is_reported_at_the_bad_byte(tmp_path: Path):
    files: dict[str, str | bytes] = {
        "pyproject.toml": "[tool.compile-ad-lint]\n",
        "late.py": b"import torch\n\n\ndef f(x):\n    s = 'caf\xe9'\n    x.backward()\n",
        "crlf.py": b"x.backward()\r\ns = '\xc3\x28'\r\n",
        "bom.py": b"\xef\xbb\xbfs = '\xff'\nx.backward()\n",
        "cookie.py": b"# -*- coding: utf-8 -*-\nx.backward()\ns = '\xff\xfe'\n",
    }
    project = write_files(tmp_path, files)
    completed = cli(project, "check", ".", "--no-cache", "--concise")
    lines = sorted(line for line in completed.stdout.splitlines() if "CAL900" in line)
    assert lines == [
        "bom.py:1:6: CAL900 cannot decode: byte 0xff is not valid utf-8 (invalid start byte)",
        "cookie.py:3:6: CAL900 cannot decode: byte 0xff is not valid utf-8 (invalid start byte)",
        "crlf.py:2:6: CAL900 cannot decode: byte 0xc3 is not valid utf-8 (invalid continuation byte)",
        "late.py:5:13: CAL900 cannot decode: byte 0xe9 is not valid utf-8 (invalid continuation byte)",
    ], completed.stdout


# -- headlines: one sentence a person reads at a glance ----------------------------------------------

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _fixture_findings(target: str | None = None):  # type: ignore[no-untyped-def]
    from compile_ad_lint import Config
    from compile_ad_lint.api import Analyzer
    from compile_ad_lint.target import with_target

    config = Config() if target is None else with_target(Config(), setting=target)
    return Analyzer(config, use_cache=False, jobs=1).check([str(FIXTURES)]).findings


@pytest.mark.parametrize("target", [None, ">=2.14"], ids=["installed-torch", "torch-2.14-on"])
def test_every_headline_is_one_short_sentence(target):
    import re

    from compile_ad_lint.core.findings import HEADLINE_LIMIT

    findings = list(_fixture_findings(target))
    codes = {"CAL001", "CAL002", "CAL003", "CAL004", "CAL005", "CAL900"} | ({"CAL006"} if target else set())
    assert codes <= {f.code for f in findings}
    for finding in findings:
        message = finding.message
        assert len(message) <= HEADLINE_LIMIT, (len(message), message)
        assert not re.search(r"[.!?]\s+[A-Z`\"'(]", message), message  # one sentence
        assert not message.endswith("."), message
        assert not re.search(r"\bline \d", message), message  # positions are locations, never text
    # What the headline leaves out is in the details (the consequence and the fix, as sentences).
    cal002 = next(f for f in findings if f.code == "CAL002")
    assert any(detail.startswith("To restore eager semantics") for detail in cal002.details), cal002.details


def test_flake8_and_the_text_report_show_the_same_headline(tmp_path: Path):
    import subprocess
    import sys

    files = {name: (FIXTURES / name).read_text() for name in ("cal005_aux_heads.py", "cal004_gradient_penalty.py")}
    project = write_files(tmp_path, {"pyproject.toml": "[tool.compile-ad-lint]\n", **files})
    document = json.loads(cli(project, "check", ".", "--no-cache", "--format", "json").stdout)
    expected = {(f["path"], f["line"], f"{f['code']} {f['message']}") for f in document["findings"]}
    assert {"CAL004", "CAL005"} <= {f["code"] for f in document["findings"]}
    flake8 = subprocess.run(
        [str(Path(sys.executable).parent / "flake8"), "--select", "CAL", *files],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    shown = {
        (line.split(":")[0], int(line.split(":")[1]), line.split(": ", 1)[1]) for line in flake8.stdout.splitlines()
    }
    assert shown == expected, flake8.stdout
    assert all(len(text.split(" ", 1)[1]) <= 120 for *_, text in shown)


ONE_OF_TWO_AUTOCASTS = """\
import argparse
from contextlib import nullcontext

import torch


def get_autocast_context(precision):
    if precision == "float16":
        return torch.autocast("cuda", dtype=torch.float16)
    elif precision == "bfloat16":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return nullcontext()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--precision", default="float16")
    args = parser.parse_args()
    model = torch.compile(torch.nn.Linear(4, 4))
    x = torch.randn(2, 4)
    with get_autocast_context(args.precision):
        loss = model(x).sum()
    loss.backward()
    with torch.autocast("cuda", dtype=torch.float16):
        # Traced for float16 or bfloat16 autocast, as the config says: no finding claims either.
        model(x).sum().backward()


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize(
    ("helper", "said"),
    [
        (ONE_OF_TWO_AUTOCASTS, "autocast on (cuda)"),
        # The near miss: a helper with one autocast names its dtype.
        (ONE_OF_TWO_AUTOCASTS.replace("torch.bfloat16", "torch.float16"), "autocast on (cuda, float16)"),
    ],
    ids=["float16-or-bfloat16", "float16-only"],
)
def test_a_with_over_one_of_several_autocasts_names_no_dtype_they_do_not_share(tmp_path: Path, helper, said):
    """``with get_autocast_context(precision):`` (NVIDIA/physicsnemo's transformer trainer) enters
    float16 or bfloat16 autocast by the run's config: the forward's dtype is unknown, so the backward
    outside it is flagged without naming a dtype, and one under float16 autocast is not flagged."""
    from compile_ad_lint import Config
    from compile_ad_lint.api import Analyzer

    write_files(tmp_path, {"train.py": helper})
    findings = Analyzer(Config(), use_cache=False, jobs=1).check([str(tmp_path)]).findings
    cal002 = [f for f in findings if f.code == "CAL002"]
    assert [f.location.line for f in cal002] == [23], [(f.location.line, f.message) for f in cal002]
    texts = [cal002[0].message, *cal002[0].details, *(r.message for r in cal002[0].related)]
    assert said in cal002[0].message
    if "torch.bfloat16" in helper:
        assert not any("float16" in text for text in texts), texts
