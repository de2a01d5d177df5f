"""The rules' findings are kept for the events they were found in (``rules.running``): a check in
the same process with the same events, configuration and checked files reports what a first
check would; anything else in the key, or a suppression (applied after the rules), changes it."""

from __future__ import annotations

from pathlib import Path

from compile_ad_lint import Config
from compile_ad_lint.api import Analyzer
from compile_ad_lint.target import with_target

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

TRAIN = """\
import torch

model = torch.compile(torch.nn.Linear(4, 4))


def step(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x).sum()
    label = "step"
    loss.backward()
"""


def _check(root: Path, source: str, config: Config | None = None):  # type: ignore[no-untyped-def]
    path = (root / "train.py").resolve()
    analyzer = Analyzer(config or Config(root=root), jobs=1, use_cache=False)
    return analyzer.check([str(path)], sources={path: source.encode()}).findings


def _shown(findings):  # type: ignore[no-untyped-def]
    return [(f.code, f.location.path, f.location.line, f.message) for f in findings]


def test_an_edit_that_leaves_the_events_reports_what_a_first_check_does(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    first = _check(tmp_path, TRAIN)
    assert [(f.code, f.location.line) for f in first] == [("CAL002", 10)]
    edited = TRAIN.replace('label = "step"', 'label = "step 2"  # renamed')
    assert _shown(_check(tmp_path, edited)) == _shown(first)


def test_an_edit_that_changes_the_events_changes_the_findings(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    assert _check(tmp_path, TRAIN)
    without_autocast = TRAIN.replace('with torch.autocast("cpu", dtype=torch.bfloat16):', "if True:")
    assert _check(tmp_path, without_autocast) == ()
    assert [(f.code, f.location.line) for f in _check(tmp_path, TRAIN)] == [("CAL002", 10)]


def test_a_suppression_added_without_changing_the_events_silences_the_finding(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    assert _check(tmp_path, TRAIN)
    suppressed = TRAIN.replace("    loss.backward()", "    loss.backward()  # noqa: CAL002")
    assert _check(tmp_path, suppressed) == ()


def test_the_configuration_and_the_torch_target_are_part_of_what_is_kept(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    assert _check(tmp_path, TRAIN)
    assert _check(tmp_path, TRAIN, Config(root=tmp_path, ignore=frozenset({"CAL002"}))) == ()
    assert _check(tmp_path, TRAIN)

    fixture = [str(FIXTURES / "cal001_compile_spellings.py")]

    def codes(target: str | None) -> set[str]:
        config = Config() if target is None else with_target(Config(), setting=target)
        return {f.code for f in Analyzer(config, jobs=1, use_cache=False).check(fixture).findings}

    installed = codes(None)  # the test pin, torch 2.13: dual inputs' tangents dropped (CAL001)
    assert "CAL001" in installed and "CAL006" not in installed
    newer = codes(">=2.14")  # a first call with dual inputs graph-breaks there (CAL006)
    assert "CAL006" in newer and "CAL001" not in newer
    assert codes(None) == installed
