"""Write the many-entry-point corpus (bench/README.md, "examples") from its checked-in files.

The shape of the slow case of issue 48: a library of shared model, scheduler and pipeline packages
(``bench/corpora/examples/src/difflab``, laid out like huggingface/diffusers' ``src/diffusers``;
written for the bench, nothing copied) and hundreds of training-example scripts that each import it
(``examples/<task>/train_<task>_<variant>.py``, like diffusers' ``examples/``). The checked-in
``bench/corpora/examples/examples/`` holds one real script per task; this script copies each once per
model variant, changing its ``VARIANT = "..."`` line (so that no two example files are byte-identical,
as the content-keyed cache would share them), round-robin over the tasks, and copies the library as
it is. Growth in entry points (1x, 2x, 4x) is more examples over the same library.

The hazards are marked ``# expect: CALnnn`` in the checked-in files and read back from the written
ones with the fixtures' helper (``compile_ad_lint.testing.expected_in``): CAL002 in three tasks
(compile and autocast from the library's training utilities, per-block compile in place,
``accelerate`` fp16), one CAL001 in the library's forward-AD probe; the other tasks are near misses
(compiled in float32, eager under autocast, ``backward_pass_autocast="off"``, a compiled teacher under
``no_grad``). Deterministic: the same arguments give the same bytes.

Usage: ``python bench/examples_corpus.py OUT_DIR [--examples N]``.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from compile_ad_lint.testing import expected_in

SOURCE = Path(__file__).resolve().parent / "corpora" / "examples"
LIBRARY = SOURCE / "src"
TASKS = SOURCE / "examples"
#: Examples at 1x: every task once per variant below (11 tasks x 30 variants).
DEFAULT_EXAMPLES = 330
#: Model families the examples are copied for, as diffusers' examples folder holds a script per family.
VARIANTS = (
    "sd15",
    "sd21",
    "sdxl",
    "sd3",
    "flux",
    "flux2",
    "sana",
    "pixart",
    "kandinsky",
    "wuerstchen",
    "lumina",
    "lumina2",
    "hidream",
    "cogview",
    "qwen",
    "aura",
    "playground",
    "kolors",
    "hunyuan",
    "ltx",
    "mochi",
    "wan",
    "allegro",
    "latte",
    "cosmos",
    "chroma",
    "omnigen",
    "bria",
    "krea",
    "z_image",
)
_VARIANT_LINE = re.compile(r'^VARIANT = "base"$', re.MULTILINE)
PYPROJECT = """\
[project]
name = "difflab"
version = "0.9.0"
requires-python = ">=3.10"
dependencies = ["torch", "numpy", "accelerate", "transformers", "datasets"]

[tool.setuptools.packages.find]
where = ["src"]
"""


def tasks(source: Path = TASKS) -> list[Path]:
    """The checked-in example scripts, one per task, in a fixed order."""
    return sorted(source.glob("*/train_*.py"))


def example_files(count: int, source: Path = TASKS) -> dict[str, str]:
    """``count`` example scripts: relative path -> text, round-robin over the tasks and variants."""
    scripts = tasks(source)
    out: dict[str, str] = {}
    for k in range(count):
        script = scripts[k % len(scripts)]
        round_ = k // len(scripts)
        variant = VARIANTS[round_ % len(VARIANTS)] + (
            f"_v{round_ // len(VARIANTS) + 1}" if round_ >= len(VARIANTS) else ""
        )
        text = script.read_text(encoding="utf-8")
        renamed, found = _VARIANT_LINE.subn(f'VARIANT = "{variant}"', text)
        if found != 1:
            raise ValueError(f'{script}: needs exactly one line VARIANT = "base" (found {found})')
        out[f"examples/{script.parent.name}/{script.stem}_{variant}.py"] = renamed
    return out


@dataclass
class Generated:
    root: Path
    files: list[str]  # relative paths of every written file, sorted
    expected: list[tuple[str, int, str]]  # (relative path, 1-based line, code) of each marked hazard
    entry_points: int  # the example scripts
    bytes: int


def generate(root: Path, examples: int = DEFAULT_EXAMPLES) -> Generated:
    """Write the library and ``examples`` example scripts under ``root``; deterministic."""
    if examples < len(tasks()):
        # The library's marks are reached from some task's example only: every task must be there.
        raise ValueError(f"examples must be at least the number of tasks, {len(tasks())}")
    root = Path(root)
    everything = {"pyproject.toml": PYPROJECT}
    for path in sorted(LIBRARY.rglob("*.py")):
        everything[path.relative_to(SOURCE).as_posix()] = path.read_text(encoding="utf-8")
    everything.update(example_files(examples))
    expected: set[tuple[str, int, str]] = set()
    size = 0
    for relative in sorted(everything):
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        data = everything[relative].encode("utf-8")
        path.write_bytes(data)
        size += len(data)
        if relative.endswith(".py"):
            expected |= expected_in(path, display=relative)
    return Generated(root, sorted(everything), sorted(expected), examples, size)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", help="directory to write the project into (created)")
    parser.add_argument(
        "--examples", type=int, default=DEFAULT_EXAMPLES, help=f"example scripts (default {DEFAULT_EXAMPLES})"
    )
    args = parser.parse_args(argv)
    generated = generate(Path(args.out), args.examples)
    py = sum(1 for f in generated.files if f.endswith(".py"))
    print(f"{py} Python files ({generated.bytes / 1024:.0f} KiB), {generated.entry_points} examples, in {args.out}")
    print(f"{len(generated.expected)} expected findings:")
    for relative, line, code in generated.expected:
        print(f"  {relative}:{line}: {code}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
