"""The corpora the bench measures on: the installed torch, fixture copies, the generated framework, the
examples, a directory given with ``--corpus``."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import examples_corpus
import framework_corpus
from bench_common import (
    ANCHOR_MARKER,
    CACHE_DIRNAME,
    COPY_SKIP_DIRS,
    FIXTURES,
    MB,
    PROJECT_CONFIG_FILES,
    PROJECT_MARKERS,
    PROJECT_SUFFIXES,
)

# -- corpora ---------------------------------------------------------------------------------


@dataclass
class Corpus:
    name: str
    cwd: Path  # every tool runs here
    path: str  # the directory given to every tool, relative to cwd
    files: list[Path]  # absolute paths of the *.py files
    lines: int
    bytes: int
    anchor_file: Path | None  # the file the "touched" run appends a comment to
    #: A project (the framework corpus, ``--corpus DIR``): every tool runs at its root on ``.``, and
    #: flake8 and the language server are measured on it too.
    project: bool = False
    lsp_file: Path | None = None  # the file the language-server client opens (None: chosen from the findings)
    edit_line: int | None = None  # its 1-based line the client edits (None: the first diagnostic's line)
    edit_text: Callable[[int], str] | None = field(default=None, repr=False)  # the edited line for edit k
    expected: list | None = None  # generated corpus: the (path, line, code) the generator marked
    entry_points: int | None = None  # the examples corpus: its example scripts (growth is counted in them)
    #: Whether flake8 and the language server are measured on this project (the examples corpus is
    #: about many entry points: its rows are the CLI's).
    front_ends: bool = True

    @property
    def directory(self) -> Path:
        return self.cwd if self.path == "." else self.cwd / self.path

    @property
    def megabytes(self) -> float:
        return self.bytes / MB

    def describe(self) -> dict:
        return {
            "name": self.name,
            "path": str(self.directory),
            "files": len(self.files),
            "lines": self.lines,
            "mb": round(self.megabytes, 2),
            "anchor_file": str(self.anchor_file.relative_to(self.cwd)) if self.anchor_file else None,
            "project": self.project,
            "lsp_file": str(self.lsp_file.relative_to(self.cwd)) if self.lsp_file else None,
            "entry_points": self.entry_points,
            "front_ends": self.front_ends,
        }


def _scan(name: str, cwd: Path, path: str, **extra) -> Corpus:
    top = cwd if path == "." else cwd / path
    files = sorted(top.rglob("*.py"))
    files = [
        f
        for f in files
        if CACHE_DIRNAME not in f.parts and "__pycache__" not in f.parts and ".git" not in f.relative_to(top).parts
    ]
    lines = size = 0
    anchor = None
    for file in files:
        data = file.read_bytes()
        size += len(data)
        lines += data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        if anchor is None and ANCHOR_MARKER in data:
            anchor = file
    return Corpus(name, cwd, path, files, lines, size, anchor, **extra)


def installed_torch_dir() -> Path:
    """The installed torch package, found without importing it (importing torch takes seconds)."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("run_bench: torch is not installed in this interpreter (pip install -e '.[test]')")
    return Path(list(spec.submodule_search_locations)[0])


def prepare_torch_corpus(workdir: Path, torch_dir: Path | None = None) -> Corpus:
    """Copy every *.py of the installed torch into ``workdir/torch_corpus/torch/...``."""
    torch_dir = torch_dir or installed_torch_dir()
    target = workdir / "torch_corpus"
    for source in torch_dir.rglob("*.py"):
        if "__pycache__" in source.parts:
            continue
        destination = target / "torch" / source.relative_to(torch_dir)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, destination)
    return _scan("torch", workdir, "torch_corpus")


def mark_copy(directory: Path, label: str) -> None:
    """Append a comment naming the copy to every *.py under ``directory``.

    The summary cache is keyed by file content and module name, and the copies' modules have the
    same names, so byte-identical copies would be parsed once and then served from the cache within
    the same "cold" run. Real projects do not repeat each other byte for byte: the comment makes
    every copy's files distinct, so each copy costs what a separate project would.
    """
    for path in directory.rglob("*.py"):
        data = path.read_bytes()
        suffix = b"" if not data or data.endswith(b"\n") else b"\n"
        path.write_bytes(data + suffix + f"# compile-ad-lint bench: {label}\n".encode())


def prepare_fixtures_corpus(workdir: Path, copies: int, fixtures: Path = FIXTURES) -> Corpus:
    """``copies`` copies of the repo's fixtures/ as sibling packages ``proj_k/`` (structure kept, so imports resolve)."""
    target = workdir / "fixtures_corpus"
    for k in range(1, copies + 1):
        shutil.copytree(
            fixtures, target / f"proj_{k}", ignore=shutil.ignore_patterns("__pycache__", CACHE_DIRNAME, "*.pyc")
        )
        mark_copy(target / f"proj_{k}", f"proj_{k}")
    return _scan("fixtures", workdir, "fixtures_corpus")


def prepare_framework_corpus(workdir: Path, copies: int = 1, dirname: str = "framework_corpus") -> Corpus:
    """The generated training-framework project (bench/framework_corpus.py) at ``workdir/dirname``.

    ``copies`` > 1 puts that many sibling copies of the framework package into the same project
    (the scaling check). Every tool runs at the project root on ``.``, as a user would.
    """
    root = workdir / dirname
    generated = framework_corpus.generate(root, copies=copies)
    name = "framework" if copies == 1 else f"framework x{copies}"
    return _scan(
        name,
        root,
        ".",
        project=True,
        lsp_file=root / generated.trainer,
        edit_line=generated.edit_line,
        edit_text=generated.edit_text,
        expected=generated.expected,
    )


def prepare_examples_corpus(
    workdir: Path,
    examples: int = examples_corpus.DEFAULT_EXAMPLES,
    dirname: str = "examples_corpus",
    name: str = "examples",
) -> Corpus:
    """The generated library with ``examples`` training-example scripts (bench/examples_corpus.py) at
    ``workdir/dirname``: the shape of many entry points reaching the same shared code (issue 48)."""
    root = workdir / dirname
    generated = examples_corpus.generate(root, examples=examples)
    return _scan(
        name,
        root,
        ".",
        project=True,
        expected=generated.expected,
        entry_points=generated.entry_points,
        front_ends=False,
    )


def prepare_dir_corpus(workdir: Path, source: Path, lsp_file: str | None = None) -> Corpus:
    """A copy of the project at ``source`` (``--corpus DIR``), so that its own cache and files stay untouched.

    Copied: every ``*.py``/``*.pyi``/``*.ipynb`` and the configuration files (``pyproject.toml``,
    ``setup.py``, ``setup.cfg``, ``tox.ini``, ``.flake8``) outside VCS, cache and virtualenv folders.
    When the copy's top holds none of the project markers (``pyproject.toml``, ``setup.py``,
    ``setup.cfg``, ``.git``: a git checkout loses its ``.git`` in the copy) an empty ``.git/`` is
    created, so that the CLI, flake8 and the language server all take the copy's top as the project.
    """
    source = source.resolve()
    if not source.is_dir():
        raise SystemExit(f"run_bench: --corpus {source}: not a directory")
    root = workdir / "dir_corpora" / source.name
    for directory, dirnames, filenames in os.walk(source):
        dirnames[:] = sorted(d for d in dirnames if d not in COPY_SKIP_DIRS and not d.endswith(".egg-info"))
        relative = Path(directory).relative_to(source)
        for filename in filenames:
            if filename.endswith(PROJECT_SUFFIXES) or filename in PROJECT_CONFIG_FILES:
                target = root / relative / filename
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(Path(directory) / filename, target)
    root.mkdir(parents=True, exist_ok=True)
    if not any((root / marker).exists() for marker in PROJECT_MARKERS):
        (root / ".git").mkdir()
    chosen = None
    if lsp_file:
        chosen = root / lsp_file
        if not chosen.is_file():
            raise SystemExit(f"run_bench: --lsp-file {lsp_file}: no such file in {source}")
    return _scan(source.name, root, ".", project=True, lsp_file=chosen)


def replicate(corpus: Corpus, factor: int, workdir: Path) -> Corpus:
    """``factor`` copies of ``corpus``'s directory as siblings ``scale_Nx/copyK/...``, each analyzed as separate files."""
    target = workdir / f"scale_{factor}x"
    for k in range(1, factor + 1):
        shutil.copytree(
            corpus.directory, target / f"copy{k}", ignore=shutil.ignore_patterns("__pycache__", CACHE_DIRNAME, "*.pyc")
        )
        mark_copy(target / f"copy{k}", f"copy{k}")  # distinct bytes: see mark_copy
    return _scan(f"{corpus.name} x{factor}", workdir, target.name)
