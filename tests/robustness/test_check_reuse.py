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
from robustness_helpers import FIXTURES, count_analyses

from compile_ad_lint import Config
from compile_ad_lint.api import Analyzer, CheckRecord, ResultReads, RootResult, reads_key
from compile_ad_lint.cache import CACHE_DIRECTORY, SummaryCache
from compile_ad_lint.fixes import Sources, resolve
from compile_ad_lint.linking.index import ModuleIndex


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


def _results_with_reads(project: Path) -> list[tuple[RootResult, ResultReads | None]]:
    """Every root result on disk, with what is stored as its reads (``store_result``)."""
    cache = SummaryCache.open(project, create=False, warn=None)
    assert cache is not None
    pairs = []
    for entry in (project / CACHE_DIRECTORY).glob("??/*.json"):
        result = cache.load(entry.stem, RootResult)
        if result is not None:
            pairs.append((result, cache.load(reads_key(entry.stem), ResultReads)))
    return pairs


@pytest.mark.parametrize("jobs", [1, 2])
def test_every_stored_result_has_what_it_read_beside_it(project, jobs):
    """Results stored by this process and by worker processes (five roots: spread over workers)."""
    for copy in range(4):
        shutil.copy(project / "train.py", project / f"train_{copy}.py")
    Analyzer(Config(root=project), jobs=jobs).check(["."])
    pairs = _results_with_reads(project)
    assert len(pairs) >= 5
    for result, reads in pairs:
        assert reads == ResultReads(result.dependencies, result.absent, result.layout)
        assert (str(project), False) in result.layout.packages  # the project folder is no package


def test_a_stale_result_is_ruled_out_without_decoding_it(project, monkeypatch):
    """The roots that read an edited file are analyzed again without their old results being
    decoded (the large part of a lookup); the others are reused, and the findings are a fresh check's."""
    _check()
    train = project / "train.py"
    train.write_text(train.read_text() + "\n# edited\n")
    fresh = _check(use_cache=False)
    decoded: list[RootResult] = []
    load = SummaryCache.load

    def counted(cache, key, expected, **options):
        value = load(cache, key, expected, **options)
        if expected is RootResult and value is not None:
            decoded.append(value)
        return value

    monkeypatch.setattr(SummaryCache, "load", counted)
    edited = _check()
    assert edited.findings == fresh.findings
    assert 0 < edited.stats.parsed, "no root read train.py: nothing was stale"
    assert decoded, "no unchanged root was reused: the test shows nothing"
    assert not any(str(train.resolve()) in dict(result.dependencies) for result in decoded)


def test_reads_that_are_not_the_results_own_do_not_vouch_for_it(project):
    """Reads stored for another result (a run killed between the two writes) that would pass: the
    result is checked against its own dependencies, so an edit still misses it."""
    _check()
    cache = SummaryCache.open(project, create=False, warn=None)
    assert cache is not None
    stored = [
        entry.stem for entry in (project / CACHE_DIRECTORY).glob("??/*.json") if cache.load(entry.stem, RootResult)
    ]
    assert stored
    for key in stored:
        cache.store(reads_key(key), ResultReads(()))  # reads nothing: never stale
    model = project / "model.py"  # read by every root
    model.write_text(model.read_text() + "\n\ndef extra():\n    return 1\n")
    edited, fresh = _check(), _check(use_cache=False)
    assert edited.findings == fresh.findings
    assert edited.digests == fresh.digests, "a stale result was reused (it reports model.py's old digest)"


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


def _create_helpers(root: Path) -> None:
    (root / "helpers_not_yet.py").write_text("def pick(module):\n    return module\n")


def _create_helpers_package(root: Path) -> None:
    package = root / "helpers_pkg" / "deep"
    package.mkdir(parents=True)
    for folder in (package.parent, package):
        (folder / "__init__.py").write_text("")
    (package / "sub.py").write_text("def pick(module):\n    return module\n")


@pytest.mark.parametrize(
    ("module", "create"),
    [("helpers_not_yet", _create_helpers), ("helpers_pkg.deep.sub", _create_helpers_package)],
    ids=["module", "package"],
)
def test_an_import_candidate_created_later_invalidates_the_record(tmp_path, monkeypatch, module, create):
    """Creating the module a checked file imports changes no checked file (only main.py is
    checked): the record's missing import entries are what make it stale. For a package, the
    record keeps the deepest existing folder and its missing entry (``helpers_pkg``)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.compile-ad-lint]\n")
    (tmp_path / "main.py").write_text(
        "import torch\n"
        "import torch.autograd.forward_ad as fwAD\n"
        f"from {module} import pick\n"
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
    create(tmp_path)
    assert [f.code for f in check().findings] == ["CAL001"]


def test_import_misses_are_recorded_as_the_missing_entry_of_the_deepest_existing_folder(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "main.py").write_text("")
    index = ModuleIndex(lambda *_: pytest.fail("no view is needed to look a module up"))
    assert index.find_module("pkg.absent.deeper", tmp_path / "main.py") is None
    assert index.find_module("pkg", tmp_path / "main.py") == (tmp_path / "pkg" / "__init__.py").resolve()
    assert index.absent == {(str(tmp_path / "pkg"), "absent")}
    index.start_recording()
    assert index.find_module("numpy", tmp_path / "main.py") is None
    assert index.absent == {(str(tmp_path), "numpy"), (str(tmp_path), "numpy.py")}


def test_every_index_hands_out_one_path_object_per_file(tmp_path):
    """Kept walk summaries hold the paths of earlier analyses; this analysis's values must compare
    with them by identity (``paths.interned``), not through ``Path.__eq__``."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "mod.py").write_text("")
    (tmp_path / "main.py").write_text("")

    def index() -> ModuleIndex:
        return ModuleIndex(lambda *_: pytest.fail("no view is needed to look a module up"))

    first, second = index(), index()
    found = first.find_module("pkg.mod", tmp_path / "main.py")
    assert found == (tmp_path / "pkg" / "mod.py").resolve()
    assert second.find_module("pkg.mod", tmp_path / "main.py") is found
    assert first.package_chain(found)[0] is second.find_module("pkg", tmp_path / "main.py")


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


LIB = "def step(loss, scale=1.0):\n    (loss * scale).backward()\n"
CALLER_ANCHORED = """\
import torch
from lib import step

model = torch.compile(torch.nn.Linear(2, 2))


def run(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x).sum()
    step(loss)
    loss.backward()
"""
#: ``run`` calls ``step`` but is not an entry point by itself; ``probe`` is.
CALLER_SPLIT = CALLER_ANCHORED.replace("    loss.backward()\n", "") + (
    "\n\ndef probe(x):\n    model(x).sum().backward()\n"
)


@pytest.mark.parametrize(("caller", "analyses_of_train"), [(CALLER_ANCHORED, 1), (CALLER_SPLIT, 2)])
def test_a_caller_round_that_adds_no_entry_point_reuses_the_files_result(
    tmp_path, monkeypatch, caller, analyses_of_train
):
    """``lib.step``'s backward depends on its parameter, so the files calling ``step`` are analyzed
    with ``step`` as a mention. When the block calling it is already an entry point (anchored), the
    mention selects the same blocks and the first result stands; when it makes another block an
    entry point, the file is analyzed again."""
    (tmp_path / "lib.py").write_text(LIB)
    (tmp_path / "train.py").write_text(caller)
    monkeypatch.chdir(tmp_path)
    seen = count_analyses(monkeypatch)
    report = Analyzer(Config(root=tmp_path), jobs=1, use_cache=False).check(["."])
    assert [m for name, m in seen if name == "train.py"][:1] == [frozenset()]
    assert sum(name == "train.py" for name, _ in seen) == analyses_of_train
    assert ("lib.py", frozenset()) in seen
    assert (("train.py", frozenset({"step"})) in seen) is (analyses_of_train == 2)
    # The AMP pattern (forward under autocast, backward outside) is found through the caller.
    assert "CAL002" in {f.code for f in report.findings}


def test_a_mention_that_selects_no_new_block_gives_the_same_result(tmp_path, monkeypatch):
    """What the reuse above relies on: a root's result depends on its mentions only through the
    blocks they make entry points."""
    from compile_ad_lint.pipeline.workspace import Workspace

    (tmp_path / "lib.py").write_text(LIB)
    (tmp_path / "train.py").write_text(CALLER_ANCHORED)
    monkeypatch.chdir(tmp_path)
    train = (tmp_path / "train.py").resolve()

    def analyzed(mentions: frozenset[str]):
        workspace = Workspace(Config(root=tmp_path), None, [tmp_path], {train: "train.py"}, {})
        return workspace.analyze(train, mentions)

    plain = analyzed(frozenset())
    assert plain.events and plain.caller_requests == frozenset()
    assert analyzed(frozenset({"step"})) == plain


def test_checks_leave_the_hosts_garbage_collector_settings_as_they_were(project):
    """The analysis collects less often while it runs; flake8 and the editor host it in their own
    process, so the thresholds come back, also when checks run in several threads at once."""
    import gc

    before = gc.get_threshold()
    threads = [threading.Thread(target=lambda: _check(use_cache=False)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    _check(use_cache=False)
    assert gc.get_threshold() == before


def test_a_cancelled_check_stops_and_keeps_the_roots_it_finished(project, monkeypatch):
    """The language server's project pass gives way to the next edit: ``cancelled`` is asked before
    each root and each function walk, and the roots finished before it said so are served from the
    cache afterwards."""
    from compile_ad_lint.api import AnalysisCancelled

    fresh = _check(use_cache=False)
    seen = count_analyses(monkeypatch)
    analyzer = Analyzer(Config(root=Path.cwd()), jobs=1)
    with pytest.raises(AnalysisCancelled):
        analyzer.check(["."], cancelled=lambda: True)
    assert seen == []
    # Sources make the check run in this process (overrides are never sent to workers), as the
    # language server's does; here they hold what the disk holds.
    sources = {p.resolve(): p.read_bytes() for p in project.rglob("*.py")}
    with pytest.raises(AnalysisCancelled):
        analyzer.check(["."], sources=sources, cancelled=lambda: len(seen) >= 2)  # in the second root
    assert len(seen) == 2
    finished, stopped = seen
    seen.clear()
    report = analyzer.check(["."], sources=sources)
    assert finished not in seen  # reused from the cache
    assert stopped in seen  # its walk was cut short: nothing was stored for it
    assert report.findings == fresh.findings


def test_a_cancelled_root_stops_inside_its_walks(project):
    """Within a root the interpreter asks before each function walk (a root can take seconds)."""
    from compile_ad_lint.api import AnalysisCancelled
    from compile_ad_lint.pipeline.workspace import Workspace

    train = (project / "train.py").resolve()
    workspace = Workspace(Config(root=project), None, [project], {train: "train.py"}, {})
    asked = []

    def after_three_walks() -> bool:
        asked.append(True)
        return len(asked) > 3

    with pytest.raises(AnalysisCancelled):
        workspace.analyze(train, frozenset(), after_three_walks)
    assert len(asked) == 4
    assert workspace.analyze(train, frozenset()).events  # the same workspace analyzes it in full after


def _tree_with_every_kind_of_miss(root: Path) -> list[Path]:
    """Two import roots holding packages, plain modules, a folder named like a module, a file named
    like a package, a package without ``__init__.py``, an ``__init__.py`` that is a folder and a
    symlinked package, and a third root that is gone (deleted while an editor session runs);
    returns the roots."""
    first, second = root / "first", root / "second"
    for folder in ("pkg/sub", "nsp/inner", "odd.py", "bad/__init__.py", "target"):
        (first / folder).mkdir(parents=True)
    files = "pkg/__init__.py pkg/sub/__init__.py pkg/mod.py pkg/flat nsp/inner/leaf.py target/__init__.py"
    for file in (*files.split(), "target/deep.py", "top.py", "main.py"):
        (first / file).write_text("")
    (first / "linked").symlink_to(first / "target", target_is_directory=True)
    (second / "other").mkdir(parents=True)
    (second / "other" / "__init__.py").write_text("")
    (second / "only_here.py").write_text("")
    (second / "pkg.py").write_text("")  # shadowed: the first root's package wins
    return [first, second, root / "gone" / "src"]


def _reference_search(dotted: str, roots: list[Path]) -> tuple[Path | None, set[tuple[str, str]]]:
    """What an import finds, asking the file system about each candidate in turn, and the missing
    entry of each candidate tried before: the deepest existing folder above it and its entry."""
    missed: set[tuple[str, str]] = set()
    parts = dotted.split(".")
    for root in roots:
        for candidate in (root.joinpath(*parts, "__init__.py"), root.joinpath(*parts[:-1], parts[-1] + ".py")):
            if candidate.is_file():
                return candidate.resolve(), missed
            folder, entry = candidate.parent, candidate.name
            while not folder.is_dir():
                folder, entry = folder.parent, folder.name
            missed.add((str(folder), entry))
    return None, missed


@pytest.mark.parametrize(
    "dotted",
    (
        "pkg pkg.sub pkg.mod pkg.flat pkg.flat.x pkg.missing pkg.missing.deeper nsp nsp.inner nsp.inner.leaf odd "
        "bad bad.x linked linked.deep top top.x other only_here numpy numpy.linalg.norm torch.nn.functional"
    ).split(),
)
def test_module_search_finds_and_records_what_the_file_system_says(tmp_path, dotted):
    roots = _tree_with_every_kind_of_miss(tmp_path)
    index = ModuleIndex(lambda *_: pytest.fail("no view is needed to look a module up"), roots[1:])
    expected, missed = _reference_search(dotted, roots)
    first = roots[0]
    assert index.find_module(dotted, first / "main.py") == expected
    assert index.absent == missed


def test_module_search_asks_the_file_system_once_per_root_and_name(tmp_path, monkeypatch):
    """Every importer searches the same roots (every checked file's package root: 61 in lerobot),
    so an answer found for one importer serves the others without asking the file system again."""
    first, *others = _tree_with_every_kind_of_miss(tmp_path)
    (first / "pkg" / "sub" / "user.py").write_text("")  # in a package: same import root as main.py
    index = ModuleIndex(lambda *_: pytest.fail("no view is needed to look a module up"), [first, *others])
    names = ("pkg.mod", "only_here", "numpy", "torch.nn.functional", "pkg.missing")
    answers = [index.find_module(name, first / "main.py") for name in names]
    index.start_recording()

    list(index.search_roots(first / "pkg" / "sub" / "user.py"))  # the importer's own package root: asked once
    asked: list[object] = []

    def recording(function):
        return lambda path, *args, **kwargs: asked.append(path) or function(path, *args, **kwargs)

    for name in ("stat", "lstat", "listdir", "scandir"):
        monkeypatch.setattr(os, name, recording(getattr(os, name)))
    again = [index.find_module(name, first / "pkg" / "sub" / "user.py") for name in names]
    monkeypatch.undo()
    assert again == answers
    assert not asked, "the file system was asked again"
    assert (str(first / "pkg"), "missing") in index.absent
