"""Text from the checked code never reaches a report raw: no forged lines, no terminal escapes.

The fixture's string literals (an autocast device, a backend name, a ``backward_pass_autocast``
value) hold a newline followed by a line that looks like a finding, ANSI escape sequences and a
bidi override. They end up in CAL002 messages and their related locations, and in CAL003 messages; the text, GitHub and flake8 outputs must show them escaped, on the finding's own line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from compile_ad_lint.output.escape import printable

from .test_flake8_plugin import FLAKE8_LINE, run_flake8
from .test_output_github import COMMAND, _unescape_data

FORGED = "fake.py:1:1: CAL000 forged"
FIXTURE = r"""import torch
from torch import nn

model = torch.compile(nn.Linear(4, 4), backend="eager\u202e\nfake.py:1:1: CAL000 forged")


def train_step(x):
    with torch.autocast("cpu\nfake.py:1:1: CAL000 forged\x1b[2J\u202e", dtype=torch.bfloat16):
        loss = model(x).sum()
    loss.backward()


def backward_under_autocast(x):
    loss = model(x).sum()
    with torch.autocast("cuda\r\nfake.py:1:1: CAL000 forged\x1b]0;title\x07"):
        loss.backward()


def config_bad():
    torch._functorch.config.backward_pass_autocast = "x\nfake.py:1:1: CAL000 forged\x1b[2J"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.compile-ad-lint]\n", encoding="utf-8")
    (tmp_path / "train.py").write_text(FIXTURE, encoding="utf-8")
    return tmp_path


def _check(project: Path, fmt: str, *extra: str) -> str:
    completed = subprocess.run(
        [sys.executable, "-m", "compile_ad_lint", "check", "--no-cache", "--format", fmt, *extra, "."],
        cwd=project,
        capture_output=True,
        timeout=300,
    )
    assert completed.returncode == 1, completed.stderr
    return completed.stdout.decode("utf-8")


def _assert_clean(lines: list[str]) -> None:
    for line in lines:
        assert not line.lstrip().startswith("fake.py"), line
        assert "\x1b" not in line and "\x07" not in line and "\u202e" not in line, repr(line)


def test_every_literal_reaches_a_message(project: Path):
    """The structured JSON report keeps the raw text; it is what the other outputs must escape."""
    findings = json.loads(_check(project, "json"))["findings"]
    assert sorted(f["code"] for f in findings) == ["CAL002", "CAL002", "CAL003"]
    texts = [f["message"] for f in findings] + [r["message"] for f in findings for r in f["related"]]
    texts += [detail for f in findings for detail in f["details"]]
    assert any("cpu\nfake.py:1:1: CAL000 forged\x1b[2J\u202e" in text for text in texts)
    assert any("cuda\r\nfake.py" in text for text in texts)
    assert any(r"backend='eager\u202e\nfake.py" in text for text in texts)  # the rule quotes backends with repr


@pytest.mark.parametrize("layout", ["chain", "concise"])
def test_text_output(project: Path, layout: str):
    output = _check(project, "text", *(["--concise"] if layout == "concise" else []))
    assert "\r" not in output
    lines = output.splitlines()
    _assert_clean(lines)
    findings = [line for line in lines[:-1] if not line.startswith("    ") and ": CAL" in line]  # chains are indented
    assert (
        len(findings) == 3
        and all(line.startswith("train.py:") for line in findings)
        and lines[-1].startswith("Found 3 findings")
    )
    if layout == "concise":
        assert findings == [line for line in lines[:-1] if not line.endswith("fixable with `--fix`.")]
        # The headline may be cut to 120 characters: the literal's start reaches it, escaped.
        assert r"(cpu\nfake.py:1:1: CAL000 forged" in output
    else:
        assert r"(cpu\nfake.py:1:1: CAL000 forged\x1b[2J\u202e, bfloat16)" in output
    assert r'"x\nfake.py:1:1: CAL000 forged\x1b[2J"' in output  # CAL003 renders the value as source, escaped once


def test_github_output(project: Path):
    output = _check(project, "github")
    assert "\r" not in output
    lines = output.splitlines()
    assert len(lines) == 3
    _assert_clean(lines)
    chains = 0
    for line in lines:
        match = COMMAND.match(line)
        assert match, line
        # What the runner shows once it decodes the command: still no forged or raw line.
        first, *related = _unescape_data(match["message"]).split("\n")
        _assert_clean([first, *related])
        assert all(item.startswith("  ") for item in related)  # the details, then the chain
        chains += sum(item.startswith("  train.py:") for item in related)
    assert chains
    assert r"cuda\r\nfake.py:1:1: CAL000 forged\x1b]0;title\x07" in output


def test_flake8_output(project: Path):
    rc, found, output = run_flake8(project, "train.py")
    assert rc == 1
    assert {code for *_, code in found} == {"CAL002", "CAL003"}
    assert {path for path, *_ in found} == {"train.py"}
    _assert_clean(output.splitlines())
    assert all(FLAKE8_LINE.match(line) for line in output.splitlines())
    assert r"(cpu\nfake.py:1:1: CAL000 forged" in output  # in the headline (cut to 120 characters), escaped


def test_sarif_message_text_is_escaped_and_stays_json(project: Path):
    run = json.loads(_check(project, "sarif"))["runs"][0]
    texts = [r["message"]["text"] for r in run["results"]]
    texts += [loc["message"]["text"] for r in run["results"] for loc in r.get("relatedLocations", ())]
    assert all(text == printable(text) for text in texts)
    assert any(r"cpu\nfake.py:1:1: CAL000 forged\x1b[2J\u202e" in text for text in texts)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("a\nb\rc\td", r"a\nb\rc\td"),
        ("\x00\x1b[2J\x7f", r"\x00\x1b[2J\x7f"),
        ("\x85\x9b31m", r"\x85\x9b31m"),  # C1 controls: NEL, CSI
        ("".join(map(chr, range(0x202A, 0x202F))), r"\u202a\u202b\u202c\u202d\u202e"),
        ("".join(map(chr, range(0x2066, 0x206A))), r"\u2066\u2067\u2068\u2069"),
        ("\u2028\u2029", r"\u2028\u2029"),  # splitlines() breaks lines there
        ("bad\udcffname.py", r"bad\udcffname.py"),  # an undecodable byte in a file name
        (r"C:\dir\'it's'", r"C:\dir\'it's'"),  # backslashes and quotes stay
        ("größe 😋 é", "größe 😋 é"),
    ],
)
def test_printable(raw: str, shown: str):
    assert printable(raw) == shown
