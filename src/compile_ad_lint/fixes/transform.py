"""Carrying out fix plans: LibCST transformations of whole files, and the edits they amount to.

Each plan becomes operations on one or more files' LibCST trees (``Op``s): replace a node (with a
function of its transformed self, so nested changes compose), wrap a run of statements of a block
in a ``with``, or add a statement after the module's imports (deduplicated: an import several
fixes need is added once). ``Changes`` collects the operations of many plans and applies each
file's in one pass, so formatting and comments that no operation touches are kept byte for byte.

A plan that cannot be carried out on the text (the code is not shaped as the plan expects, a name
it needs is shadowed, it would overlap another plan's change) raises ``PlanError`` and adds nothing.
``edits_between`` turns a file's old and new text into minimal ``Edit``s (1-based, end exclusive).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import libcst as cst

from ..core.findings import Edit
from ..core.text import split_lines
from .parsed import ParsedModule
from .source import Sources
from .splice import spliced_code


class PlanError(Exception):
    """The plan does not fit the code as it is; no fix is offered for it."""


@dataclass(frozen=True)
class Replace:
    """Replace ``node`` (by identity in the file's parsed tree) with ``build(transformed node)``."""

    display: str
    node: cst.CSTNode
    build: Callable[[cst.CSTNode], cst.CSTNode]
    #: Identifies what the replacement does, so that two plans asking for the same change share it.
    key: object


@dataclass(frozen=True)
class Wrap:
    """Put statements ``first``..``last`` (indices) of ``block``'s body in ``with <item>:``."""

    display: str
    block: cst.CSTNode
    first: int
    last: int
    item: str


@dataclass(frozen=True)
class AfterImports:
    """Add ``statement`` (source of one line) after the module's leading imports, once."""

    display: str
    statement: str
    #: Whether a blank line goes before it (an assignment after the imports, not another import).
    separate: bool = False


Op = Replace | Wrap | AfterImports


@dataclass
class _FileOps:
    parsed: ParsedModule
    replaces: dict[cst.CSTNode, list[Replace]] = field(default_factory=dict)
    wraps: dict[cst.CSTNode, list[Wrap]] = field(default_factory=dict)
    after_imports: list[AfterImports] = field(default_factory=list)


class Changes:
    """Operations of many plans, applied per file in one LibCST pass each."""

    def __init__(self, sources: Sources) -> None:
        self.sources = sources
        self._files: dict[str, _FileOps] = {}

    def add(self, ops: Sequence[Op]) -> None:
        """Add one plan's operations, all or none: PlanError when one overlaps an earlier plan's."""
        for op in ops:
            self._check(op)
        for op in ops:
            file = self._for(op.display)
            if isinstance(op, Replace):
                existing = file.replaces.setdefault(op.node, [])
                if not any(other.key == op.key for other in existing):
                    existing.append(op)
            elif isinstance(op, Wrap):
                existing_wraps = file.wraps.setdefault(op.block, [])
                if op not in existing_wraps:
                    existing_wraps.append(op)
            elif op.statement not in [other.statement for other in file.after_imports]:
                file.after_imports.append(op)

    def _for(self, display: str) -> _FileOps:
        if display not in self._files:
            parsed = self.sources.parsed(display)
            if parsed is None:
                raise PlanError(f"{display} cannot be edited")
            self._files[display] = _FileOps(parsed)
        return self._files[display]

    def _check(self, op: Op) -> None:
        file = self._for(op.display)
        if isinstance(op, Replace):
            for replace in file.replaces.get(op.node, ()):
                if replace.key != op.key:
                    raise PlanError("another fix changes the same code")
        elif isinstance(op, Wrap):
            for wrap in file.wraps.get(op.block, ()):
                if wrap == op:
                    continue
                if not (op.last < wrap.first or wrap.last < op.first):
                    raise PlanError("another fix wraps some of the same statements")

    @property
    def displays(self) -> list[str]:
        return list(self._files)

    def render(self) -> dict[str, tuple[ParsedModule, str]]:
        """Each changed file's parsed original and new text."""
        return {display: (file.parsed, _new_text(file)) for display, file in self._files.items()}

    def edits(self) -> tuple[Edit, ...]:
        """The changes as minimal edits of the files' current text."""
        found: list[Edit] = []
        for display, file in self._files.items():
            local = _node_edits(display, file)
            if local is None:
                local = edits_between(display, file.parsed.text, _new_text(file))
            found += local
        return tuple(sorted(found))


def _new_text(file: _FileOps) -> str:
    """The file's text with its operations carried out: the original text with the changed
    statements' code in place (``splice.py``), or the transformed module's whole code."""
    apply = _Apply(file)
    module = file.parsed.module.visit(apply)
    assert isinstance(module, cst.Module)
    spliced = spliced_code(file.parsed, module, apply.on_paths.difference(file.replaces))
    return spliced if spliced is not None else module.code


def _node_edits(display: str, file: _FileOps) -> list[Edit] | None:
    """Edits of node replacements that do not nest, each rendered on its own (no codegen of the
    whole file, which would make a file with thousands of fixes quadratic); None otherwise."""
    if file.wraps or file.after_imports:
        return None
    parsed = file.parsed
    spans: list[tuple[tuple[int, int], tuple[int, int], cst.CSTNode]] = []
    for node in file.replaces:
        # The node with its own parentheses (positions leave them out): a build may change them.
        first = node.lpar[0] if getattr(node, "lpar", None) else node  # type: ignore[attr-defined]
        last = node.rpar[-1] if getattr(node, "rpar", None) else node  # type: ignore[attr-defined]
        start_span, end_span = parsed.positions.get(first), parsed.positions.get(last)
        if start_span is None or end_span is None:
            return None
        spans.append(((start_span.start.line, start_span.start.column), (end_span.end.line, end_span.end.column), node))
    spans.sort(key=lambda item: (item[0], item[1]))
    for (_, end, _), (start, _, _) in zip(spans, spans[1:]):
        if start < end:
            return None  # nested or overlapping: the whole-file transformation composes them
    lines, starts = parsed.lines
    edits = []
    for (line, column), (end_line, end_column), node in spans:
        new = node
        for replace in file.replaces[node]:
            new = replace.build(new)
        low, high = starts[line - 1] + column, starts[end_line - 1] + end_column
        begin, finish, replacement = _trim(parsed.text, low, high, parsed.module.code_for_node(new), low, high)
        if begin == finish and not replacement:
            continue
        edits.append(Edit(display, *_position(lines, starts, begin), *_position(lines, starts, finish), replacement))
    return edits


class _Apply(cst.CSTTransformer):
    """Carries a file's operations out, visiting only the nodes on the paths down to the nodes they
    change (a visit of every node of a large file cost more than parsing it)."""

    def __init__(self, file: _FileOps) -> None:
        super().__init__()
        self.file = file
        self.on_paths: set[cst.CSTNode] = {file.parsed.module}
        for node in [*file.replaces, *file.wraps]:
            self.on_paths.add(node)
            self.on_paths.update(file.parsed.ancestors(node))

    def on_visit(self, node: cst.CSTNode) -> bool:
        return node in self.on_paths

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore[override]
        node = updated_node
        for replace in self.file.replaces.get(original_node, ()):
            node = replace.build(node)
        wraps = self.file.wraps.get(original_node)
        if wraps:
            node = _wrap(node, wraps)
        if isinstance(original_node, cst.Module) and self.file.after_imports:
            assert isinstance(node, cst.Module)
            node = _add_after_imports(node, self.file.after_imports)
        return node


def _wrap(block: cst.CSTNode, wraps: list[Wrap]) -> cst.CSTNode:
    assert isinstance(block, (cst.Module, cst.IndentedBlock))
    body = list(block.body)
    for wrap in sorted(wraps, key=lambda w: w.first, reverse=True):
        statements = body[wrap.first : wrap.last + 1]
        first = statements[0]
        leading = list(first.leading_lines)  # type: ignore[attr-defined]
        statements[0] = first.with_changes(leading_lines=())
        with_statement = cst.With(
            items=[cst.WithItem(cst.parse_expression(wrap.item))],
            body=cst.IndentedBlock(body=statements),
            leading_lines=leading,
        )
        body[wrap.first : wrap.last + 1] = [with_statement]
    return block.with_changes(body=body)


def leading_import_count(module: cst.Module) -> int:
    """How many statements at the top of ``module`` are its docstring, ``from __future__`` and imports."""
    count = 0
    for index, statement in enumerate(module.body):
        if not isinstance(statement, cst.SimpleStatementLine):
            break
        small = statement.body
        if all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in small):
            count = index + 1
        elif (
            index == 0
            and len(small) == 1
            and isinstance(small[0], cst.Expr)
            and isinstance(small[0].value, (cst.SimpleString, cst.ConcatenatedString))
        ):
            count = 1  # the docstring
        else:
            break
    return count


def _add_after_imports(module: cst.Module, additions: list[AfterImports]) -> cst.Module:
    """Imports right after the leading imports; assignments after them, behind a blank line."""
    at = leading_import_count(module)
    body = list(module.body)
    torch_at = max((i + 1 for i, statement in enumerate(body[:at]) if _imports_torch(statement)), default=0)
    if torch_at and any(not a.separate for a in additions):  # next to the file's torch imports
        imports_only = [a for a in additions if not a.separate]
        rest_additions = [a for a in additions if a.separate]
        module = module.with_changes(
            body=[*body[:torch_at], *(_parse(module, a) for a in imports_only), *body[torch_at:]]
        )
        if not rest_additions:
            return module
        return _add_after_imports(module, rest_additions)

    def parse(addition: AfterImports) -> cst.BaseStatement:
        return cst.parse_statement(addition.statement + module.default_newline, config=module.config_for_parsing)

    imports = [parse(a) for a in additions if not a.separate]
    others = [parse(a) for a in additions if a.separate]
    after_docstring = at == 1 and not _is_import(body[0])
    if imports and after_docstring:
        imports[0] = imports[0].with_changes(leading_lines=[cst.EmptyLine()])
    if others and (at or imports):
        others[0] = others[0].with_changes(leading_lines=[cst.EmptyLine()])
    rest = body[at:]
    if others and rest and not rest[0].leading_lines:  # type: ignore[attr-defined]
        rest[0] = rest[0].with_changes(leading_lines=[cst.EmptyLine()])
    return module.with_changes(body=[*body[:at], *imports, *others, *rest])


def _parse(module: cst.Module, addition: AfterImports) -> cst.BaseStatement:
    return cst.parse_statement(addition.statement + module.default_newline, config=module.config_for_parsing)


def _imports_torch(statement: cst.CSTNode) -> bool:
    if not _is_import(statement):
        return False
    code = cst.Module([]).code_for_node(statement).strip()
    return code.startswith(("import torch", "from torch"))


def _is_import(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body
    )


def edits_between(display: str, old: str, new: str) -> list[Edit]:
    """Minimal edits that turn ``old`` into ``new``: changed runs of lines, trimmed to the
    characters that differ. Positions are 1-based lines and columns of ``old``, end exclusive."""
    if old == new:
        return []
    old_lines, new_lines = split_lines(old), split_lines(new)
    starts = [0]
    for line in old_lines:
        starts.append(starts[-1] + len(line))
    edits = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    hunks = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag == "replace" and i2 - i1 == j2 - j1:  # line for line: an edit per changed line
            hunks += [
                (i, i + 1, j, j + 1) for i, j in zip(range(i1, i2), range(j1, j2)) if old_lines[i] != new_lines[j]
            ]
        else:
            hunks.append((i1, i2, j1, j2))
    for i1, i2, j1, j2 in hunks:
        start, end, replacement = _trim(old, starts[i1], starts[i2], "".join(new_lines[j1:j2]), starts[i1], starts[i2])
        edits.append(
            Edit(display, *_position(old_lines, starts, start), *_position(old_lines, starts, end), replacement)
        )
    return edits


def _trim(old: str, start: int, end: int, replacement: str, low: int, high: int) -> tuple[int, int, str]:
    """``old[start:end]`` -> ``replacement`` narrowed to what differs, widened to whole words
    (``"of"`` -> ``"off"`` replaces ``of``, not an inserted ``f``), within ``[low, high)``."""
    segment = old[start:end]
    prefix = _common_prefix(segment, replacement)
    segment, replacement, start = segment[prefix:], replacement[prefix:], start + prefix
    suffix = _common_prefix(segment[::-1], replacement[::-1])
    if suffix:
        segment, replacement = segment[: len(segment) - suffix], replacement[: len(replacement) - suffix]
    end = start + len(segment)
    while start > low and _word(old[start - 1]) and (segment[:1] == "" or _word(segment[:1]) or _word(replacement[:1])):
        start -= 1
        segment, replacement = old[start] + segment, old[start] + replacement
    while end < high and _word(old[end]) and (segment[-1:] == "" or _word(segment[-1:]) or _word(replacement[-1:])):
        segment, replacement = segment + old[end], replacement + old[end]
        end += 1
    return start, end, replacement


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _common_prefix(a: str, b: str) -> int:
    count = 0
    for x, y in zip(a, b):
        if x != y:
            break
        count += 1
    return count


def _position(lines: list[str], starts: list[int], offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset (the end of the text: past its last line)."""
    import bisect

    index = bisect.bisect_right(starts, offset) - 1
    if index >= len(lines):  # at the very end
        if lines and not lines[-1].endswith(("\n", "\r")):
            return len(lines), len(lines[-1]) + 1
        return len(lines) + 1, 1
    return index + 1, offset - starts[index] + 1
