"""What a check reuses from the cache, and when it must not: the whole check's record, resolved
fix edits, and the claims that let concurrent checks of one project (flake8's workers) share work.

Each test compares with a run that reuses nothing, so a stale reuse shows as a difference."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import pytest
from robustness_helpers import FIXTURES

from compile_ad_lint.api import Analyzer, CheckRecord
from compile_ad_lint.cache import CACHE_DIRECTORY, SummaryCache
from compile_ad_lint.config import Config
from compile_ad_lint.fixes import Sources, resolve


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "gpt"
    shutil.copytree(FIXTURES / "projects" / "gpt_train", root)
    (root / "pyproject.toml").write_text("[tool.compile-ad-lint]\n")
    monkeypatch.chdir(root)
    return root


def _check(**options: object):
    return Analyzer(Config(root=Path.cwd()), jobs=1, **options).check(["."])  # type: ignore[arg-type]


def _records(project: Path) -> int:
    """How many whole-check records the cache holds (decoded: entries are authenticated JSON)."""
    cache = SummaryCache.open(project)
    assert cache is not None
    count = 0
    for entry in (project / CACHE_DIRECTORY).glob("??/*.json"):
        if cache.load(entry.stem, CheckRecord) is not None:
            count += 1
    return count


def test_an_unchanged_project_is_reported_from_its_record(project):
    fresh = _check(use_cache=False)
    assert fresh.findings, "the fixture project must have findings for this test to mean anything"
    first = _check()
    assert _records(project) == 1
    second = _check()
    assert second.findings == first.findings == fresh.findings
    assert second.digests == fresh.digests
    assert (second.stats.parsed, second.stats.cached) == (0, fresh.stats.analyzed)


def test_an_edit_misses_the_record_and_is_analyzed(project):
    first = _check()
    train = project / "train.py"
    text = train.read_text()
    assert ".backward()" in text
    train.write_text(text.replace(".backward()", ".sum()", 1))
    edited = _check()
    assert edited.findings == _check(use_cache=False).findings
    assert edited.findings != first.findings, "the edit removes a backward call: a finding must go"


def test_a_file_outside_the_check_that_changed_invalidates_the_record(project):
    """Files the analysis read beyond the checked ones (here: a module next to the checked file)
    are validated by digest before a record is used."""
    before = Analyzer(Config(root=project), jobs=1).check(["train.py"])
    model = project / "model.py"
    assert str(model.resolve()) in dict(before.digests), "train.py must read model.py"
    model.write_text(model.read_text() + "\n\ndef extra():\n    return 1\n")
    after = Analyzer(Config(root=project), jobs=1).check(["train.py"])
    # A record used stale would report model.py's old digest (and fixes would then be refused).
    assert dict(after.digests)[str(model.resolve())] != dict(before.digests)[str(model.resolve())]


def test_an_import_candidate_created_later_invalidates_the_record(tmp_path, monkeypatch):
    """Creating the module a checked file imports changes no checked file (only main.py is
    checked): the record's absent import candidates are what make it stale."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.compile-ad-lint]\n")
    (tmp_path / "main.py").write_text(
        "import torch\n"
        "import torch.autograd.forward_ad as fwAD\n"
        "from helpers_not_yet import pick\n"
        "\n"
        "compiled = torch.compile(torch.nn.Linear(2, 2))\n"
        "\n"
        "def probe(x, t):\n"
        "    with fwAD.dual_level():\n"
        "        return pick(compiled)(fwAD.make_dual(x, t))\n"
    )

    def check():
        return Analyzer(Config(root=tmp_path), jobs=1).check(["main.py"])

    assert not check().findings, "pick() is unknown while its module does not exist"
    assert not check().findings
    (tmp_path / "helpers_not_yet.py").write_text("def pick(module):\n    return module\n")
    assert [f.code for f in check().findings] == ["CAL001"]


def test_editor_buffers_are_not_recorded(project):
    train = (project / "train.py").resolve()
    buffer = train.read_bytes() + b"\n# unsaved\n"
    Analyzer(Config(root=project), jobs=1).check(["."], sources={train: buffer})
    assert _records(project) == 0


def test_resolved_fix_edits_are_reused_only_for_unchanged_files(project):
    report = _check()
    cache = SummaryCache.open(project)

    def resolved(sources_cache):
        return resolve(report.findings, Sources({}, dict(report.digests), cache=sources_cache))

    uncached = resolved(None)
    assert any(f.fix is not None for f in uncached)
    assert resolved(cache) == uncached  # built and stored
    assert resolved(cache) == uncached  # read back
    # A changed file: fixes editing it are not offered from the cache (the analysis saw other content).
    edited = sorted({edit.path for f in uncached if f.fix is not None for edit in f.fix.edits})[0]
    Path(edited).write_text(Path(edited).read_text() + "\n# edited after the analysis\n")
    stale = resolved(cache)
    assert stale == resolved(None)
    touching = [f for f in stale if any(e.path == edited for fix in f.fixes for e in fix.edits)]
    assert not touching, "fixes are never offered on a changed file"


def test_a_claim_excludes_other_holders_until_released(project):
    cache = SummaryCache.open(project)
    with cache.claim("ab" + "0" * 62, wait=False) as first:
        assert first
        with cache.claim("ab" + "1" * 62, wait=False) as second:  # same lock file: another holder
            assert not second
    with cache.claim("ab" + "0" * 62, wait=False) as again:
        assert again


@pytest.mark.skipif(os.name == "nt", reason="claims are advisory file locks (fcntl)")
def test_a_root_claimed_elsewhere_is_left_for_last_and_the_check_still_completes(project, monkeypatch):
    """Another process holding a root's claim: the check analyzes everything else first, then waits
    for the claim and, finding no stored result, analyzes the root itself."""
    expected = _check(use_cache=False).findings
    cache = SummaryCache.open(project)
    held = threading.Event()
    release = threading.Event()
    claimed_keys: list[str] = []
    real_claim = SummaryCache.claim

    def recording_claim(self, key, *, wait):
        claimed_keys.append(key)
        return real_claim(self, key, wait=wait)

    monkeypatch.setattr(SummaryCache, "claim", recording_claim)
    # Find the keys the check claims, then hold the first one from another thread while checking.
    _check(use_cache=True)
    assert claimed_keys
    for entry in (project / CACHE_DIRECTORY).glob("??/*.json"):
        entry.unlink()
    target = claimed_keys[0]
    claimed_keys.clear()

    def holder():
        with real_claim(cache, target, wait=True):
            held.set()
            release.wait(10)

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait(10)
    threading.Timer(0.5, release.set).start()
    started = time.perf_counter()
    report = _check()
    thread.join()
    assert report.findings == expected
    assert claimed_keys.count(target) == 2, "the held root must be deferred once, then waited for"
    assert time.perf_counter() - started >= 0.4
