"""``--format github``: GitHub Actions workflow annotations, parsed back the way the runner does."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from compile_ad_lint import Finding, Location, RelatedLocation, Severity
from compile_ad_lint.api import Report, Stats
from compile_ad_lint.output import FORMATS
from compile_ad_lint.output.github import escape_data, escape_property, format_finding, render
from compile_ad_lint.rules import RULES_BY_CODE

BIN = Path(sys.executable).parent
COMMAND = re.compile(r"^::(?P<command>error|warning|notice) (?P<properties>[^:]*)::(?P<message>.*)$")

PROJECT = {
    "pkg/__init__.py": "",
    "pkg/models.py": """
        import torch

        fast = torch.compile(lambda x: torch.sin(x) * x)
    """,
    "pkg/train.py": """
        import torch
        import torch.autograd.forward_ad as fwAD

        from pkg.models import fast


        def jvp(x, t):
            with fwAD.dual_level():
                return fwAD.unpack_dual(fast(fwAD.make_dual(x, t))).tangent


        def config_bad():
            torch._functorch.config.backward_pass_autocast = "sometimes"
    """,
    "odd,name:here.py": """
        import torch._functorch.config as fc

        fc.backward_pass_autocast = "typo"
    """,
}


def _unescape_data(value: str) -> str:
    return value.replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%")


def _unescape_property(value: str) -> str:
    return _unescape_data(value.replace("%3A", ":").replace("%2C", ","))


def parse_annotation(line: str) -> tuple[str, dict[str, str], str]:
    """Split a workflow command like the Actions runner: properties split on ',' then the first '='."""
    match = COMMAND.match(line)
    assert match, f"not a workflow command: {line!r}"
    properties = {}
    for item in match["properties"].split(","):
        key, _, value = item.partition("=")
        properties[key] = _unescape_property(value)
    return match["command"], properties, _unescape_data(match["message"])


def test_format_is_registered():
    assert "github" in FORMATS


def test_escaping_rules():
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a,b:c%\n") == "a%2Cb%3Ac%25%0A"
    assert escape_data("a,b:c") == "a,b:c"  # ',' and ':' are only special in properties


def test_cli_annotations_match_the_json_report(tmp_path: Path):
    project = tmp_path / "demo"
    for relative, source in PROJECT.items():
        path = project / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")

    def run(fmt: str) -> tuple[int, str]:
        completed = subprocess.run(
            [str(BIN / "compile-ad-lint"), "check", "--no-cache", "--format", fmt, "."],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=300,
        )
        return completed.returncode, completed.stdout

    rc, output = run("github")
    assert rc == 1
    findings = json.loads(run("json")[1])["findings"]
    lines = output.splitlines()
    assert len(lines) == len(findings) == 3
    for line, finding in zip(lines, findings):
        command, properties, message = parse_annotation(line)
        assert command == "error"
        assert properties == {
            "file": finding["path"],
            "line": str(finding["line"]),
            "col": str(finding["column"]),
            "endLine": str(finding["end_line"]),
            "endColumn": str(finding["end_column"]),
            "title": f"{finding['code']} {RULES_BY_CODE[finding['code']].name}",
        }
        first, *rest = message.split("\n")
        assert first == finding["message"]
        details, related = rest[: len(finding["details"])], rest[len(finding["details"]) :]
        assert details == [f"  {detail}" for detail in finding["details"]]
        assert related == [f"  {r['path']}:{r['line']}:{r['column']}: {r['message']}" for r in finding["related"]]
    assert any(parse_annotation(line)[1]["file"] == "odd,name:here.py" for line in lines)


def test_clean_run_prints_nothing(tmp_path: Path):
    (tmp_path / "ok.py").write_text("x = 1\n")
    completed = subprocess.run(
        [str(BIN / "compile-ad-lint"), "check", "--no-cache", "--format", "github", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (completed.returncode, completed.stdout) == (0, "")


@pytest.mark.parametrize(("severity", "command"), [(Severity.ERROR, "error"), (Severity.WARNING, "warning")])
def test_severity_and_escaping_in_a_constructed_finding(severity: Severity, command: str):
    finding = Finding(
        "CAL001",
        "50% of tangents:\ngone",
        severity,
        Location("dir\\a,b:c.py" if sys.platform == "win32" else "dir/a,b:c.py", 4, 2, 5, 7),
        (RelatedLocation(Location("m.py", 1, 1, 1, 2), "compiled here"),),
    )
    line = format_finding(finding)
    assert line == (
        f"::{command} file=dir/a%2Cb%3Ac.py,line=4,col=2,endLine=5,endColumn=7,"
        # The message's own newline came from checked code: shown as ``\n``; only the separator
        # before a related location is a real (%-encoded) newline.
        "title=CAL001 compiled-callable-in-dual-level::50%25 of tangents:\\ngone%0A  m.py:1:1: compiled here"
    )
    assert render(Report((finding, finding), Stats(1, 1, 0, 0.0))) == f"{line}\n{line}\n"
    assert "\n" not in line
