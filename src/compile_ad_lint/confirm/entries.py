"""Choosing entry points that reach a flagged site (static, no torch).

Candidates, in order: entries the user named (``--entry``, then ``entry-points`` in the config), the
zero-argument functions enclosing the site (innermost importable first; methods of top-level classes
whose constructor takes no argument, unittest ``TestCase`` methods included), then the file's
``if __name__ == "__main__":`` block. Whether a candidate really reaches the site is checked at run
time (the eager run traces the flagged file's lines).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .. import pyast
from ..project import module_identity

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


class EntrySpecError(ValueError):
    pass


@dataclass(frozen=True)
class Entry:
    kind: str  # "function" (import module, call), "path-function" (load file, call), "main" (run as __main__)
    label: str
    module: str | None = None
    path: str | None = None
    function: str | None = None
    root: str | None = None


def parse_entry(text: str, base: Path | None = None) -> Entry:
    """``module:function``, ``module:Class.method`` or ``path/to/file.py:function``."""
    module, sep, function = text.strip().rpartition(":")
    if not sep or not module or not function or not _IDENTIFIER.match(function) or function.count(".") > 1:
        raise EntrySpecError(f"invalid entry point {text!r}: expected module:function or path/to/file.py:function")
    if module.endswith(".py") or "/" in module or "\\" in module:
        path = Path(module)
        if not path.is_absolute() and base is not None:
            path = base / path
        path = path.resolve()
        if not path.is_file():
            raise EntrySpecError(f"entry point {text!r}: no such file {path}")
        name, _, root = module_identity(path)
        return Entry("function", text, module=name, path=str(path), function=function, root=str(root))
    if not _IDENTIFIER.match(module):
        raise EntrySpecError(f"invalid entry point {text!r}: {module!r} is not a module name")
    return Entry("function", text, module=module, function=function)


@lru_cache(maxsize=256)
def _parse(path: Path, stamp: float) -> ast.Module | str:
    try:
        return pyast.parse(path.read_bytes(), filename=str(path))
    except OSError as error:
        return f"cannot read {path.name}: {error.strerror or error}"
    except SyntaxError as error:
        return f"cannot parse {path.name}: {error.msg} (line {error.lineno})"
    except (ValueError, RecursionError, MemoryError) as error:
        return f"cannot parse {path.name}: {type(error).__name__}: {error}"


def parse_file(path: Path) -> ast.Module | None:
    tree = _parsed(path)
    return tree if isinstance(tree, ast.Module) else None


def parse_problem(path: Path) -> str | None:
    """Why ``path`` cannot be parsed for its entry points (None when it can)."""
    tree = _parsed(path)
    return tree if isinstance(tree, str) else None


def _parsed(path: Path) -> ast.Module | str:
    try:
        stamp = path.stat().st_mtime
    except OSError as error:
        return f"cannot read {path.name}: {error.strerror or error}"
    return _parse(path, stamp)


def _zero_argument(node: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> bool:
    if isinstance(node, ast.AsyncFunctionDef):
        return False
    args = node.args
    positional = args.posonlyargs + args.args
    if method:
        if not positional or any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list):
            return False
        positional = positional[1:]
    required = len(positional) - len(args.defaults)
    kw_required = sum(1 for d in args.kw_defaults if d is None)
    return required <= 0 and kw_required == 0


def _class_constructible(node: ast.ClassDef, tree: ast.Module) -> bool:
    bases = {ast.unparse(b) for b in node.bases}
    if any(b.endswith("TestCase") for b in bases):
        return True
    for item in node.body:
        if isinstance(item, ast.FunctionDef) and item.name == "__init__":
            return _zero_argument(item, method=True)
    return True


def enclosing_entries(path: Path, line: int) -> list[Entry]:
    """Zero-argument functions (module level, or methods of top-level classes) around ``line``, innermost first."""
    tree = parse_file(path)
    if tree is None:
        return []
    module, _, root = module_identity(path)
    found: list[Entry] = []
    for node in tree.body:
        if not (node.lineno <= line <= (node.end_lineno or node.lineno)):
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _zero_argument(node, method=False):
            found.append(_function_entry(path, module, root, node.name))
        elif isinstance(node, ast.ClassDef) and _class_constructible(node, tree):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.lineno <= line <= (item.end_lineno or item.lineno):
                    if _zero_argument(item, method=True):
                        found.append(_function_entry(path, module, root, f"{node.name}.{item.name}"))
    return found


def _function_entry(path: Path, module: str, root: Path, function: str) -> Entry:
    if _IDENTIFIER.match(module):
        return Entry(
            "function", f"{module}:{function}", module=module, path=str(path), function=function, root=str(root)
        )
    return Entry("path-function", f"{path.name}:{function}", path=str(path), function=function, root=str(root))


def main_entry(path: Path) -> Entry | None:
    tree = parse_file(path)
    if tree is None or not any(_is_main_guard(node) for node in tree.body):
        return None
    module, _, root = module_identity(path)
    if _IDENTIFIER.match(module):
        return Entry(
            "main", f"`python -m {module}` (its __main__ block)", module=module, path=str(path), root=str(root)
        )
    return Entry("main", f"`python {path.name}` (its __main__ block)", path=str(path), root=str(root))


def _is_main_guard(node: ast.stmt) -> bool:
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    test = node.test
    sides = [test.left, *test.comparators]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    constants = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq) and bool(names) and bool(constants)


def candidates(path: Path, line: int, user_entries: list[Entry]) -> list[Entry]:
    found = list(user_entries)
    found += enclosing_entries(path, line)
    main = main_entry(path)
    if main is not None:
        found.append(main)
    unique: dict[tuple, Entry] = {}
    for entry in found:
        unique.setdefault(
            (entry.kind, entry.module, entry.path if entry.kind != "function" else None, entry.function), entry
        )
    return list(unique.values())
