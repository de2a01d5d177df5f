"""Write the framework corpus (bench/README.md, "framework") from its checked-in modules.

``bench/corpora/framework/`` holds one framework, package ``forge``, as real files: the modules of a
training code base shaped like torchtitan, nanoGPT and vjepa2 (read for their structure; nothing is
copied), with the hazards the analyzer must report marked ``# expect: CALnnn`` on the reported
line. This script copies it, renames the package for every copy (``forge``, ``forge2``, ...; each
with its own ``scripts/<pkg>/`` and ``tests/<pkg>/``, each importing only itself, so the project
grows by whole frameworks for the growth check) and pads every non-``__init__`` module of the
package with 4 to 14 helpers (``bench/corpora/framework_padding.py``), as real modules carry code a
given entry point never reaches. The marks are read back with the fixtures' helper
(``compile_ad_lint.testing.expected_in``). Deterministic: the same arguments give the same bytes.

Usage: ``python bench/framework_corpus.py OUT_DIR [--copies N] [--package NAME]``.
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from compile_ad_lint.testing import expected_in

CORPORA = Path(__file__).resolve().parent / "corpora"
SOURCE = CORPORA / "framework"
PADDING = CORPORA / "framework_padding.py"
#: The package name the checked-in modules use; every copy replaces it as a whole word.
SOURCE_PACKAGE = "forge"
DEFAULT_PACKAGE = SOURCE_PACKAGE
#: The line of Trainer.forward_backward_step that run_bench.py's language-server client edits.
EDIT_LINE_TEXT = '        step_tag = "fwd-bwd"\n'

# -- padding ---------------------------------------------------------------------------------------

_VERBS = (
    "normalize",
    "summarize",
    "validate",
    "bucketize",
    "accumulate",
    "project",
    "smooth",
    "select",
    "merge",
    "split",
    "clip",
    "rescale",
    "describe",
    "gather",
)
_NOUNS = (
    "batch",
    "tokens",
    "logits",
    "weights",
    "grads",
    "stats",
    "shards",
    "frames",
    "features",
    "masks",
    "scores",
    "buffers",
    "records",
    "offsets",
)
_PLACEHOLDER = re.compile(r"\b(NAME|CAMEL|VERB|NOUN|K|EPS|CALL)\b")


def _seed(*parts: object) -> int:
    return zlib.crc32("/".join(map(str, parts)).encode())


def padding_templates(path: Path = PADDING) -> list[str]:
    """The padding file's top-level definitions, in order (what comes before the first is its preamble)."""
    text = path.read_text(encoding="utf-8")
    starts = [m.start() for m in re.finditer(r"^(?:def|class) ", text, re.MULTILINE)]
    return [text[a:b].strip("\n") + "\n" for a, b in zip(starts, [*starts[1:], len(text)])]


def _is_config_flattener(template: str) -> bool:
    return "def NAME(config" in template  # it takes a mapping, not the chained value


def _helpers(key: str, count: int, templates: list[str]) -> str:
    """``count`` helpers for the module ``key``; the first is ``_prepare`` (one argument), chained to a few others."""
    seed = _seed("helpers", key)
    names, chosen = [], []
    for j in range(count):
        verb = _VERBS[(seed >> (j % 16)) % len(_VERBS)]
        noun = _NOUNS[(seed // (j + 3)) % len(_NOUNS)]
        template = templates[(seed // (j + 1)) % len(templates)]
        if j == 0:  # one positional argument and a plain return: callable as _prepare(x) anywhere
            template = templates[(0, 1, 3, 5)[seed % 4]]
        names.append("_prepare" if j == 0 else f"{verb}_{noun}_{j}")
        chosen.append((template, verb, noun))
    chunks = []
    for j, (template, verb, noun) in enumerate(chosen):
        chained = j + 1 < count and j < 3 and not _is_config_flattener(templates[(seed // (j + 2)) % len(templates)])
        following = chosen[j + 1][0] if j + 1 < count else None
        next_is_function = (
            following is not None and not following.startswith("class ") and not _is_config_flattener(following)
        )
        values = {
            "NAME": names[j],
            "CAMEL": "".join(part.capitalize() for part in names[j].strip("_").split("_")),
            "VERB": verb.capitalize(),
            "NOUN": noun,
            "K": str(2 + (seed + j) % 5),
            "EPS": f"{(1 + (seed + j) % 9) / 10:.1f}",
            "CALL": f"{names[j + 1]}(out)" if chained and next_is_function else "out",
        }
        chunks.append(_PLACEHOLDER.sub(lambda m, values=values: values[m.group(1)], template))
    return "\n".join(chunk.strip("\n") + "\n\n" for chunk in chunks).rstrip("\n") + "\n"


def pad(relative: str, text: str, templates: list[str]) -> str:
    """``text`` (the module ``relative`` to its package) with its helpers appended and ``import torch`` if needed."""
    if relative.endswith("__init__.py"):
        return text
    helpers = _helpers(relative, 4 + _seed("count", relative) % 11, templates)
    if "import torch\n" not in text:
        lines = text.splitlines(keepends=True)
        at = next((i for i, line in enumerate(lines) if line.startswith(("import ", "from "))), None)
        if at is None:  # no imports: after the module docstring
            at = next((i + 1 for i, line in enumerate(lines) if i > 0 and line.rstrip().endswith('"""')), 0)
            lines.insert(at, "\nimport torch\n")
        else:
            lines.insert(at, "import torch\n")
        text = "".join(lines)
    if "\ndef _prepare(" in text or "\nclass _prepare" in text:
        raise ValueError(f"{relative} defines _prepare itself: the padding would shadow it")
    return text.rstrip("\n") + "\n\n\n" + helpers


# -- copies ----------------------------------------------------------------------------------------


def package_names(copies: int, package: str = DEFAULT_PACKAGE) -> list[str]:
    return [package if k == 1 else f"{package}{k}" for k in range(1, copies + 1)]


def families(source: Path = SOURCE) -> list[str]:
    """The model families: the sub-packages of ``models/`` that register a train spec."""
    models = source / SOURCE_PACKAGE / "models"
    return sorted(
        p.parent.name for p in models.glob("*/__init__.py") if "\nregister_train_spec(" in p.read_text("utf-8")
    )


def framework_files(pkg: str, source: Path = SOURCE, templates: list[str] | None = None) -> dict[str, str]:
    """Every file of one framework copy whose package is ``pkg``: relative path -> text."""
    templates = templates if templates is not None else padding_templates()
    rename = re.compile(rf"\b{SOURCE_PACKAGE}\b")
    files: dict[str, str] = {}
    for path in sorted(source.rglob("*.py")):
        relative = path.relative_to(source)
        text = rename.sub(pkg, path.read_text(encoding="utf-8"))
        if relative.parts[0] == SOURCE_PACKAGE:  # the package: padded
            inside = relative.relative_to(SOURCE_PACKAGE).as_posix()
            files[f"{pkg}/{inside}"] = pad(inside, text, templates)
        else:  # scripts/forge/..., tests/forge/...: as they are
            files[rename.sub(pkg, relative.as_posix())] = text
    return files


def _pyproject(packages: list[str]) -> str:
    listed = ", ".join(f'"{p}*"' for p in packages)
    return textwrap.dedent(
        f"""\
        [project]
        name = "forge-framework"
        version = "0.3.0"
        requires-python = ">=3.10"
        dependencies = ["torch", "numpy"]

        [tool.setuptools.packages.find]
        include = [{listed}]

        [tool.compile-ad-lint]
        select = ["ALL"]
        """
    )


@dataclass
class Generated:
    root: Path
    packages: list[str]
    files: list[str]  # relative paths of every generated file, sorted
    expected: list[tuple[str, int, str]]  # (relative path, 1-based line, code) of each marked hazard
    trainer: str  # relative path of the first package's trainer (the file the LSP client opens)
    edit_line: int  # 1-based line of EDIT_LINE_TEXT in the trainer
    bytes: int = 0
    by_package: dict[str, int] = field(default_factory=dict)

    def edit_text(self, k: int) -> str:
        """The edited line for edit ``k`` (a real code change, same length in lines)."""
        return EDIT_LINE_TEXT.replace('"fwd-bwd"', f'"fwd-bwd-{k}"')


def generate(root: Path, copies: int = 1, package: str = DEFAULT_PACKAGE) -> Generated:
    """Write the framework (``copies`` sibling packages) under ``root``; deterministic."""
    if copies < 1:
        raise ValueError("copies must be at least 1")
    root = Path(root)
    packages = package_names(copies, package)
    templates = padding_templates()
    everything: dict[str, str] = {"pyproject.toml": _pyproject(packages)}
    by_package = {}
    for pkg in packages:
        files = framework_files(pkg, templates=templates)
        by_package[pkg] = sum(1 for name in files if name.endswith(".py"))
        everything.update(files)
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
    trainer = f"{packages[0]}/train/trainer.py"
    edit_line = everything[trainer].splitlines(keepends=True).index(EDIT_LINE_TEXT) + 1
    return Generated(
        root=root,
        packages=packages,
        files=sorted(everything),
        expected=sorted(expected),
        trainer=trainer,
        edit_line=edit_line,
        bytes=size,
        by_package=by_package,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", help="directory to write the project into (created)")
    parser.add_argument("--copies", type=int, default=1, help="sibling copies of the framework package (default 1)")
    parser.add_argument(
        "--package", default=DEFAULT_PACKAGE, help=f"name of the first package (default {DEFAULT_PACKAGE})"
    )
    args = parser.parse_args(argv)
    generated = generate(Path(args.out), args.copies, args.package)
    py = sum(1 for f in generated.files if f.endswith(".py"))
    print(
        f"{py} Python files ({generated.bytes / 1024:.0f} KiB) in {args.out}; packages {', '.join(generated.packages)}"
    )
    print(f"{len(generated.expected)} expected findings:")
    for relative, line, code in generated.expected:
        print(f"  {relative}:{line}: {code}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
