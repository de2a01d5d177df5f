"""``--format sarif``: valid SARIF 2.1.0 (official OASIS schema) in the shape GitHub code scanning reads.

``tests/data/sarif-schema-2.1.0.json`` is the OASIS SARIF 2.1.0 Errata 01 schema
(https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json),
as published in the oasis-tcs/sarif-spec repository (Schemata/, commit ffa72eb).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import jsonschema
import pytest

from compile_ad_lint import Finding, Location, RelatedLocation, Severity
from compile_ad_lint.api import Report, Stats
from compile_ad_lint.output import FORMATS
from compile_ad_lint.output.sarif import artifact_location, sarif_log
from compile_ad_lint.rules import ALL_RULES
from compile_ad_lint.testing import write_files

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8")
)
BIN = Path(sys.executable).parent

PROJECT = {
    "pyproject.toml": """
        [tool.compile-ad-lint]
    """,
    "pkg/__init__.py": "",
    "pkg/models.py": """
        import torch

        fast = torch.compile(lambda x: torch.sin(x) * x)
        net = torch.compile(torch.nn.Linear(4, 4))
    """,
    "pkg/train.py": """
        import torch
        import torch.autograd.forward_ad as fwAD

        from pkg.models import fast, net


        def jvp(x, t):
            with fwAD.dual_level():
                return fwAD.unpack_dual(fast(fwAD.make_dual(x, t))).tangent


        def step(x):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = net(x).float().mean()
            loss.backward()
    """,
    "sub dir/config é.py": """
        import torch._functorch.config as fc

        fc.backward_pass_autocast = {"device_type": "cpu"}
    """,
    "broken.py": """
        import torch

        def step(loss):
            loss.backward(
    """,
}


def write_project(root: Path, files: dict[str, str] = PROJECT) -> Path:
    return write_files(root, {relative: textwrap.dedent(source).lstrip("\n") for relative, source in files.items()})


def run_cli(cwd: Path, fmt: str, *paths: str) -> tuple[int, str]:
    completed = subprocess.run(
        [str(BIN / "compile-ad-lint"), "check", "--no-cache", "--format", fmt, *(paths or (".",))],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
    )
    assert completed.returncode in (0, 1), completed.stderr
    return completed.returncode, completed.stdout


def validate(document: dict) -> None:
    jsonschema.Draft4Validator.check_schema(SCHEMA)
    jsonschema.Draft4Validator(SCHEMA).validate(document)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "demo")


def test_format_is_registered():
    assert "sarif" in FORMATS


def test_cli_output_validates_against_the_sarif_schema(project: Path):
    rc, output = run_cli(project, "sarif")
    assert rc == 1
    document = json.loads(output)
    validate(document)
    assert document["version"] == "2.1.0"
    assert len(document["runs"]) == 1
    codes = {result["ruleId"] for result in document["runs"][0]["results"]}
    assert codes == {"CAL001", "CAL002", "CAL003", "CAL900"}


def test_clean_run_validates_too(tmp_path: Path):
    project = write_project(tmp_path / "clean", {"ok.py": "x = 1\n"})
    rc, output = run_cli(project, "sarif")
    assert rc == 0
    document = json.loads(output)
    validate(document)
    assert document["runs"][0]["results"] == []


def test_driver_describes_every_rule(project: Path):
    document = json.loads(run_cli(project, "sarif")[1])
    driver = document["runs"][0]["tool"]["driver"]
    assert driver["name"] == "compile-ad-lint"
    assert driver["version"]
    assert driver["informationUri"].startswith("https://")
    assert [rule["id"] for rule in driver["rules"]] == [rule.code for rule in ALL_RULES]
    for descriptor, rule in zip(driver["rules"], ALL_RULES):
        assert descriptor["name"] == rule.name
        assert descriptor["shortDescription"]["text"] == rule.summary
        assert descriptor["fullDescription"]["text"]
        assert descriptor["help"]["text"] == rule.documentation()
        assert descriptor["help"]["markdown"] == rule.documentation()
        assert descriptor["helpUri"] == rule.docs_url()
        assert descriptor["defaultConfiguration"]["level"] == rule.severity.value


def test_results_match_the_json_report(project: Path):
    sarif = json.loads(run_cli(project, "sarif")[1])
    findings = json.loads(run_cli(project, "json")[1])["findings"]
    run = sarif["runs"][0]
    results = run["results"]
    assert len(results) == len(findings)
    base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base == project.resolve().as_uri() + "/"
    rules = run["tool"]["driver"]["rules"]
    for result, finding in zip(results, findings):
        assert result["ruleId"] == finding["code"]
        assert rules[result["ruleIndex"]]["id"] == finding["code"]
        assert result["level"] == finding["severity"]
        # The headline, then the details (SARIF viewers show the whole text).
        assert (
            result["message"]["text"] == " ".join([finding["message"] + ".", *finding["details"]])
            if finding["details"]
            else finding["message"]
        )
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        artifact = physical["artifactLocation"]
        assert artifact["uriBaseId"] == "%SRCROOT%"
        assert "\\" not in artifact["uri"] and not artifact["uri"].startswith(("/", "file:"))
        assert _uri_to_path(artifact["uri"]) == finding["path"]
        assert physical["region"] == {
            "startLine": finding["line"],
            "startColumn": finding["column"],
            "endLine": finding["end_line"],
            "endColumn": finding["end_column"],
        }
        related = result.get("relatedLocations", [])
        assert [r["message"]["text"] for r in related] == [r["message"] for r in finding["related"]]
        assert len({r["id"] for r in related}) == len(related)
        for item, expected in zip(related, finding["related"]):
            region = item["physicalLocation"]["region"]
            assert (region["startLine"], region["startColumn"]) == (expected["line"], expected["column"])
            assert _uri_to_path(item["physicalLocation"]["artifactLocation"]["uri"]) == expected["path"]
        assert set(result["partialFingerprints"]) == {"compileAdLint/v1"}


def test_region_text_is_what_the_columns_say(project: Path):
    # endColumn is exclusive and columns are 1-based: the region of the CAL001 call is the call.
    results = json.loads(run_cli(project, "sarif")[1])["runs"][0]["results"]
    (cal001,) = [r for r in results if r["ruleId"] == "CAL001"]
    physical = cal001["locations"][0]["physicalLocation"]
    region = physical["region"]
    line = (
        (project / _uri_to_path(physical["artifactLocation"]["uri"])).read_text().splitlines()[region["startLine"] - 1]
    )
    assert line[region["startColumn"] - 1 : region["endColumn"] - 1].startswith("fast(")


def test_paths_become_relative_uris_with_forward_slashes_and_escapes(project: Path):
    results = json.loads(run_cli(project, "sarif")[1])["runs"][0]["results"]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert "sub%20dir/config%20%C3%A9.py" in uris
    assert artifact_location("a\\b.py" if sys.platform == "win32" else "a/b.py") == {
        "uri": "a/b.py",
        "uriBaseId": "%SRCROOT%",
    }
    assert artifact_location("/abs/x y.py")["uri"] == "file:///abs/x%20y.py"


def test_fingerprints_survive_moved_lines_and_tell_duplicates_apart(project: Path):
    def fingerprints() -> dict[str, list[str]]:
        results = json.loads(run_cli(project, "sarif")[1])["runs"][0]["results"]
        by_rule: dict[str, list[str]] = {}
        for result in results:
            by_rule.setdefault(result["ruleId"], []).append(result["partialFingerprints"]["compileAdLint/v1"])
        return by_rule

    before = fingerprints()
    train = project / "pkg" / "train.py"
    train.write_text("# a comment that moves every line\n\n" + train.read_text())
    after = fingerprints()
    assert after == before

    # Two identical hazards in one file get distinct fingerprints.
    config = project / "sub dir" / "config é.py"
    config.write_text(config.read_text() + 'fc.backward_pass_autocast = {"device_type": "cpu"}\n')
    twice = fingerprints()["CAL003"]
    assert len(twice) == 2 and len(set(twice)) == 2
    assert before["CAL003"][0] in twice


def test_severity_levels_and_properties_from_a_constructed_report():
    # A warning-severity finding and confirm/fix data must still give a schema-valid log.
    finding = Finding(
        "CAL002",
        "check [this](1) out",
        Severity.WARNING,
        Location("x.py", 3, 5, 3, 9),
        (RelatedLocation(Location("y.py", 1, 1, 1, 2), "compiled here"),),
        facts=(("backend", "inductor"),),
    )
    document = sarif_log(Report((finding,), Stats(1, 1, 0, 0.0)))
    validate(document)
    (result,) = document["runs"][0]["results"]
    assert result["level"] == "warning"
    assert result["message"]["text"] == "check \\[this\\](1) out"  # not an embedded link
    assert result["relatedLocations"][0]["id"] == 1
    assert result["properties"]["facts"] == {"backend": "inductor"}


def _uri_to_path(uri: str) -> str:
    from urllib.parse import unquote

    return unquote(uri)


def test_the_schema_check_rejects_invalid_logs(project: Path):
    # Guards against a validator that accepts anything (wrong draft, empty schema).
    document = json.loads(run_cli(project, "sarif")[1])
    validate(document)
    broken = json.loads(json.dumps(document))
    broken["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        validate(broken)
    broken = json.loads(json.dumps(document))
    broken["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    with pytest.raises(jsonschema.ValidationError):
        validate(broken)
