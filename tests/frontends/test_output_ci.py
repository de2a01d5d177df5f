"""The formats CI systems read, through the real CLI: GitLab Code Quality (``--format gitlab``) and
JUnit XML (``--format junit``); and rule links (SARIF ``helpUri``, ``explain``) under the configured
``rule-docs-url``."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from compile_ad_lint.core.settings import DEFAULT_RULE_DOCS_URL, REPOSITORY_URL
from compile_ad_lint.output.escape import printable
from compile_ad_lint.testing import write_files

from .test_cli_contract import BAD_CONFIG, HAZARD, cli

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

FORGED = (
    'import torch._functorch.config as fc\n\nfc.backward_pass_autocast = "x\\nfake.py:1:1: CAL000 forged\\x1b[2J"\n'
)


def _notebook(*lines: str) -> str:
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": list(lines)}
    markdown = {"cell_type": "markdown", "metadata": {}, "source": ["# notes\n"]}
    document = {"cells": [markdown, cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(document, indent=1) + "\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_files(
        tmp_path / "proj",
        {
            "pyproject.toml": "[tool.compile-ad-lint]\n",
            "hazard.py": HAZARD,
            "pkg/config.py": BAD_CONFIG,
            "forged.py": FORGED,
            "explore.ipynb": _notebook(*HAZARD.splitlines(keepends=True)),
        },
    )


def _json(project: Path, *args: str) -> list[dict]:
    return json.loads(cli(project, "check", ".", "--no-cache", "--format", "json", *args).stdout)["findings"]


def test_gitlab_code_quality(project: Path):
    completed = cli(project, "check", ".", "--no-cache", "--format", "gitlab")
    assert completed.returncode == 1, completed.stderr
    issues = json.loads(completed.stdout)
    findings = _json(project)
    assert isinstance(issues, list) and len(issues) == len(findings) == 4
    assert len({issue["fingerprint"] for issue in issues}) == len(issues)  # unique per finding
    raw_notebook = (project / "explore.ipynb").read_text().splitlines()
    for issue, finding in zip(issues, findings):
        assert issue["check_name"] == finding["code"]
        assert issue["description"].startswith(f"{finding['code']}: ")
        assert issue["severity"] in ("info", "minor", "major", "critical", "blocker")
        assert isinstance(issue["fingerprint"], str) and issue["fingerprint"]
        location = issue["location"]
        assert location["path"] == finding["path"] and not location["path"].startswith("/")
        begin = location["lines"]["begin"]
        assert isinstance(begin, int) and location["lines"]["end"] >= begin
        if finding["cell"] is None:
            assert begin == finding["line"]
            assert issue["description"] == f"{finding['code']}: {printable(finding['message'])}"
        else:  # the cell's text in the .ipynb file
            assert "fwAD.make_dual" in raw_notebook[begin - 1]
            assert issue["description"].startswith(f"{finding['code']}: cell 2:{finding['line']}:")
    forged = next(issue for issue in issues if issue["location"]["path"] == "forged.py")
    assert "\n" not in forged["description"] and "\x1b" not in forged["description"]


def test_gitlab_paths_are_relative_to_the_ci_project_dir(project: Path):
    issues = json.loads(
        cli(
            project, "check", ".", "--no-cache", "--format", "gitlab", env={"CI_PROJECT_DIR": str(project.parent)}
        ).stdout
    )
    assert {issue["location"]["path"] for issue in issues} == {
        "proj/hazard.py",
        "proj/pkg/config.py",
        "proj/forged.py",
        "proj/explore.ipynb",
    }


def test_junit_xml(project: Path):
    completed = cli(project, "check", ".", "--no-cache", "--format", "junit")
    assert completed.returncode == 1, completed.stderr
    assert completed.stdout.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    root = ElementTree.fromstring(completed.stdout.encode("utf-8"))
    findings = _json(project)
    assert root.tag == "testsuites" and root.get("tests") == root.get("failures") == str(len(findings))
    cases = root.findall("testsuite/testcase")
    assert len(cases) == len(findings)
    by_suite = {suite.get("name"): len(suite.findall("testcase")) for suite in root.findall("testsuite")}
    assert by_suite == {"explore.ipynb": 1, "forged.py": 1, "hazard.py": 1, "pkg/config.py": 1}
    for suite in root.findall("testsuite"):
        assert suite.get("tests") == suite.get("failures") == str(len(suite.findall("testcase")))
    for case in cases:
        finding = next(
            f
            for f in findings
            if f"compile-ad-lint.{f['code']}" == case.get("name") and f["path"] == _suite_of(root, case)
        )
        assert case.get("line") == str(finding["line"]) and case.get("column") == str(finding["column"])
        failure = case.find("failure")
        assert failure is not None and failure.text
        if finding["path"] != "forged.py":
            assert failure.get("message") == finding["message"]
    forged = next(case for case in cases if _suite_of(root, case) == "forged.py").find("failure")
    assert forged is not None and "\x1b" not in forged.get("message", "") and "\n" not in forged.get("message", "")


def _suite_of(root: ElementTree.Element, case: ElementTree.Element) -> str:
    return next(suite.get("name") for suite in root.findall("testsuite") if case in list(suite))  # type: ignore[return-value]


def test_junit_without_findings_is_one_passing_test(tmp_path: Path):
    project = write_files(tmp_path, {"ok.py": "import torch\n\nx = torch.ones(2)\n"})
    completed = cli(project, "check", ".", "--no-cache", "--format", "junit")
    assert completed.returncode == 0
    root = ElementTree.fromstring(completed.stdout.encode("utf-8"))
    assert root.get("tests") == "1" and root.get("failures") == "0"
    [case] = root.findall("testsuite/testcase")
    assert case.find("failure") is None


# -- rule links -------------------------------------------------------------------------------------


def test_rule_links_follow_the_configured_docs_url(project: Path):
    default = json.loads(cli(project, "check", "hazard.py", "--no-cache", "--format", "sarif").stdout)
    rules = default["runs"][0]["tool"]["driver"]["rules"]
    assert {rule["helpUri"] for rule in rules} == {f"{DEFAULT_RULE_DOCS_URL}{rule['id']}.md" for rule in rules}
    (project / "pyproject.toml").write_text('[tool.compile-ad-lint]\nrule-docs-url = "https://docs.example.org/cal"\n')
    mirrored = json.loads(cli(project, "check", "hazard.py", "--no-cache", "--format", "sarif").stdout)
    rules = mirrored["runs"][0]["tool"]["driver"]["rules"]
    assert {rule["helpUri"] for rule in rules} == {f"https://docs.example.org/cal/{rule['id']}.md" for rule in rules}
    explained = cli(project, "explain", "CAL002")
    assert explained.returncode == 0
    assert explained.stdout.rstrip().endswith(
        "This page: https://docs.example.org/cal/CAL002.md (docs/rules/CAL002.md in the source tree)."
    )
    (project / "pyproject.toml").write_text('[tool.compile-ad-lint]\nrule-docs-url = "docs/rules"\n')
    bad = cli(project, "check", "hazard.py")
    assert bad.returncode == 2 and "rule-docs-url: expected an http(s):// or file:// URL" in bad.stderr


def test_the_default_docs_url_is_the_repository_docs_folder():
    root = Path(__file__).resolve().parents[2]
    urls = tomllib.loads((root / "pyproject.toml").read_text())["project"]["urls"]
    assert urls["Repository"] == REPOSITORY_URL
    assert DEFAULT_RULE_DOCS_URL == f"{REPOSITORY_URL}/blob/main/docs/rules/"
    assert all((root / "docs" / "rules" / f"{code}.md").is_file() for code in ("CAL001", "CAL900"))
