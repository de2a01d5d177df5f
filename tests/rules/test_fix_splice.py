"""Fix edits without rendering whole files (``fixes.splice``): a file's new text is its old text with
the changed statements' code in place, and must be byte for byte what rendering the whole
transformed module gives (which ``Changes`` falls back to when the splice cannot follow).

Compared for every statement of every block wrapped in turn (alone and with an import added after
the module's imports) on files shaped to trip it: CRLF and tab indentation, no final newline,
decorators and comments before the statements, a ``match`` block, a file of imports only, a
declared encoding; and for every fix plan on the fixtures.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from compile_ad_lint import Config
from compile_ad_lint.api import Analyzer
from compile_ad_lint.fixes import Changes, PlanError, Sources, ops_for, transform
from compile_ad_lint.fixes.transform import AfterImports, Wrap

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

CASES: dict[str, bytes] = {
    "CRLF and tabs": b"import torch\r\n\r\ndef f(x):\r\n\tif x:\r\n\t\ty = g(x)  # c\r\n\r\n\t\treturn y\r\n\treturn 0\r\n",
    "no final newline": b"import torch\n\ndef f(x):\n    y = g(x)\n    return y",
    "statements at the end without a final newline": b"import torch\nx = g(1)\ny = g(x)",
    "decorators and comments": textwrap.dedent(
        """\
        \"\"\"Doc.\"\"\"
        import torch


        # before the class
        @decorate  # first
        # between
        @other(
            1,
        )
        class Model:
            # leading
            @property
            def size(self):
                return g(
                    self,  # continued
                )

            def step(self, x):  # header comment
                # before
                loss = g(x)
                # after

                return loss
            # footer of the class body


        def main():
            for batch in data:
                try:
                    loss = step(batch)
                except ValueError:
                    pass
                else:
                    loss.backward()
        # end of file
        """
    ).encode(),
    "a match block": textwrap.dedent(
        """\
        import torch

        def f(x):
            match x:
                case 1:
                    y = g(x)
                    return y
                case _:
                    return 0
        """
    ).encode(),
    "imports only": b"import torch\nfrom torch import nn\n",
    "a declared encoding": "# -*- coding: latin-1 -*-\nimport torch\n\ndef f(x):\n    s = '\u00e9t\u00e9'\n    return g(s)\n".encode(
        "latin-1"
    ),
    "a byte order mark": b"\xef\xbb\xbfimport torch\n\ndef f(x):\n    return g(x)\n",
    "one-line bodies and semicolons": b"import torch\nif x: a = 1; b = 2\nwhile y:\n    c = 3; d = 4\n",
}


def _whole(monkeypatch: pytest.MonkeyPatch, changes: Changes) -> dict[str, str]:
    """What ``changes`` renders when every file is rendered whole."""
    with monkeypatch.context() as patched:
        patched.setattr(transform, "spliced_code", lambda *_: None)
        return {display: text for display, (_, text) in changes.render().items()}


def _blocks(module: cst.Module) -> list[cst.Module | cst.IndentedBlock]:
    found: list[cst.Module | cst.IndentedBlock] = [module]

    class Blocks(cst.CSTVisitor):
        def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
            found.append(node)

    module.visit(Blocks())
    return found


@pytest.mark.parametrize("name", list(CASES))
def test_wrapping_any_statement_splices_what_the_whole_render_gives(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "case.py"
    path.write_bytes(CASES[name])
    display = str(path)
    spliced = 0
    with monkeypatch.context() as counting:
        calls: list[bool] = []
        real = transform.spliced_code

        def spy(*args):  # type: ignore[no-untyped-def]
            text = real(*args)
            calls.append(text is not None)
            return text

        counting.setattr(transform, "spliced_code", spy)
        sources = Sources()
        parsed = sources.parsed(display)
        assert parsed is not None
        for block in _blocks(parsed.module):
            for index in range(len(block.body)):
                for extra in ([], [AfterImports(display, "import torch._functorch.config")]):
                    changes = Changes(sources)
                    changes.add([Wrap(display, block, index, index, "patch()"), *extra])
                    rendered = {d: text for d, (_, text) in changes.render().items()}
                    assert rendered == _whole(monkeypatch, changes), (block, index, extra)
                    assert changes.edits() == _edits_whole(monkeypatch, changes)
        spliced = sum(calls)
    assert spliced, "the splice followed none of the changes"


def _edits_whole(monkeypatch: pytest.MonkeyPatch, changes: Changes) -> tuple:
    with monkeypatch.context() as patched:
        patched.setattr(transform, "spliced_code", lambda *_: None)
        return changes.edits()


def test_a_declared_encoding_is_kept_in_the_bytes_written(tmp_path: Path) -> None:
    path = tmp_path / "case.py"
    path.write_bytes(CASES["a declared encoding"])
    sources = Sources()
    parsed = sources.parsed(str(path))
    assert parsed is not None
    assert parsed.text == CASES["a declared encoding"].decode("latin-1")
    changes = Changes(sources)
    function = parsed.module.body[1]
    assert isinstance(function, cst.FunctionDef) and isinstance(function.body, cst.IndentedBlock)
    changes.add([Wrap(str(path), function.body, 0, 0, "patch()")])
    [(_, text)] = changes.render().values()
    assert parsed.encode(text) == (
        "# -*- coding: latin-1 -*-\nimport torch\n\ndef f(x):\n    with patch():\n        s = '\u00e9t\u00e9'\n"
        "    return g(s)\n"
    ).encode("latin-1")


@pytest.mark.slow
def test_every_fix_plan_on_the_fixtures_splices_what_the_whole_render_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES.parent)
    report = Analyzer(Config(root=FIXTURES), use_cache=False, jobs=1).check(["fixtures"])
    sources = Sources({}, dict(report.digests))
    plans = {fix.plan for finding in report.findings for fix in finding.fixes if fix.plan is not None}
    calls: list[bool] = []
    real = transform.spliced_code

    def spy(*args):  # type: ignore[no-untyped-def]
        text = real(*args)
        calls.append(text is not None)
        return text

    compared = 0
    for plan in sorted(plans, key=repr):
        changes = Changes(sources)
        try:
            changes.add(ops_for(plan, sources))
        except PlanError:
            continue
        with monkeypatch.context() as counting:
            counting.setattr(transform, "spliced_code", spy)
            rendered = {d: text for d, (_, text) in changes.render().items()}
        assert rendered == _whole(monkeypatch, changes), plan
        compared += 1
    assert compared > 50
    assert all(calls), f"{calls.count(False)} of {len(calls)} renders fell back to the whole module"
