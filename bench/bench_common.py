"""What the bench modules share: where things are, the labels of the measured runs, what a project copy skips."""

from __future__ import annotations

import os
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
FIXTURES = REPO / "fixtures"
CACHE_DIRNAME = ".compile_ad_lint_cache"
TORCHFIX_REQUIREMENTS = BENCH_DIR / "requirements-torchfix.txt"
#: Outside the repository, so that linters and tests run over the repo never walk into it.
TORCHFIX_VENV = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "compile-ad-lint-bench" / "torchfix-venv"
)
PARSE_ONLY = BENCH_DIR / "parse_only.py"
ANCHOR_MARKER = b".backward("
MB = 1024 * 1024

# Row names, in table order (the smoke test checks these).
OURS_COLD = "ours cold (default jobs)"
OURS_WARM = "ours warm (nothing changed)"
OURS_TOUCHED = "ours after touching 1 file"
OURS_COLD_J1 = "ours cold --jobs 1"
OURS_WARM_TEXT = "ours warm, text report (what a user runs)"
OURS_COLD_TEXT = "ours cold, text report (what a user runs)"
OURS_DIFF_WARM = "ours --diff, warm (the fixes as a diff)"
TORCHFIX = "TorchFix --select ALL"
PARSE_1 = "LibCST parse-only, 1 process"
PARSE_2 = "LibCST parse-only, 2 processes"
FLAKE8_FILE = "flake8 --select CAL <file>, after a warm CLI run"
FLAKE8_COLD = "flake8 --select CAL . (cold: no cache)"
FLAKE8_AGAIN = "flake8 --select CAL . again (cache kept)"
FLAKE8_WITHOUT_CAL = "flake8 --select CAL . without our plugin (flake8's own checkers)"
#: ``flake8`` with every installed plugin but ours (bench/flake8_without_cal.py).
FLAKE8_WITHOUT_CAL_SCRIPT = Path(__file__).resolve().parent / "flake8_without_cal.py"
LSP_COLD = "language server, no cache on disk"
LSP_WARM = "language server, after a warm CLI run"
LSP_COLD_AT_ONCE = "language server, no cache, edits at once"
LSP_WARM_AT_ONCE = "language server, warm CLI, edits at once"
#: (session, cache on disk from a warm CLI run, edits wait until the server is idle). The issue's
#: target is for edits "once the project is analyzed" (the first two); the others start editing
#: right after the open's diagnostics, the worst case, reported beside them.
LSP_SESSIONS = (
    (LSP_COLD, False, True),
    (LSP_WARM, True, True),
    (LSP_COLD_AT_ONCE, False, False),
    (LSP_WARM_AT_ONCE, True, False),
)

#: Files and folders of a ``--corpus DIR`` project that are copied (everything that changes what
#: the CLI or flake8 check or how they are configured); nothing else of the project is needed.
PROJECT_SUFFIXES = (".py", ".pyi", ".ipynb")
PROJECT_CONFIG_FILES = ("pyproject.toml", "setup.py", "setup.cfg", "tox.ini", ".flake8")
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
COPY_SKIP_DIRS = {
    ".git",
    ".hg",
    ".svn",
    CACHE_DIRNAME,
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "node_modules",
    ".eggs",
    ".ipynb_checkpoints",
}
