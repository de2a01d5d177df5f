"""Smoke tests of bench/: the harness, the framework corpus generator, flake8 and language-server rows.

Seconds, no timing asserted: the corpora are small (two copies of the fixtures, a three-file
project as a ``--corpus DIR``), and the generated framework is checked on its cheap entry points only
(the full corpus is the benchmark's job, which also compares its findings with the generator's marks).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench" / "run_bench.py"
#: A tiny project for ``--corpus DIR``: a compiled model built in a package, its forward under
#: autocast in a script and the backward outside it (one CAL002 with a single compiled call).
TINY_PROJECT = {
    "pkg/__init__.py": "",
    "pkg/model.py": (
        "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(4, 4)\n\n    def forward(self, x):\n        return self.fc(x).float()\n\n\n"
        "def build():\n    return torch.compile(Net())\n"
    ),
    "train.py": (
        "import torch\n\nfrom pkg.model import build\n\nmodel = build()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n\n\n"
        'def step(x, y):\n    with torch.autocast("cuda", dtype=torch.float16):\n'
        "        loss = torch.nn.functional.mse_loss(model(x), y)\n    loss.backward()\n    opt.step()\n"
    ),
    "README.md": "not copied\n",
}


@pytest.fixture()
def tiny_project(tmp_path):
    root = tmp_path / "src_project" / "tiny"
    for relative, text in TINY_PROJECT.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return root


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("run_bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["run_bench"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("run_bench", None)


@pytest.fixture(scope="module")
def generator(bench):
    return bench.framework_corpus  # loaded by run_bench from bench/


def _digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _cli_json(cwd: Path, *args: str) -> dict:
    result = subprocess.run(
        [sys.executable, "-m", "compile_ad_lint", "check", *args, "--format", "json", "--no-cache"],
        check=False,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode in (0, 1), result.stderr[-2000:]
    return json.loads(result.stdout)


# -- the harness on the fixtures ---------------------------------------------------------------


def test_fixtures_corpus_cold_warm_touched(bench, tmp_path):
    corpus = bench.prepare_fixtures_corpus(tmp_path, copies=2)
    assert {p.name for p in corpus.directory.iterdir()} == {"proj_1", "proj_2"}
    assert len(corpus.files) == 2 * len(list(bench.FIXTURES.rglob("*.py")))
    assert corpus.lines > 0 and corpus.bytes > 0
    assert corpus.anchor_file is not None and b".backward(" in corpus.anchor_file.read_bytes()
    assert not corpus.project  # no flake8 or language-server rows on the copies
    # The copies differ by a trailing comment, so the content-keyed cache cannot share them.
    first, second = (corpus.directory / f"proj_{k}" / "cal002_amp_training.py" for k in (1, 2))
    assert first.read_bytes() != second.read_bytes()

    original = corpus.anchor_file.read_bytes()
    result = bench.measure_corpus(corpus, repeat=1, torchfix=None, parse_only=True, parse_two=False)
    assert corpus.anchor_file.read_bytes() == original  # the touched file is restored
    names = [row.name for row in result.rows]
    assert names == [
        bench.OURS_COLD,
        bench.OURS_WARM,
        bench.OURS_WARM_TEXT,
        bench.OURS_TOUCHED,
        bench.OURS_COLD_TEXT,
        bench.OURS_COLD_J1,
        bench.PARSE_1,
    ]
    assert result.consistent, result.mismatches
    assert result.lsp == {} and result.errors == []

    rows = {row.name: row for row in result.rows}
    assert rows[bench.OURS_WARM_TEXT].runs[0].findings_count == len(rows[bench.OURS_COLD].runs[0].findings)
    assert rows[bench.OURS_COLD_TEXT].runs[0].findings_count == len(rows[bench.OURS_COLD].runs[0].findings)
    cold, warm, touched = (rows[n].runs[0].stats for n in (bench.OURS_COLD, bench.OURS_WARM, bench.OURS_TOUCHED))
    assert cold["files"] == len(corpus.files) and cold["parsed"] > 0
    assert warm["parsed"] == 0 and warm["cached"] > 0
    assert touched["parsed"] <= 1  # a trailing comment may leave every cached block valid
    assert rows[bench.OURS_COLD].runs[0].findings  # the fixtures have findings to compare
    for row in result.rows:
        m = row.runs[0].measurement
        assert m.wall_s > 0 and m.cpu_s > 0 and m.peak_mb > 0

    table = bench.format_table(result.rows, "fixtures")
    for name in names:
        assert name in table
    assert f"{bench.OURS_COLD} / {bench.PARSE_1}" in bench.ratios(result.rows)


def test_compare_findings_reports_a_difference(bench):
    a = [{"code": "CAL001", "path": "x.py", "line": 1}]
    b = [{"code": "CAL002", "path": "x.py", "line": 2}]
    assert bench.compare_findings([("cold", a), ("warm", a)]) == []
    problems = bench.compare_findings([("cold", a), ("warm", b)])
    assert len(problems) == 1 and problems[0].startswith("warm:")


def test_measure_sums_a_process_tree(bench, tmp_path):
    code = "import subprocess, sys; subprocess.run([sys.executable, '-c', 'x = bytearray(60 * 2**20); import time; time.sleep(0.5)'])"
    m = bench.measure([sys.executable, "-c", code], tmp_path, interval=0.05)
    assert m.returncode == 0
    assert m.max_process_rss_mb >= 60  # the grandchild, through wait4
    assert m.peak_mb >= 60


# -- the generated framework corpus ----------------------------------------------------------------


def test_framework_generator_is_deterministic_and_framework_shaped(generator, tmp_path):
    one = generator.generate(tmp_path / "a")
    again = generator.generate(tmp_path / "b")
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")  # byte for byte
    assert one.files == again.files and one.expected == again.expected

    python = [f for f in one.files if f.endswith(".py")]
    assert len(python) >= 300
    assert one.bytes > 1_000_000  # real framework modules are kilobytes each, not one-liners
    for package in ("models", "data", "train", "utils", "config", "experiments", "protocols", "distributed"):
        assert f"forge/{package}/__init__.py" in one.files
    root = tmp_path / "a"
    registry = (root / "forge/protocols/train_spec.py").read_text()
    assert "def register_train_spec" in registry and "_train_specs[train_spec.name] = train_spec" in registry
    registrations = [
        f for f in python if f.startswith("forge/models/") and "\nregister_train_spec(" in (root / f).read_text()
    ]
    assert len(registrations) == len(generator.families()) >= 10
    assert "block.compile(" in (root / "forge/distributed/compile.py").read_text()  # per-block compile in place
    assert "DDP(model" in (root / "forge/distributed/ddp.py").read_text()
    trainer = (root / one.trainer).read_text()
    assert (
        "class Trainer" in trainer
        and "with self.maybe_enable_amp:" in trainer
        and "self.scaler.scale(loss).backward()" in trainer
    )
    assert sum("forward_ad" in (root / f).read_text() for f in python) >= 3
    # Packages reach each other: the data package imports utils, the trainer imports every package.
    assert "from forge.utils" in (root / "forge/data/datasets/c4.py").read_text()
    for package in ("data", "distributed", "protocols", "utils", "models"):
        assert f"forge.{package}" in trainer
    # The line the language-server client edits, and its edit, keep the line count.
    lines = trainer.splitlines(keepends=True)
    assert lines[one.edit_line - 1] == generator.EDIT_LINE_TEXT
    assert one.edit_text(3).count("\n") == 1 and one.edit_text(3) != generator.EDIT_LINE_TEXT

    codes = {code for _, _, code in one.expected}
    assert {"CAL001", "CAL002"} <= codes
    for relative, line, _ in one.expected:
        assert "# expect: CAL" in (root / relative).read_text().splitlines()[line - 1]


def test_framework_copies_are_sibling_packages(generator, tmp_path):
    single = generator.generate(tmp_path / "one")
    double = generator.generate(tmp_path / "two", copies=2)
    assert double.packages == ["forge", "forge2"]
    assert double.by_package["forge2"] == double.by_package["forge"] == single.by_package["forge"]
    assert len(double.expected) == 2 * len(single.expected)
    copy = (tmp_path / "two" / "forge2" / "train" / "trainer.py").read_text()
    assert "from forge2.protocols.train_spec import get_train_spec" in copy and "from forge." not in copy
    assert (tmp_path / "two" / "forge" / "train" / "trainer.py").read_bytes() == (
        tmp_path / "one" / "forge" / "train" / "trainer.py"
    ).read_bytes()


def test_cli_reports_the_marked_findings_on_the_framework(generator, tmp_path):
    """The experiments that do not go through the Trainer are cheap entry points: exactly their marks are reported."""
    generated = generator.generate(tmp_path)
    cheap = sorted(
        path.relative_to(tmp_path).as_posix()
        for path in (tmp_path / "forge" / "experiments").glob("*/train.py")
        if "from forge.train.trainer import Trainer" not in path.read_text()
    )
    assert len(cheap) >= 10
    document = _cli_json(tmp_path, *cheap)
    found = sorted((f["path"], f["line"], f["code"]) for f in document["findings"])
    want = sorted(e for e in generated.expected if e[0] in cheap)
    assert found and found == want


# -- the generated many-entry-point corpus (issue 48) --------------------------------------------


@pytest.fixture(scope="module")
def examples(bench):
    return bench.examples_corpus  # loaded by run_bench from bench/


def test_examples_generator_is_deterministic_and_grows_in_entry_points(examples, tmp_path):
    tasks = len(examples.tasks())
    one = examples.generate(tmp_path / "a", examples=tasks)
    again = examples.generate(tmp_path / "b", examples=tasks)
    assert again.files == one.files and again.expected == one.expected
    double = examples.generate(tmp_path / "c", examples=2 * tasks)
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")  # byte for byte
    assert examples.DEFAULT_EXAMPLES >= 300 and tasks >= 8
    scripts = [f for f in one.files if f.startswith("examples/")]
    assert len(scripts) == one.entry_points == tasks and double.entry_points == 2 * tasks
    # One library, shared: the same files at every scale; the examples import it.
    library = {f: h for f, h in _digest(tmp_path / "a").items() if f.startswith("src/")}
    assert library == {f: h for f, h in _digest(tmp_path / "c").items() if f.startswith("src/")}
    assert len(library) >= 40 and "src/difflab/training_utils.py" in library
    for script in scripts:
        text = (tmp_path / "a" / script).read_text()
        assert "from difflab" in text and 'VARIANT = "base"' not in text
    # No two examples are byte-identical (the content-keyed cache would share them).
    texts = [(tmp_path / "c" / f).read_bytes() for f in double.files if f.startswith("examples/")]
    assert len(set(texts)) == len(texts)
    # The marks: a CAL002 in some trainers, the CAL001 probe in the library; twice the CAL002 at 2x.
    codes = [code for _, _, code in one.expected]
    assert codes.count("CAL001") == 1 and codes.count("CAL002") >= 3
    assert [e for e in one.expected if e[2] == "CAL001"][0][0] == "src/difflab/training_utils.py"
    with pytest.raises(ValueError):  # fewer examples than tasks: a library mark no example reaches
        examples.generate(tmp_path / "d", examples=tasks - 1)
    assert [code for _, _, code in double.expected].count("CAL002") == 2 * codes.count("CAL002")
    for relative, line, code in double.expected:
        assert f"# expect: {code}" in (tmp_path / "c" / relative).read_text().splitlines()[line - 1]


def test_examples_corpus_rows_and_growth(bench, tmp_path):
    """The CLI rows of the examples corpus on one example per task: findings identical across cold,
    warm, touched and the generator's marks, the --diff row's files those of the safe fixes."""
    tasks = len(bench.examples_corpus.tasks())
    corpus = bench.prepare_examples_corpus(tmp_path, examples=tasks)
    assert corpus.project and not corpus.front_ends and corpus.entry_points == tasks
    result = bench.measure_corpus(corpus, parse_only=False, flake8=False, lsp=False, jobs1=False)
    assert [row.name for row in result.rows] == [
        bench.OURS_COLD,
        bench.OURS_WARM,
        bench.OURS_WARM_TEXT,
        bench.OURS_DIFF_WARM,
        bench.OURS_TOUCHED,
        bench.OURS_COLD_TEXT,
    ]
    assert result.consistent, result.mismatches
    assert result.errors == [] and result.lsp == {}
    rows = {row.name: row for row in result.rows}
    reference = rows[bench.OURS_COLD].runs[0].findings
    assert sorted((f["path"], f["line"], f["code"]) for f in reference) == sorted(corpus.expected)
    diffed = rows[bench.OURS_DIFF_WARM].runs[0]
    assert diffed.diff_files and set(diffed.diff_files) <= bench.safe_fix_files(reference)
    assert diffed.findings_count >= 1 and rows[bench.OURS_WARM].runs[0].stats["parsed"] == 0
    assert all(row.load_1m >= 0 for row in result.rows) and "load 1m" in bench.format_table(result.rows, "x")

    growth = bench.scaling(
        lambda factor: bench.prepare_examples_corpus(
            tmp_path, examples=factor * tasks, dirname=f"scale_{factor}", name=f"examples x{factor}"
        ),
        [1, 2],
        1,
        lambda message: None,
        label="examples",
        unit="entry_points",
    )
    assert [p["entry_points"] for p in growth["points"]] == [tasks, 2 * tasks]
    assert growth["findings_as_marked"] is True and growth["wall_per_unit_ratio_last_vs_1x"] > 0
    assert all("wall_s_per_entry_point" in p for p in growth["points"])
    assert "per-entry-point wall time" in bench.format_scaling(growth)


# -- --corpus DIR, flake8 and the language server on a tiny project -------------------------------


def test_dir_corpus_flake8_and_lsp_rows(bench, tmp_path, tiny_project):
    corpus = bench.prepare_dir_corpus(tmp_path, tiny_project)
    assert corpus.project and corpus.path == "." and corpus.directory == tmp_path / "dir_corpora" / "tiny"
    assert (corpus.directory / ".git").is_dir()  # no marker in the source: the copy's top is made the project
    assert not (corpus.directory / "README.md").exists()
    assert [f.relative_to(corpus.directory).as_posix() for f in corpus.files] == [
        "pkg/__init__.py",
        "pkg/model.py",
        "train.py",
    ]
    before = {p: p.read_bytes() for p in tiny_project.rglob("*") if p.is_file()}

    result = bench.measure_corpus(
        corpus, parse_only=False, flake8=True, lsp=True, lsp_edits=2, lsp_debounce_ms=50, lsp_timeout=120
    )
    assert result.errors == []
    assert result.consistent, result.mismatches
    names = [row.name for row in result.rows]
    assert names == [
        bench.OURS_COLD,
        bench.OURS_WARM,
        bench.OURS_WARM_TEXT,
        bench.FLAKE8_FILE,
        bench.OURS_DIFF_WARM,
        bench.OURS_TOUCHED,
        bench.OURS_COLD_TEXT,
        bench.OURS_COLD_J1,
        bench.FLAKE8_COLD,
        bench.FLAKE8_AGAIN,
        bench.FLAKE8_WITHOUT_CAL,
    ]
    assert result.lsp_file == "train.py"  # the file with the most findings
    rows = {row.name: row for row in result.rows}
    assert rows[bench.FLAKE8_COLD].runs[0].findings and rows[bench.FLAKE8_FILE].runs[0].findings
    assert rows[bench.FLAKE8_WITHOUT_CAL].runs[0].findings == []  # our plugin left out: no CAL line
    assert set(result.lsp) == {bench.LSP_COLD, bench.LSP_WARM, bench.LSP_COLD_AT_ONCE, bench.LSP_WARM_AT_ONCE}
    for name, session in result.lsp.items():
        # The judged sessions edit once the server is idle (it indexed the file, ran its project pass).
        assert session["ready"] == (name in (bench.LSP_COLD, bench.LSP_WARM))
        assert (session["ready_s"] is not None and session["ready_s"] >= 0) == session["ready"]
        assert (
            session["diagnostics_at_open"] >= 1
            and session["diagnostics_after_edits"] == [session["diagnostics_at_open"]] * 2
        )
        assert len(session["edit_s"]) == 2 and session["edit_p50_s"] is not None and session["open_s"] > 0
        assert session["settle_s"] > 0  # the project pass after the last edit ended "done"
        assert session["returncode"] == 0
    assert result.lsp_interim == []  # this project's entry points are all in the open file
    assert result.lsp[bench.LSP_WARM]["warm_cli_wall_s"] > 0 and result.lsp[bench.LSP_WARM]["warm_cli_json_wall_s"] > 0
    assert {
        p: p.read_bytes() for p in tiny_project.rglob("*") if p.is_file()
    } == before  # the source project is untouched
    assert "language server" in bench.format_lsp(result)


def test_flake8_and_lsp_comparisons_see_differences(bench, tmp_path):
    lsp_client = bench.lsp_client
    (tmp_path / "a.py").write_text("x = 1\n")
    findings = [
        {
            "code": "CAL002",
            "path": "a.py",
            "line": 1,
            "column": 1,
            "end_line": 1,
            "end_column": 2,
            "message": f"see {tmp_path}/a.py:1",
            "related": [],
        }
    ]
    shaped = bench.as_flake8(findings, tmp_path, tmp_path)
    assert shaped == bench.parse_flake8(f"./a.py:1:1: CAL002 see {tmp_path}/a.py:1\n", tmp_path, tmp_path)
    assert bench.parse_flake8("./a.py:1:1: CAL001 other\n", tmp_path, tmp_path) != shaped
    diagnostic = {
        "code": "CAL002",
        "message": f"see {tmp_path}/a.py:1",
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
    }
    want = lsp_client.finding_keys(findings, tmp_path, tmp_path, tmp_path / "a.py")
    assert lsp_client.diagnostic_keys([diagnostic], tmp_path) == want
    moved = {**diagnostic, "range": {"start": {"line": 0, "character": 1}, "end": {"line": 0, "character": 2}}}
    assert lsp_client.diagnostic_keys([moved], tmp_path) != want
    assert bench.same_findings("x", [1], [1], "y") == [] and bench.same_findings("x", [1], [2], "y")
    assert lsp_client.comment_edit("    y = 2\n", 4) == "    y = 2  # bench edit 4\n"


def test_main_on_a_directory_prints_the_targets(bench, tmp_path, capsys, tiny_project):
    output = tmp_path / "results.json"
    code = bench.main(
        [
            "--corpus",
            str(tiny_project),
            "--skip-torchfix",
            "--quick",
            "--scaling",
            "",
            "--lsp-edits",
            "1",
            "--lsp-debounce-ms",
            "50",
            "--output",
            str(output),
            "--workdir",
            str(tmp_path / "work"),
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "targets (issues 12 and 48)" in printed and "load average at start" in printed
    document = json.loads(output.read_text())
    assert list(document["corpora"]) == ["tiny"] and document["corpora"]["tiny"]["findings_identical"]
    assert set(document["corpora"]["tiny"]["lsp"]) == {bench.LSP_COLD, bench.LSP_WARM}  # --quick: the judged ones
    statuses = {(t["corpus"], t["what"]): t["status"] for t in document["targets"]}
    assert statuses[("torch", "CLI cold")] == "not measured"  # not in this run
    assert statuses[("tiny (3 files)", "CLI cold")] in ("met", "NOT met")
    assert statuses[("all", next(what for corpus, what in statuses if corpus == "all"))] == "met"


def test_corpus_option_takes_names_and_directories(bench, tmp_path):
    assert bench.selected_corpora(None) == ["fixtures", "framework", "examples", "torch"]
    assert bench.selected_corpora(["torch", str(tmp_path), "fixtures"]) == ["fixtures", str(tmp_path), "torch"]
    with pytest.raises(SystemExit):
        bench.selected_corpora([str(tmp_path / "missing")])
