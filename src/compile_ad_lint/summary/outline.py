"""A cheap outline of a module: its top-level statements ("blocks"), what each binds, and where
the anchors are.

The outline comes from CPython's ``ast``; each block is then summarized only when the analysis
needs it (``ModuleView.block``). On large modules with one relevant function this skips most of
the work.
"""

from __future__ import annotations

import ast
import builtins
import re
import sys
from collections import deque
from dataclasses import dataclass, replace
from enum import Enum

from .. import pyast
from ..core.text import nfkc, split_lines
from ..knowledge.anchors import ANCHOR_WORDS, ANCHORS
from ..knowledge.spelling import Anchor, ImportAnchor, Preceded
from ..knowledge.switches import GLOBAL_REBINDERS
from ..knowledge.torch_api import IN_PLACE_COMPILE_METHODS, is_external_root
from .model import ParseFailure

#: What may stand between two tokens of one spelling: whitespace (line ends too, inside
#: brackets), a backslash continuation, a comment. The scans must find every spelling the parser
#: accepts: ``loss. backward()``, ``loss.backward \\`` then ``()`` on the next line. A comment is
#: taken to its line's end (its text is never the spelling's next token, and cannot backtrack).
COMMENT = r"#[^\r\n]*(?![^\r\n])"
GAP = rf"(?:\s|\\|{COMMENT})*"


class Before(Enum):
    """What must stand before an anchor spelling's first word."""

    ANYTHING = ""
    #: A word boundary (``\b``).
    WORD = r"\b"
    #: A dot, possibly with a gap: an attribute (``loss.backward``).
    DOT = rf"\.{GAP}"


@dataclass(frozen=True)
class AnchorSpelling:
    #: The pattern, starting with its literal text (a literal-first search is fast).
    pattern: str
    before: Before = Before.ANYTHING


#: The pattern before an anchor's first token, by what must stand there.
BEFORE = {Preceded.ANYTHING: Before.ANYTHING, Preceded.WORD_BOUNDARY: Before.WORD, Preceded.ATTRIBUTE: Before.DOT}


def spelling_of(anchor: Anchor | ImportAnchor) -> AnchorSpelling:
    """The pattern of an anchor row: its tokens with any gap between them."""
    if isinstance(anchor, ImportAnchor):
        # The import is the anchor, and the names it binds anchor the blocks using them. The
        # separator after each other name is not optional and ``as`` is no name (``x as y`` is read
        # one way only), so that the repetition cannot backtrack.
        return AnchorSpelling(
            rf"{re.escape(anchor.module)}{GAP}import(?:[\s\\(]|{COMMENT})*"
            rf"(?:(?!as\b)\w+(?:\s+as\s+\w+)?(?:[\s\\,()]|{COMMENT})+)*?"
            rf"(?:{'|'.join(re.escape(name) for name in anchor.names)})\b"
        )
    return AnchorSpelling(GAP.join(re.escape(token) for token in anchor.tokens), BEFORE[anchor.preceded])


#: Text that may make a block an anchor (``knowledge/anchors.py``, from the rows that give it a
#: meaning): a forward-AD region, a backward call (``.backward(``, ``torch.autograd.grad``/``backward``,
#: an imported ``grad(``), a config write, ``torch.autograd.functional`` (``hvp``, ``hessian``, ...:
#: CAL004), or a framework call that runs the backward for the user (Lightning ``trainer.fit(...)``,
#: Hugging Face ``TrainingArguments(...)`` next to ``trainer.train()``).
ANCHOR_SPELLINGS = tuple(spelling_of(anchor) for anchor in ANCHORS)
ANCHOR_PATTERN = re.compile("|".join(spelling.before.value + spelling.pattern for spelling in ANCHOR_SPELLINGS))


def anchored_text(text: str) -> bool:
    """Whether ``text`` holds an anchor spelling, identifiers read as Python reads them (NFKC:
    ``loss.ｂａｃｋｗａｒｄ()`` is ``loss.backward()``)."""
    if _anchor_in(text):
        return True
    return not text.isascii() and _anchor_in(nfkc(text))


def _anchor_in(text: str) -> bool:
    # Every match holds one of the anchor words, which ``in`` finds far faster than the pattern
    # (the pattern searched every block of the torch tree position by position).
    return any(word in text for word in ANCHOR_WORDS) and ANCHOR_PATTERN.search(text) is not None


#: ``try`` statements: ``try``/``except*`` (``ast.TryStar``) exists from Python 3.11 on.
if sys.version_info >= (3, 11):
    TRY_STATEMENTS = (ast.Try, ast.TryStar)
else:
    TRY_STATEMENTS = (ast.Try,)
#: Longest run of module-level statements parsed as one block (bounds memory on generated files).
_MAX_RUN_LINES = 300


@dataclass(frozen=True)
class Block:
    first_line: int  # 1-based, decorators included
    last_line: int  # inclusive
    binds: frozenset[str]
    #: True for ``def``/``class`` statements (their bodies run only when called).
    is_definition: bool
    anchored: bool
    #: Module-level code that calls something or enters a context (imports and constants do not):
    #: only such code is interpreted when the module is analyzed; the rest only when a name is looked up.
    has_effect: bool = False


@dataclass(frozen=True)
class ModuleOutline:
    module: str
    is_package: bool
    blocks: tuple[Block, ...]
    star_imports: tuple[str, ...]
    #: Set when CPython cannot parse the file (reported as CAL900; nothing in it is analyzed).
    failure: ParseFailure | None = None
    #: Dotted names of the modules the module-level code (blocks that are not definitions) imports,
    #: relative imports resolved, in the order the code names them: a registry read follows them to
    #: run import side effects (``Reach.run_import_side_effects``) in every analysis, so they are
    #: taken from the tree once, with the outline.
    imports: tuple[str, ...] = ()
    #: Module globals given a literal before a module-level call that can rebind them from outside
    #: the code (``exec(open("configurator.py").read())``, ``globals().update(...)``:
    #: ``knowledge.switches.GLOBAL_REBINDERS``): run-time switches.
    rebindable: frozenset[str] = frozenset()


def resolve_relative(name: str, module: str, is_package: bool) -> str:
    """Make an import name like ``..pkg.x`` absolute, seen from ``module`` (one rule for outlines
    and summaries)."""
    dots = len(name) - len(name.lstrip("."))
    if not dots:
        return name
    package = module.split(".") if is_package else module.split(".")[:-1]
    if dots > 1:
        package = package[: len(package) - (dots - 1)]
    rest = name[dots:]
    return ".".join([*package, rest] if rest else package)


_LINE_END_BYTES = re.compile(rb"\r\n|\r|\n")
_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=]", re.MULTILINE)


def decode_failure(source: bytes, error: Exception) -> ParseFailure:
    """Why ``source`` cannot be decoded (``decode`` raised ``error``), at the bad byte's line and
    column (1-based, the column in characters, as the analysis counts them), or at the coding
    declaration that names an unknown or wrong encoding."""
    if isinstance(error, UnicodeDecodeError):
        start = min(error.start, len(source))
        line = len(_LINE_END_BYTES.findall(source, 0, start)) + 1
        begin = max(source.rfind(b"\n", 0, start), source.rfind(b"\r", 0, start)) + 1
        prefix = source[begin:start].removeprefix(b"\xef\xbb\xbf")
        column = len(prefix.decode(error.encoding, errors="replace")) + 1
        bad = f"byte 0x{source[start]:02x}" if start < len(source) else "the end of the file"
        return ParseFailure(f"cannot decode: {bad} is not valid {error.encoding} ({error.reason})", line, column)
    cookie = _CODING.search(source, 0, len(b"".join(source.splitlines(keepends=True)[:2])))
    if cookie is None:  # tokenize rejects a first line that is not UTF-8: say which byte
        try:
            source.decode("utf-8")
        except UnicodeDecodeError as undecodable:
            return decode_failure(source, undecodable)
    line = source.count(b"\n", 0, cookie.start()) + 1 if cookie is not None else 1
    return ParseFailure(f"cannot decode: {error}", line, 1)


def parse_module(text: str) -> ast.Module | ParseFailure:
    """CPython's tree of a module, or why it cannot be parsed."""
    try:
        return pyast.parse(text)
    except SyntaxError as error:
        return ParseFailure(f"syntax error: {error.msg}", error.lineno or 1, error.offset or 1)
    except (ValueError, RecursionError, MemoryError) as error:  # NUL bytes, extreme nesting
        reason = (
            "nested too deeply for the parser"
            if isinstance(error, RecursionError)
            else str(error) or type(error).__name__
        )
        return ParseFailure(f"cannot parse: {reason}", from_recursion_limit=isinstance(error, RecursionError))


def outline_of(tree: ast.Module, text: str, module: str, is_package: bool) -> ModuleOutline:
    """The outline of a parsed module."""

    lines = split_lines(text)
    blocks: list[Block] = []
    stars: list[str] = []
    aliases: set[str] = set()  # names bound by anchored module-level statements
    external = _external_names(tree)
    for statement in tree.body:
        first = first_line_of(statement)
        last = statement.end_lineno or statement.lineno
        if isinstance(statement, ast.ImportFrom) and any(alias.name == "*" for alias in statement.names):
            base = "." * statement.level + (statement.module or "")
            stars.append(resolve_relative(base, module, is_package) if statement.level else base)
        is_definition = isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        text = "".join(lines[first - 1 : last])
        anchored = anchored_text(text)
        block = Block(
            first,
            last,
            frozenset(_bound_names(statement)),
            is_definition,
            anchored,
            has_effect=not is_definition
            and (anchored or _may_matter(statement, "".join(lines[first - 1 : last]), external)),
        )
        if anchored and isinstance(statement, (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign)):
            aliases |= block.binds  # ``level = fwAD.dual_level``, ``from ... import dual_level as level``
        previous = blocks[-1] if blocks else None
        # Runs of module-level code become one block (one parse); so do statements sharing a line.
        if previous is not None and (
            previous.last_line >= first  # the same line
            or (not (previous.is_definition or is_definition) and last - previous.first_line < _MAX_RUN_LINES)
        ):
            blocks[-1] = Block(
                previous.first_line,
                max(last, previous.last_line),
                previous.binds | block.binds,
                previous.is_definition and is_definition,
                previous.anchored or anchored,
                has_effect=previous.has_effect or block.has_effect,
            )
        else:
            blocks.append(block)
    return ModuleOutline(
        module,
        is_package,
        tuple(_mark_alias_uses(blocks, lines, aliases)),
        tuple(stars),
        imports=_imported_modules(tree, blocks, module, is_package),
        rebindable=_rebindable_globals(tree),
    )


#: ``exec`` and ``globals``/``vars`` as the names Python code calls them by (builtins).
_REBINDERS = {(row.function.rsplit(".", 1)[-1], row.method) for row in GLOBAL_REBINDERS}


def _rebindable_globals(tree: ast.Module) -> frozenset[str]:
    """The globals a module-level rebinder may change: each name given a literal (``compile =
    True``, ``batch_size = 12``, ``dtype = "bfloat16"``) at module level before the last rebinder."""
    literal: set[str] = set()
    rebindable: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
            if _is_literal(statement.value):
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                literal.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(statement, ast.Expr) and _rebinds_globals(statement.value):
            rebindable |= literal
    return frozenset(rebindable)


def _is_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
        node = node.operand
    return isinstance(node, ast.Constant)


def _rebinds_globals(node: ast.expr) -> bool:
    """``exec(...)``, ``globals().update(...)``, ``vars().update(...)``."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Name):
        return (func.id, None) in _REBINDERS
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and (func.value.func.id, func.attr) in _REBINDERS
    )


def _imported_modules(tree: ast.Module, blocks: list[Block], module: str, is_package: bool) -> tuple[str, ...]:
    """``ModuleOutline.imports``: for each block that is not a definition, its import statements
    breadth first (top-level imports, then those nested in ``try``/``if``), a ``from`` import naming
    its module and then each imported name as a possible submodule."""

    names: list[str] = []
    statements = iter(tree.body)
    pending_statement = next(statements, None)
    for block in blocks:
        inside: list[ast.AST] = []
        while pending_statement is not None and first_line_of(pending_statement) <= block.last_line:
            inside.append(pending_statement)
            pending_statement = next(statements, None)
        if block.is_definition:
            continue
        queue = deque(inside)
        while queue:
            node = queue.popleft()
            queue.extend(ast.iter_child_nodes(node))
            if isinstance(node, ast.Import):
                names.extend(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = "." * node.level + (node.module or "")
                base = resolve_relative(base, module, is_package) if node.level else base
                if base:
                    names.append(base)
                names.extend(
                    f"{base}.{alias.name}" if base else alias.name for alias in node.names if alias.name != "*"
                )
    return tuple(names)


def first_line_of(statement: ast.stmt) -> int:
    """Where a top-level statement starts, its decorators included."""
    return min([statement.lineno] + [d.lineno for d in getattr(statement, "decorator_list", ())])


def _mark_alias_uses(blocks: list[Block], lines: list[str], aliases: set[str]) -> list[Block]:
    """Anchor blocks that use a name bound by anchored module-level code.

    ``from torch.autograd.forward_ad import dual_level as level`` makes ``with level():`` an anchor,
    though the function using it never spells ``dual_level``.
    """
    if not aliases:
        return blocks
    uses = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(aliases))) + r")\b")
    return [
        replace(b, anchored=True)
        if not b.anchored and uses.search("".join(lines[b.first_line - 1 : b.last_line]))
        else b
        for b in blocks
    ]


#: Module-level code mentioning these may create compiled callables or contexts.
_INTERESTING = re.compile(r"compile|optimize|autocast|dual_level|patch|disable|backward|\bgrad\b|config")
_BUILTIN_NAMES = frozenset(dir(builtins))


def _external_names(tree: ast.Module) -> frozenset[str]:
    """Names bound at module level by imports of packages that are always external (torch, ...)."""
    names = set(_BUILTIN_NAMES)
    for statement in tree.body:
        if isinstance(statement, ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in statement.names if is_external_root(a.name))
        elif isinstance(statement, ast.ImportFrom) and not statement.level and is_external_root(statement.module or ""):
            names.update(a.asname or a.name for a in statement.names)
    return frozenset(names)


def _may_matter(statement: ast.stmt, text: str, external: frozenset[str]) -> bool:
    """Whether module-level code must be interpreted when its module is analyzed.

    Imports, constants and calls into external libraries (``torch.ones(...)`` a thousand times in a
    generated file) only bind names, which are evaluated lazily if ever looked up; code that may
    compile, enter a context, or call the project's own functions runs.
    """
    if _INTERESTING.search(text):
        return True
    for node in ast.walk(statement):
        if isinstance(node, (ast.With, ast.AsyncWith)):
            return True
        if isinstance(node, ast.Call):
            head = node.func
            while isinstance(head, (ast.Attribute, ast.Call, ast.Subscript)):
                head = head.value if not isinstance(head, ast.Call) else head.func
            if not (isinstance(head, ast.Name) and head.id in external):
                return True
    return False


def _bound_names(statement: ast.stmt) -> set[str]:
    """Module-level names a top-level statement may bind (including ``x.compile()`` in place).

    Only statements and assignment targets are visited: expressions bind nothing here (walrus
    targets aside, which are rare at module level and looked up as unknown).
    """
    names: set[str] = set()
    pending: list[ast.AST] = [statement]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)  # a nested definition's body binds nothing at module level
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, (ast.Tuple, ast.List)):
            pending.extend(node.elts)
        elif isinstance(node, ast.Starred):
            pending.append(node.value)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            pending.extend(node.targets if isinstance(node, ast.Assign) else [node.target])
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            pending.extend([node.target, *node.body, *node.orelse])
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            pending.extend([*(item.optional_vars for item in node.items if item.optional_vars is not None), *node.body])
        elif isinstance(node, (ast.If, ast.While)):
            pending.extend([*node.body, *node.orelse])
        elif isinstance(node, TRY_STATEMENTS):
            pending.extend([*node.body, *node.orelse, *node.finalbody, *node.handlers])
        elif isinstance(node, ast.ExceptHandler):
            names.update([node.name] if node.name else [])
            pending.extend(node.body)
        elif isinstance(node, ast.Match):
            pending.extend(statement for case in node.cases for statement in case.body)
        elif isinstance(node, ast.Expr):
            call = node.value
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr in IN_PLACE_COMPILE_METHODS
                and isinstance(call.func.value, ast.Name)
            ):
                names.add(call.func.value.id)
    return names
