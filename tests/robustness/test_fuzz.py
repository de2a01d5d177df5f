"""Property-based robustness: grammar-generated programs and mutated fixture files.

Properties: the analyzer never raises, never takes longer than ``PER_FILE_SECONDS`` on one small file,
reports positions inside the file, and is deterministic (same findings across runs, across ``jobs``
values and between a cold and a warm cache).

CI runs ``CAL_FUZZ_EXAMPLES`` (default 30) examples per property; for a long run:
``CAL_FUZZ_EXAMPLES=500 pytest tests/robustness/test_fuzz.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from robustness_helpers import FIXTURES, HAZARD, analyze, finding_keys

from compile_ad_lint.rules import RULES_BY_CODE

hypothesmith = pytest.importorskip("hypothesmith")

#: hypothesmith compiles candidate programs; their SyntaxWarnings are noise here.
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

EXAMPLES = int(os.environ.get("CAL_FUZZ_EXAMPLES", "30"))
PER_FILE_SECONDS = float(os.environ.get("CAL_FUZZ_PER_FILE_SECONDS", "20"))
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,  # the time bound is checked explicitly, with a clearer message
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    derandomize=os.environ.get("CAL_FUZZ_RANDOM") is None,  # reproducible in CI; set CAL_FUZZ_RANDOM=1 to explore
    database=None,
)

#: The anchor text in a comment forces a parse of every generated file (see ANCHOR_PATTERN).
ANCHOR_COMMENT = b"# x.backward()\n"

FIXTURE_FILES = sorted(FIXTURES.glob("*.py")) + sorted((FIXTURES / "projects").rglob("*.py"))


def _analyze_source(source: bytes, *, with_hazard: bool = True):
    """Analyze one file (plus the reference hazard) in a fresh directory; (report, seconds, lines)."""
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "m.py").write_bytes(source)
        if with_hazard:
            (root / "hazard.py").write_text(HAZARD)
        started = time.perf_counter()
        report = analyze([root])
        seconds = time.perf_counter() - started
    return report, seconds


def _check_properties(report, seconds: float, source: bytes, label: str) -> None:
    assert seconds < PER_FILE_SECONDS, f"{label}: {seconds:.1f}s for {len(source)} bytes"
    line_count = source.count(b"\n") + source.count(b"\r") + 1
    for finding in report.findings:
        location = finding.location
        assert finding.code in RULES_BY_CODE, finding  # a rule's code (CAL004 and CAL005 included)
        assert finding.message, finding
        if location.path.endswith("m.py"):
            assert 1 <= location.line <= line_count + 1, (label, finding)
        assert location.column >= 1 and location.end_line >= location.line, (label, finding)
    hazards = [f for f in report.findings if f.location.path.endswith("hazard.py")]
    assert [(f.code, f.location.line, f.location.column) for f in hazards] == [("CAL001", 6, 9)], label


# -- grammar-generated programs -----------------------------------------------------------------


@FUZZ_SETTINGS
@given(program=hypothesmith.from_grammar())
def test_grammar_generated_programs(program):
    source = ANCHOR_COMMENT + program.encode("utf-8", errors="surrogatepass")
    report, seconds = _analyze_source(source)
    _check_properties(report, seconds, source, "hypothesmith program")


@FUZZ_SETTINGS
@given(
    program=hypothesmith.from_grammar(),
    torch_lines=st.lists(
        st.sampled_from(
            [
                "import torch\n",
                "import torch.autograd.forward_ad as fwAD\n",
                "f = torch.compile(torch.sin)\n",
                "with fwAD.dual_level():\n    y = f(fwAD.make_dual(x, t))\n",
                "with torch.autocast('cpu'):\n    loss = f(x).sum()\nloss.backward()\n",
                "torch._functorch.config.backward_pass_autocast = 'bogus'\n",
            ]
        ),
        max_size=6,
    ),
)
def test_grammar_programs_mixed_with_torch_code(program, torch_lines):
    source = ("".join(torch_lines) + program + "".join(reversed(torch_lines))).encode("utf-8", errors="surrogatepass")
    report, seconds = _analyze_source(source)
    _check_properties(report, seconds, source, "mixed program")


# -- mutated fixtures ----------------------------------------------------------------------------


@st.composite
def mutated_fixture(draw):
    path = draw(st.sampled_from(FIXTURE_FILES))
    lines = path.read_bytes().splitlines(keepends=True)
    operations = draw(
        st.lists(
            st.sampled_from(["delete", "truncate", "shuffle", "swap", "duplicate", "dedent", "junk"]),
            min_size=1,
            max_size=4,
        )
    )
    for operation in operations:
        if not lines:
            break
        index = draw(st.integers(0, len(lines) - 1))
        if operation == "delete":
            count = draw(st.integers(1, 5))
            del lines[index : index + count]
        elif operation == "truncate":
            text = b"".join(lines)
            cut = draw(st.integers(0, len(text)))
            lines = text[:cut].splitlines(keepends=True)
        elif operation == "shuffle":
            end = min(len(lines), index + draw(st.integers(2, 12)))
            lines[index:end] = draw(st.permutations(lines[index:end]))
        elif operation == "swap":
            other = draw(st.integers(0, len(lines) - 1))
            lines[index], lines[other] = lines[other], lines[index]
        elif operation == "duplicate":
            lines.insert(index, lines[index])
        elif operation == "dedent":
            lines[index] = lines[index].lstrip(b" ")
        else:
            junk = draw(
                st.sampled_from([b"(", b")", b":", b"\t", b"\x00", b"\xff", b"\\", b'"""', b"with ", b"\r", b"lambda"])
            )
            line = lines[index]
            at = draw(st.integers(0, len(line)))
            lines[index] = line[:at] + junk + line[at:]
    return path.name, b"".join(lines)


@FUZZ_SETTINGS
@given(case=mutated_fixture())
def test_mutated_fixtures(case):
    name, source = case
    report, seconds = _analyze_source(source)
    _check_properties(report, seconds, source, f"mutated {name}")


@FUZZ_SETTINGS
@given(case=mutated_fixture(), jobs=st.sampled_from([1, 2]))
def test_mutated_fixture_is_deterministic(case, jobs):
    name, source = case
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "m.py").write_bytes(source)
        first = analyze([root], jobs=jobs)
        second = analyze([root], jobs=jobs, use_cache=True)
        third = analyze([root], jobs=jobs, use_cache=True)  # warm
    assert finding_keys(first) == finding_keys(second) == finding_keys(third), name


# -- determinism on the unmodified fixtures -----------------------------------------------------


@pytest.fixture(scope="module")
def fixture_copy(tmp_path_factory):
    destination = tmp_path_factory.mktemp("fixtures") / "fixtures"
    shutil.copytree(FIXTURES, destination)
    return destination


def test_fixtures_deterministic_across_runs_and_jobs(fixture_copy):
    reference = finding_keys(analyze([fixture_copy], jobs=1))
    assert reference, "the fixtures should produce findings"
    for jobs in (1, 2, 4):
        for use_cache in (False, True, True):  # no cache, cold cache, warm cache
            again = finding_keys(analyze([fixture_copy], jobs=jobs, use_cache=use_cache))
            assert again == reference, f"jobs={jobs} use_cache={use_cache}"
    shutil.rmtree(fixture_copy / ".compile_ad_lint_cache", ignore_errors=True)


def test_fixtures_deterministic_across_path_order(fixture_copy):
    """Naming every file explicitly, in either order, gives the same findings as naming the tree."""
    files = sorted(fixture_copy.rglob("*.py"))
    tree = finding_keys(analyze([fixture_copy]))
    forward = finding_keys(analyze(files))
    backward = finding_keys(analyze(list(reversed(files))))
    assert forward == backward
    assert {k[2:] for k in forward} == {k[2:] for k in tree}


DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.mark.parametrize("name", ["hash_order", "hash_order_autocast", "hash_order_switches"])
def test_findings_do_not_depend_on_string_hashing(tmp_path, name):
    """One generic compile site reached with four block classes: sets of compiled values then tie
    on every position, and their order came from string hashing, which differs per process
    (``PYTHONHASHSEED``): the message, its island and the related locations changed from one run
    (or worker process) to the next. Likewise two autocast states alike but for where they come
    from (mlfoundations/open_lm's ``get_autocast``: the class, or a lambda making one): the forward
    autocast context named either; and two alike but for the switch arms they were made on (a
    helper's bfloat16 autocast on both arms of ``if args.a:``): the finding came and went. Four seeds
    must give one report."""
    project = tmp_path / "project"
    shutil.copytree(DATA / name, project)
    (project / "pyproject.toml").write_text("[tool.compile-ad-lint]\n")
    reports = set()
    for seed in ("1", "2", "3", "4"):
        completed = subprocess.run(
            [sys.executable, "-m", "compile_ad_lint", "check", ".", "--format", "json", "--no-cache"],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert completed.returncode == 1, completed.stderr
        document = json.loads(completed.stdout)
        assert [f["code"] for f in document["findings"]] == ["CAL002"]
        reports.add(json.dumps(document["findings"], sort_keys=True))
    assert len(reports) == 1
