"""Jupyter notebooks through the real CLI: discovered, analyzed as the module of their code cells,
IPython syntax masked in place, findings reported per cell in every format."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compile_ad_lint.notebook import mask, parse
from compile_ad_lint.testing import write_files

BASE_ENV = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}

MODEL = "import torch\n\nf = torch.compile(torch.sin)\n"


def cli(cwd: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    completed = subprocess.run(
        [sys.executable, "-m", "compile_ad_lint", *args],
        cwd=cwd,
        input=stdin or b"",
        capture_output=True,
        timeout=300,
        env=BASE_ENV,
    )
    return subprocess.CompletedProcess(
        completed.args, completed.returncode, completed.stdout.decode(), completed.stderr.decode()
    )


def code(*lines: str) -> dict:
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": "x",
        "metadata": {},
        "outputs": [],
        "source": list(lines),
    }


def markdown(text: str) -> dict:
    return {"cell_type": "markdown", "id": "m", "metadata": {}, "source": [text]}


def notebook(*cells: dict, language: str = "python") -> str:
    document = {
        "cells": list(cells),
        "metadata": {
            "kernelspec": {"display_name": "k", "language": language, "name": "k"},
            "language_info": {"name": language},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"  # Jupyter's own layout


#: Cell 1 markdown, cell 2 imports behind a magic and a shell line, cell 3 the hazard at line 5, column 9.
EXPLORE = notebook(
    markdown("# Exploring tangents\n"),
    code(
        "%matplotlib inline\n",
        "!pip install -q something\n",
        "import torch.autograd.forward_ad as fwAD\n",
        "from model import f\n",
    ),
    code(
        "for i in range(2):\n",
        "    %time g = i\n",
        "files = !ls\n",
        "with fwAD.dual_level():\n",
        "    y = f(fwAD.make_dual(x, t))",
    ),
    code("%%bash\n", "echo 'not python (\n"),
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_files(
        tmp_path / "proj",
        {"pyproject.toml": "[tool.compile-ad-lint]\n", "notebooks/model.py": MODEL, "notebooks/explore.ipynb": EXPLORE},
    )


def test_notebooks_are_discovered_and_reported_per_cell(project):
    completed = cli(project, "check", ".", "--no-cache")
    assert completed.returncode == 1, completed.stdout + completed.stderr
    lines = completed.stdout.splitlines()
    assert lines[0].startswith(
        "notebooks/explore.ipynb:cell 3:5:9: CAL001 `f(...)` runs a compiled callable on dual inputs: the tangent is "
        "silently None"
    )
    assert lines[1] == "    notebooks/explore.ipynb:cell 3:4:1: forward-AD region entered here"
    assert (
        lines[2] == "    notebooks/model.py:3:5: compiled here (torch.compile, backend='inductor')"
    )  # the import from its folder
    assert "CAL900" not in completed.stdout  # magics, shell lines and the %%bash cell parse
    assert lines[-1].startswith("Found 1 finding in 2 files")


def test_checkpoint_copies_are_not_checked(project):
    write_files(project, {"notebooks/.ipynb_checkpoints/explore-checkpoint.ipynb": EXPLORE})
    completed = cli(project, "check", ".", "--no-cache", "--concise")
    assert "checkpoint" not in completed.stdout and "Found 1 finding in 2 files" in completed.stdout


def test_json_has_the_cell(project):
    document = json.loads(cli(project, "check", ".", "--no-cache", "--format", "json").stdout)
    (finding,) = document["findings"]
    assert {k: finding[k] for k in ("path", "cell", "line", "column", "end_line", "end_column")} == {
        "path": "notebooks/explore.ipynb",
        "cell": 3,
        "line": 5,
        "column": 9,
        "end_line": 5,
        "end_column": 32,
    }
    assert [(r["path"], r["cell"], r["line"], r["column"]) for r in finding["related"]] == [
        ("notebooks/explore.ipynb", 3, 4, 1),
        ("notebooks/model.py", None, 3, 5),
    ]


def _raw_line_and_column(path: Path, needle: str) -> tuple[int, int]:
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if needle in line:
            return number, line.index(needle) + 1
    raise AssertionError(needle)


def test_sarif_points_into_the_notebook_file(project):
    import jsonschema

    document = json.loads(cli(project, "check", ".", "--no-cache", "--format", "sarif").stdout)
    schema = json.loads((Path(__file__).resolve().parents[1] / "data" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.validate(document, schema)
    (result,) = document["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "notebooks/explore.ipynb", "uriBaseId": "%SRCROOT%"}
    line, column = _raw_line_and_column(project / "notebooks" / "explore.ipynb", "f(fwAD.make_dual(x, t))")
    region = location["region"]
    assert (region["startLine"], region["startColumn"], region["endLine"]) == (line, column, line)
    assert region["endColumn"] == column + len("f(fwAD.make_dual(x, t))")
    assert region["properties"] == {
        "notebookCell": 3,
        "cellLine": 5,
        "cellColumn": 9,
        "cellEndLine": 5,
        "cellEndColumn": 32,
    }
    assert region["snippet"]["text"] == "    y = f(fwAD.make_dual(x, t))"
    region_start = result["relatedLocations"][0]["physicalLocation"]["region"]
    assert (region_start["startLine"], region_start["startColumn"]) == _raw_line_and_column(
        project / "notebooks" / "explore.ipynb", "with fwAD.dual_level()"
    )


def test_github_annotation_points_into_the_notebook_file(project):
    (annotation,) = cli(project, "check", ".", "--no-cache", "--format", "github").stdout.splitlines()
    line, column = _raw_line_and_column(project / "notebooks" / "explore.ipynb", "f(fwAD.make_dual(x, t))")
    assert annotation.startswith(f"::error file=notebooks/explore.ipynb,line={line},col={column},title=CAL001 ")
    assert "::cell 3, line 5, column 9: `f(...)` runs a compiled callable on dual inputs" in annotation
    assert "%0A  notebooks/explore.ipynb:cell 3:4:1: forward-AD region entered here" in annotation


def test_show_source_shows_the_cell_line(project):
    lines = cli(project, "check", ".", "--no-cache", "--concise", "--show-source").stdout.splitlines()
    assert lines[1:4] == ["    |", "  5 |     y = f(fwAD.make_dual(x, t))", "    |         ^^^^^^^^^^^^^^^^^^^^^^^"]


def test_cells_follow_the_notebook_when_only_markdown_changes(project):
    """Results are cached by the code's text; the cell numbers are mapped from the file as it is now."""
    assert "explore.ipynb:cell 3:5:9" in cli(project, "check", ".").stdout
    document = json.loads((project / "notebooks" / "explore.ipynb").read_text())
    document["cells"].insert(0, markdown("A new introduction\n"))
    (project / "notebooks" / "explore.ipynb").write_text(json.dumps(document, indent=1))
    warm = cli(project, "check", ".")
    assert "explore.ipynb:cell 4:5:9: CAL001" in warm.stdout, warm.stdout
    assert "(2 analyzed: 0 parsed, 2 cached)" in warm.stdout


def test_imports_from_the_notebook_folder_also_inside_a_package(tmp_path):
    """A kernel starts in the notebook's folder: its siblings are importable even where an
    ``__init__.py`` makes the folder a package."""
    project = write_files(
        tmp_path / "proj",
        {
            "pyproject.toml": "[tool.compile-ad-lint]\n",
            "pkg/__init__.py": "",
            "pkg/model.py": MODEL,
            "pkg/explore.ipynb": EXPLORE,
        },
    )
    completed = cli(project, "check", "pkg/explore.ipynb", "--no-cache", "--format", "json")
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert [r["path"] for r in json.loads(completed.stdout)["findings"][0]["related"]] == [
        "pkg/explore.ipynb",
        "pkg/model.py",
    ]


def test_invalid_notebooks_are_cal900_and_the_rest_is_analyzed(project):
    write_files(
        project,
        {
            "broken.ipynb": '{"cells": [\n',
            "list.ipynb": "[]\n",
            "hazard_cell.ipynb": notebook(markdown("text\n"), code("x = 1\n"), code("def f(:\n", "    x.backward()\n")),
        },
    )
    completed = cli(project, "check", ".", "--no-cache", "--concise")
    assert completed.returncode == 1
    lines = completed.stdout.splitlines()
    assert (
        "broken.ipynb:1:1: CAL900 cannot read: notebook is not valid JSON: Expecting value (line 2, column 1)" in lines
    )
    assert "list.ipynb:1:1: CAL900 cannot read: not a Jupyter notebook: no list of cells" in lines
    assert any(line.startswith("hazard_cell.ipynb:cell 3:1:") and "CAL900" in line for line in lines), lines
    assert any(line.startswith("notebooks/explore.ipynb:cell 3:5:9: CAL001") for line in lines)
    explicit = cli(project, "check", "broken.ipynb", "--no-cache")
    assert explicit.returncode == 1 and "CAL900" in explicit.stdout


def test_noqa_in_a_cell(project):
    source = EXPLORE.replace("    y = f(fwAD.make_dual(x, t))", "    y = f(fwAD.make_dual(x, t))  # noqa: CAL001")
    (project / "notebooks" / "explore.ipynb").write_text(source)
    assert cli(project, "check", ".", "--no-cache").returncode == 0


def test_notebook_of_another_language_is_skipped(project):
    (project / "notebooks" / "explore.ipynb").write_text(
        notebook(code("library(ggplot2)\n", "x <- c(1, 2) %>% f(\n"), language="R")
    )
    completed = cli(project, "check", ".", "--no-cache")
    assert completed.returncode == 0, completed.stdout


def test_notebook_on_stdin(project):
    data = (project / "notebooks" / "explore.ipynb").read_bytes()
    completed = cli(
        project, "check", "-", "--stdin-filename", "notebooks/explore.ipynb", "--no-cache", "--concise", stdin=data
    )
    assert completed.returncode == 1, completed.stderr
    assert completed.stdout.startswith("notebooks/explore.ipynb:cell 3:5:9: CAL001")
    broken = cli(project, "check", "-", "--stdin-filename", "notebooks/new.ipynb", "--no-cache", stdin=b"{")
    assert (
        broken.returncode == 1
        and "notebooks/new.ipynb:1:1: CAL900 cannot read: notebook is not valid JSON" in broken.stdout
    )


#: A training notebook: the model compiled in cell 2, a CAL002 backward in cell 4 (its compiled call at
#: cell 4:3, module line 5), a CAL004 double backward in cell 5 (the compiled call at cell 5:2, module line 8).
TRAIN = notebook(
    markdown("# Training\n"),
    code("import torch\n", "model = torch.compile(torch.nn.Linear(4, 4))\n"),
    markdown("The step:\n"),
    code(
        "def train(x):\n",
        "    with torch.autocast('cpu', dtype=torch.bfloat16):\n",
        "        loss = model(x).sum()\n",
        "    loss.backward()\n",
    ),
    code(
        "def penalty(x):\n",
        "    y = model(x).sum()\n",
        "    (g,) = torch.autograd.grad(y, x, create_graph=True)\n",
        "    return g\n",
    ),
)


def test_diff_and_fix_leave_an_unchanged_notebook_alone(project):
    (project / "notebooks" / "train.ipynb").write_text(TRAIN)
    for flag in ("--diff", "--fix"):
        completed = cli(project, "check", "notebooks/train.ipynb", "--no-cache", flag)
        assert "changed since it was analyzed" not in completed.stderr, (flag, completed.stderr)
        assert (project / "notebooks" / "train.ipynb").read_text() == TRAIN
    assert completed.returncode == 1 and "CAL002" in completed.stdout, completed.stdout


def test_messages_name_cell_lines_never_module_lines(project):
    import re

    (project / "notebooks" / "train.ipynb").write_text(TRAIN)
    completed = cli(project, "check", "notebooks/train.ipynb", "--no-cache", "--format", "json")
    findings = json.loads(completed.stdout)["findings"]
    assert {f["code"] for f in findings} == {"CAL002", "CAL004"}, findings
    for finding in findings:
        texts = [finding["message"], *finding.get("details", ()), *(r["message"] for r in finding["related"])]
        # Positions are the locations' (cell, line): a text naming a line would name a module line.
        assert not any(re.search(r"\bline \d", text) for text in texts), texts
        assert all(r["cell"] is not None for r in finding["related"]), finding["related"]


def test_confirm_skips_notebooks(project, monkeypatch, capsys):
    import compile_ad_lint.cli as cli_module
    import compile_ad_lint.confirm as confirm_package

    seen = []
    monkeypatch.setattr(
        confirm_package, "confirm_findings", lambda findings, options: seen.extend(findings) or list(findings)
    )
    monkeypatch.chdir(project)
    assert cli_module.main(["check", ".", "--no-cache", "--confirm", "--devices", "cpu", "--format", "json"]) == 1
    (finding,) = json.loads(capsys.readouterr().out)["findings"]
    assert seen == []
    ((device, result),) = finding["confirm"].items()
    assert (device, result["verdict"], result["source"]) == ("cpu", "skipped", "none")
    assert result["detail"] == "confirm mode does not run notebooks"


# -- masking ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["%time f()\n", "x = 1\n"], ["\n", "x = 1\n"]),
        (["if a:\n", "    !ls\n", "y = 2\n"], ["if a:\n", "    pass\n", "y = 2\n"]),
        (["x = !ls -l\n", "a, b = %sx cmd\n"], ["x = None\n", "a, b = None\n"]),
        (["torch.compile?\n", "??torch\n", "# why?\n"], ["\n", "\n", "# why?\n"]),
        (["!pip install \\\n", "    a b\n", "z = 3\n"], ["\n", "\n", "z = 3\n"]),
        (["x = (a\n", "     % b)\n"], ["x = (a\n", "     % b)\n"]),  # inside brackets: the modulo operator
        (['doc = """\n', "!important\n", '"""\n'], ['doc = """\n', "!important\n", '"""\n']),  # inside a string
        (["%%time\n", "y = f(x)\n"], ["\n", "y = f(x)\n"]),
        (["%%html\n", "<b>(</b>\n"], ["\n", "\n"]),
    ],
)
def test_mask_keeps_lines_and_other_text(lines, expected):
    assert mask(list(lines)) == expected


def test_parse_keeps_module_lines_of_each_cell():
    parsed = parse(EXPLORE.encode())
    assert [(cell.number, cell.first_line, len(cell.lines)) for cell in parsed.cells] == [
        (2, 1, 4),
        (3, 5, 5),
        (4, 10, 2),
    ]
    assert parsed.cell_position(9) == (3, 5)
    assert parsed.text.splitlines()[8] == "    y = f(fwAD.make_dual(x, t))"
