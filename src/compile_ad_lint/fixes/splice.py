"""A transformed module's text from the original text and the code of the statements that changed.

``Module.code`` renders every node of the file; fixes change a few statements. The transformation
(``transform._Apply``) rebuilds only the nodes on the paths down to the nodes it changes and keeps
every other node as it was (the same object), so the new module's code is the original text with
each changed run of statements replaced by that run's code, rendered at its indentation.

Each run's original text is rendered too and must be found where the positions say it starts;
anything this does not follow (a run at the end of a file without a final newline, an indentation
it does not know, a node rebuilt in another shape) answers None, and the caller renders the whole
module: the result is byte for byte what ``Module.code`` gives, or nothing.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Sequence

import libcst as cst

from .parsed import ParsedModule


class _Mismatch(Exception):
    """The new module is not the original with runs of statements replaced as this module follows."""


def spliced_code(parsed: ParsedModule, new: cst.Module, through: Collection[cst.CSTNode]) -> str | None:
    """``new.code``, built from ``parsed.text`` and the changed statements' code; None when it cannot be.

    ``through`` holds the original nodes the transformation rebuilt without changing anything but
    their children (the ancestors of the changed nodes, and the blocks whose statements changed):
    the search for changed statements descends only through them."""
    old = parsed.module
    regions: list[tuple[int, int, str]] = []
    try:
        _same_frame(old, new)
        _block(_Context(parsed, through), old, new, "", regions)
    except _Mismatch:
        return None
    text = parsed.text
    pieces, at = [], 0
    for start, end, replacement in sorted(regions):
        if start < at:
            return None
        pieces += [text[at:start], replacement]
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


class _Context:
    def __init__(self, parsed: ParsedModule, through: Collection[cst.CSTNode]) -> None:
        self.parsed = parsed
        self.through = through
        self.starts = parsed.lines[1]

    def render(self, statements: Sequence[cst.BaseStatement], indent: str) -> str:
        """The statements' code at ``indent`` (the indentation of the block holding them)."""
        if not statements:
            return ""
        module = self.parsed.module
        if not indent:  # at module level (a block may not have an empty indent)
            return module.code_for_node(cst.Module(body=statements, header=(), footer=()))  # type: ignore[arg-type]
        block = cst.IndentedBlock(body=statements, indent=indent, header=cst.TrailingWhitespace(), footer=())
        code = module.code_for_node(block)
        header = module.default_newline  # the block's header: an empty line end
        if not code.startswith(header):
            raise _Mismatch
        return code[len(header) :]

    def start(self, statement: cst.CSTNode) -> int:
        """Where ``statement``'s code (its leading lines and decorators included) starts in the text
        (``_region`` checks the text there)."""
        line = self.parsed.positions.code_line(statement)  # known without rendering the statement
        if line is None:
            lines = len(getattr(statement, "leading_lines", ()))
            decorators = getattr(statement, "decorators", ())
            anchor = decorators[0] if decorators else statement
            if decorators:
                lines += len(decorators[0].leading_lines)
            span = self.parsed.positions.get(anchor)
            if span is None:
                raise _Mismatch
            line = span.start.line - lines
        if not 1 <= line < len(self.starts):
            raise _Mismatch
        return self.starts[line - 1]


def _same_frame(old: cst.Module, new: cst.Module) -> None:
    """The module's own parts (everything but its statements) unchanged."""
    if not (
        _same(old.header, new.header)
        and _same(old.footer, new.footer)
        and (old.encoding, old.default_indent, old.default_newline, old.has_trailing_newline)
        == (new.encoding, new.default_indent, new.default_newline, new.has_trailing_newline)
    ):
        raise _Mismatch


def _same(old: Sequence[cst.CSTNode], new: Sequence[cst.CSTNode]) -> bool:
    return len(old) == len(new) and all(a is b for a, b in zip(old, new))


def _block(
    context: _Context,
    old: cst.Module | cst.IndentedBlock,
    new: cst.Module | cst.IndentedBlock,
    outer: str,
    regions: list[tuple[int, int, str]],
) -> None:
    """The changed runs of ``old``'s statements (``outer``: the indentation around the block)."""
    if isinstance(old, cst.IndentedBlock):
        assert isinstance(new, cst.IndentedBlock)
        if old.indent != new.indent or old.header is not new.header or not _same(old.footer, new.footer):
            raise _Mismatch
        indent = outer + (old.indent if old.indent is not None else context.parsed.module.default_indent)
    else:
        indent = ""
    before, after = list(old.body), list(new.body)
    matcher = difflib.SequenceMatcher(None, [id(s) for s in before], [id(s) for s in after], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag == "replace" and i2 - i1 == j2 - j1:
            for i, j in zip(range(i1, i2), range(j1, j2)):
                if not _descend(context, before[i], after[j], indent, regions):
                    _region(context, before, i, i + 1, after[j : j + 1], indent, regions)
            continue
        if i1 == i2:  # an insertion: take in the statement after it (or before it, at the end)
            if i1 < len(before):
                _region(context, before, i1, i1 + 1, [*after[j1:j2], before[i1]], indent, regions)
            elif i1 > 0:
                _region(context, before, i1 - 1, i1, [before[i1 - 1], *after[j1:j2]], indent, regions)
            else:
                raise _Mismatch
            continue
        _region(context, before, i1, i2, after[j1:j2], indent, regions)


def _descend(
    context: _Context, old: cst.CSTNode, new: cst.CSTNode, indent: str, regions: list[tuple[int, int, str]]
) -> bool:
    """Find the changes inside ``old`` when it was only rebuilt around changed children; False when
    it must be rendered whole (the regions found below it are then dropped)."""
    if old not in context.through or type(old) is not type(new):
        return False
    if isinstance(old, cst.IndentedBlock):
        assert isinstance(new, cst.IndentedBlock)
        found: list[tuple[int, int, str]] = []
        _block(context, old, new, indent, found)
        regions += found
        return True
    before, after = old.children, new.children
    if len(before) != len(after):
        return False
    found = []
    for a, b in zip(before, after):
        if a is not b and not _descend(context, a, b, indent, found):
            return False
    regions += found
    return True


def _region(
    context: _Context,
    before: list[cst.BaseStatement],
    first: int,
    end: int,
    statements: Sequence[cst.BaseStatement],
    indent: str,
    regions: list[tuple[int, int, str]],
) -> None:
    """Statements ``first``..``end`` (exclusive) of a block become ``statements``."""
    old = context.render(before[first:end], indent)
    start = context.start(before[first])
    if context.parsed.text[start : start + len(old)] != old:
        raise _Mismatch
    regions.append((start, start + len(old), context.render(statements, indent)))
