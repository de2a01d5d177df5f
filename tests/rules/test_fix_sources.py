"""How fixes read the files they edit (``fixes.parsed.ParsedModule``) without LibCST's costliest
metadata, and answer as that metadata would.

- Positions: a fix asks where a few nodes are; ``ParsedModule.positions`` renders the statements
  holding them, each where ``ast`` says its code starts, where ``PositionProvider`` renders the
  whole module. Compared with the whole module's positions, node by node, on every fixture and on
  files shaped to trip it.
- Parents: a fix asks for the parents of a few nodes; ``ParsedModule.parent`` finds them by
  descending from the module through the children whose extent holds the node, where
  ``ParentNodeProvider`` visits every node of the file. Compared with it on every fixture.
- Imports: ``ParsedModule.bindings`` (the standard ``ast``) answers "is ``torch`` (or the config
  module's alias) bound by these imports here" when only module-level imports bind the name;
  LibCST's scope analysis answers otherwise. Compared with it on every call of each case below,
  for each name and each set of allowed import statements the fixes ask about.
"""

from __future__ import annotations

import textwrap
import threading
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import ParentNodeProvider

from compile_ad_lint.core.locations import Location
from compile_ad_lint.fixes import config_patch, imports
from compile_ad_lint.fixes.parsed import ParsedModule
from compile_ad_lint.fixes.positions import Positions

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
#: What fixes ask the parents of, and the nodes on the way (whitespace and punctuation aside).
ASKED = (
    cst.BaseExpression,
    cst.BaseStatement,
    cst.BaseSmallStatement,
    cst.BaseSuite,
    cst.Decorator,
    cst.Arg,
    cst.Param,
)


def _parsable(path: Path) -> bool:
    try:
        cst.parse_module(path.read_bytes())
    except cst.ParserSyntaxError:
        return False  # the fixture of an unparsable file
    return True


#: The fixtures with code in them (empty package markers aside) that LibCST parses.
FIXTURE_FILES = [p for p in sorted(FIXTURES.rglob("*.py")) if p.read_bytes().strip() and _parsable(p)]


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_parents_are_found_as_the_parent_provider_finds_them(path: Path) -> None:
    parsed = ParsedModule(path.name, path.read_bytes())
    truth = parsed.wrapper.resolve(ParentNodeProvider)
    asked = [node for node in truth if isinstance(node, ASKED)]
    assert asked
    for node in asked:
        assert parsed.parent(node) is truth[node]
        # The search descends only through extents that hold the node: each parent's does.
        extent, span = parsed._extent(truth[node]), parsed.positions[node]
        assert extent is not None
        assert extent[0] <= (span.start.line, span.start.column)
        assert (span.end.line, span.end.column) <= extent[1]
    assert parsed.parent(parsed.module) is None
    assert parsed.parent(cst.Name("elsewhere")) is None


#: Files shaped to trip the positions of one statement: decorators with comments between them,
#: every kind of block (``elif``, ``except*``, ``else`` of loops, ``match``), comments indented
#: off the block, several statements on a line, line continuations, tabs, CRLF, a lone CR, form
#: feeds, a byte order mark, a declared encoding, no final newline.
SHAPES: dict[str, bytes] = {
    "blocks": textwrap.dedent(
        """\
        import torch  # c
        x = 1; y = 2
        # lead comment

        @dec  # c
        # between
        @other(
            1,
        )
        # after decorators
        def f(a,
              b):
            \"\"\"doc\"\"\"
            if a:
                g(a)
            elif b:
                g(b)  # tail
              # odd comment
            elif a and b:
                pass
            else:
                g(1); g(2)
            # footer comment

            try:
                h()
            except ValueError as e:
                h(e)
            else:
                h(3)
            finally:
                h(4)
            for i in range(3):
                h(i)
            else:
                h(5)
            while a:
                h(6)
            else:
                h(7)
            with torch.autocast("cpu"), open("f") as fh:
                h(fh)
            match a:
                case [x, *rest] if x:
                    h(9)
                case _:
                    h(10)
            if a: h(11)
            class Inner:
                def m(self):
                    return h(12)
            return \\
                h(13)

        async def af():
            async for i in ai():
                await h(i)
            async with ctx() as c:
                await h(c)

        class C(Base, metaclass=M):
            x: int = 1
            def __init__(self): self.y = f(1,
                2)

        if __name__ == "__main__":
            try:
                f(1, 2)
            except* ValueError:
                h(14)
        """
    ).encode(),
    "tabs, mixed indentation": b"def f():\n\tif x:\n\t\treturn g(1)\n\telse:\n\t   return g(2)\n\ncall(f())\n",
    "CRLF": b"import torch\r\n\r\ndef f():\r\n    # c\r\n    return g(1)\r\n\r\nclass A:\r\n    def m(self):\r\n        return g(2)\r\n",
    "lone CR": b"import torch\rdef f():\r    return g(1)\r",
    "form feeds": b"import torch\n\x0c\ndef f():\n    return g(1)\n\x0c\nclass A:\n    pass\n",
    "byte order mark": "\ufeffimport torch\ndef f():\n    return g(1)\n".encode(),
    "declared encoding": "# -*- coding: latin-1 -*-\ns = 'caf\xe9'\ndef f():\n    return g(s)\n".encode("latin-1"),
    "no final newline": b"def f():\n    return g(1)\n\ncall(f())",
}


#: Every fixture and every shape, by name.
POSITION_CASES = [*((str(p.relative_to(FIXTURES)), p.read_bytes()) for p in FIXTURE_FILES), *SHAPES.items()]


@pytest.mark.parametrize("name, data", POSITION_CASES, ids=[name for name, _ in POSITION_CASES])
def test_positions_of_the_statements_asked_about_are_the_whole_module_s(name: str, data: bytes) -> None:
    parsed = ParsedModule(name, data)
    truth = Positions(parsed.wrapper, parsed.text, lambda: parsed.lines[1], lambda: parsed.syntax_tree)
    truth.whole()
    parents = parsed.wrapper.resolve(ParentNodeProvider)
    asked = sorted(
        (node for node in truth if isinstance(node, ASKED) and not isinstance(node, cst.IndentedBlock)),
        key=lambda node: (truth[node].start.line, truth[node].start.column),
    )
    assert asked
    for node in asked:
        span = truth[node]
        where = Location(name, span.start.line, span.start.column + 1, span.end.line, span.end.column + 1)
        assert node in parsed.nodes_starting_at(where, type(node))
        assert parsed.positions[node] == span
        assert parsed.parent(node) is parents[node]
    # Rendered a statement at a time, except where the last statement has no final newline (the
    # module's rendering drops it): that file's positions are the whole module's.
    assert parsed.positions.covers_module == (name == "no final newline")


def test_threads_sharing_a_module_ask_about_statements_at_once() -> None:
    """The language server's fix and request threads may share a parsed module: statements rendered
    by one thread while another asks about its own give both the whole module's answers."""
    for _ in range(5):
        parsed = ParsedModule("blocks.py", SHAPES["blocks"])
        assert _asked_at_once(parsed) == []
        assert not parsed.positions.covers_module


def _asked_at_once(parsed: ParsedModule) -> list[str]:
    """The calls three threads found at a wrong place or under a wrong parent, each thread asking
    about every call of ``parsed`` in its own order."""
    truth = Positions(parsed.wrapper, parsed.text, lambda: parsed.lines[1], lambda: parsed.syntax_tree)
    truth.whole()
    parents = parsed.wrapper.resolve(ParentNodeProvider)
    calls: list[cst.CSTNode] = [node for node in truth if isinstance(node, cst.Call)]
    failures: list[str] = []

    def ask(order: list[cst.CSTNode]) -> None:
        for node in order:
            span = truth[node]
            where = Location(parsed.display, span.start.line, span.start.column + 1, span.end.line, span.end.column + 1)
            try:
                if node not in parsed.nodes_at(where, cst.Call) or parsed.parent(node) is not parents[node]:
                    failures.append(str(span))
            except Exception as error:  # a thread's exception is not the test's: say it here
                failures.append(repr(error))

    threads = [threading.Thread(target=ask, args=(order,)) for order in (calls, calls[::-1], calls[1::2] + calls[::2])]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return failures


CASES = {
    "plain import before the calls": """
        import torch
        import torch._functorch.config as fc
        from torch._functorch import config

        step = torch.compile(f)

        def train(x):
            loss = step(x)
            return loss

        loss = step(x)
        """,
    "the config module imported in full": """
        import os, torch._functorch.config
        step = torch.compile(f)
        out = step(x)
        """,
    "an alias shadowed by a parameter": """
        import torch
        import torch._functorch.config as fc

        def train(x, fc):
            return step(x)
        """,
    "an import after a module-level call": """
        step(x)
        import torch
        import torch._functorch.config as fc
        step(y)
        """,
    "an import inside a function": """
        def train(x):
            import torch
            return step(x)

        step(x)
        """,
    "an optional import": """
        try:
            import torch
        except ImportError:
            torch = None
        step(x)
        """,
    "imports in an if block and a try block at module level": """
        import sys
        if sys.version_info >= (3, 8):
            import torch
        try:
            from torch._functorch import config as cfg
        except ImportError:
            pass
        step(x)

        def f():
            return step(x)
        """,
    "a class attribute and a comprehension variable": """
        import torch
        import torch._functorch.config as fc

        class Trainer:
            torch = None

            def step(self, x):
                return [fc for fc in step(x)]
        """,
    "a global declaration": """
        import torch

        def load():
            global torch
            torch = object()

        step(x)
        """,
    "torch from another package": """
        from mylib import torch
        import torch._functorch.config as fc
        step(x)
        """,
    "a star import": """
        from torch import *
        import torch
        step(x)
        """,
    "no torch at all": """
        import numpy as np
        step(x)

        def f():
            return step(x)
        """,
    "two imports on one line": """
        import torch; import torch._functorch.config as fc
        import torch._functorch.config as fc
        step(x)
        """,
    "text before an import on its line": """
        x = "éé"; import torch._functorch.config as fc; import torch
        from torch._functorch import config
        step(x)
        """,
    "an alias deleted": """
        import torch
        import torch._functorch.config as fc
        del fc
        step(x)
        """,
    "an exception, a walrus and a match bind names": """
        import torch
        import torch._functorch.config as fc
        try:
            step(x)
        except ValueError as fc:
            pass
        if (torch := step(x)):
            pass
        match x:
            case {"a": 1, **config}:
                step(config)
        """,
    "a decorator evaluated at module level": """
        @step(x)
        def f():
            pass
        import torch
        """,
}

NAMES = ("torch", "fc", "config", "cfg", "np")


def _parsed(text: str, *, fast: bool) -> ParsedModule:
    parsed = ParsedModule("case.py", textwrap.dedent(text).encode())
    if not fast:
        parsed.__dict__["bindings"] = None  # the scope analysis answers every question
    return parsed


def _calls(parsed: ParsedModule) -> list[cst.Call]:
    return [node for node in parsed.positions if isinstance(node, cst.Call)]


def _allowed_sets(parsed: ParsedModule) -> list[list[cst.CSTNode] | None]:
    return [None, *imports.config_imports(parsed).values()]


def _answers(parsed: ParsedModule) -> list[object]:
    answers: list[object] = []
    calls = _calls(parsed)
    for name in NAMES:
        for number, allowed in enumerate(_allowed_sets(parsed)):
            answers.append(("only imports", name, number, config_patch._only_imports(parsed, name, allowed)))
            for index, call in enumerate(calls):
                answers.append(("binds", name, number, index, imports._binds(parsed, [call], name, allowed)))
            if calls:
                answers.append(("binds all", name, number, imports._binds(parsed, calls, name, allowed)))
        answers.append(("bound", name, config_patch._bound_at_module_level(parsed, name)))
    return answers


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_import_table_answers_as_the_scope_analysis_does(case: str) -> None:
    text = CASES[case]
    fast, slow = _parsed(text, fast=True), _parsed(text, fast=False)
    assert _answers(fast) == _answers(slow)


# A lone carriage return hides the coding declaration from Python (and LibCST): UTF-8 there.
@pytest.mark.parametrize(("newline", "encoding"), [("\n", "latin-1"), ("\r\n", "latin-1"), ("\r", "utf-8")])
def test_the_import_table_reads_declared_encodings_and_every_line_ending(newline: str, encoding: str) -> None:
    lines = [
        f"# -*- coding: {encoding} -*-",
        'x = "\u00e9\u00e9"; import torch._functorch.config as fc; import torch',
        "step(x)",
        "def f(fc):",
        "    return step(x)",
        "",
    ]
    data = newline.join(lines).encode(encoding)
    fast, slow = ParsedModule("case.py", data), ParsedModule("case.py", data)
    slow.__dict__["bindings"] = None
    assert fast.bindings is not None
    assert fast.bindings["torch"] == (("import", 2, 48),)  # characters, not UTF-8 bytes (50)
    assert _answers(fast) == _answers(slow)


def test_the_import_table_leaves_shadowed_names_to_the_scope_analysis() -> None:
    parsed = _parsed(CASES["an alias shadowed by a parameter"], fast=True)
    assert imports.module_imports(parsed, "fc") is None  # the parameter binds it too
    assert imports.module_imports(parsed, "torch") == (("import", 2, 0),)
    assert _parsed(CASES["a star import"], fast=True).bindings is None


def test_a_fix_in_a_file_bound_only_by_imports_needs_no_scope_analysis() -> None:
    parsed = _parsed(CASES["plain import before the calls"], fast=True)
    spelling, added = imports.config_module(parsed, _calls(parsed)[1:], "case.py")
    assert (spelling, added) == ("config", [])  # `from torch._functorch import config` sorts first
    assert "scopes" not in parsed.__dict__
