"""``ModuleView``: a module's outline plus its blocks, each summarized (``extract``) on first use.

Outlines are cached by content on disk (``compile_ad_lint.cache``); block summaries are kept in
memory by a long-lived front end only (see ``ModuleView._summarize``). A warm run whose files are
unchanged reads only its results; one that re-analyzes roots parses just the blocks they need.
"""

from __future__ import annotations

import ast
import re
import time
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ..cache import SummaryCache, cache_key, content_digest
from ..core.paths import file_status
from ..core.text import decode, split_lines
from .extract import position_lines, summarize_block, summarize_statements
from .model import BlockSummary, ClassSummary, FunctionSummary, ParseFailure
from .outline import (
    Block,
    ModuleOutline,
    decode_failure,
    first_line_of,
    outline_of,
    parse_module,
)


@dataclass
class ParseCounter:
    """Which files a run summarized (parsed blocks of), and which it took from the cache."""

    parsed: set = field(default_factory=set)
    cached: set = field(default_factory=set)


class ModuleView:
    def __init__(
        self,
        name: str,
        source: bytes,
        module: str,
        is_package: bool,
        cache: SummaryCache | None,
        counter: ParseCounter,
        digest: str | None = None,
    ) -> None:
        self.name = name
        self.module = module
        self.is_package = is_package
        self._cache = cache
        self.counter = counter
        self._blocks: dict[int, BlockSummary] = {}
        #: CPython's tree of the module while this view holds it (the outline was just built from
        #: it): blocks are summarized from it instead of parsing their text a second time.
        self._tree: ast.Module | None = None
        self._tree_lines: list[str] | None = None
        self._tree_starts: list[int] = []
        self._binders: dict[str, list[int]] | None = None
        self._root_blocks: dict[frozenset[str], tuple[int, ...]] = {}
        self.digest = digest or content_digest(source)
        self.failure: ParseFailure | None = None
        try:
            self.text = decode(source)
        except (UnicodeDecodeError, LookupError, SyntaxError) as error:
            self.text = ""
            self.outline = ModuleOutline(module, is_package, (), ())
            self.failure = decode_failure(source, error)
            return
        self.lines = split_lines(self.text)
        self.outline = self._load_outline(source)
        self.failure = self.outline.failure  # a syntax error, NUL bytes, nesting CPython rejects

    @cached_property
    def identity(self) -> tuple:
        """What everything this view holds is a function of: the bytes (by digest), how the file
        is named, and whether it could be read (``failure``, set by the time anything asks). Two
        views with the same identity hand out equal definitions (``Interpreter._definitions_hold``
        compares a walk summary's by this)."""
        return (self.digest, self.name, self.module, self.is_package, self.failure)

    def serve(self, cache: SummaryCache | None, counter: ParseCounter) -> ModuleView:
        """This view, for another check (``ViewMemory``): the blocks it summarizes from now on are
        kept in that check's cache and counted by its counter, and the file counts as served
        from memory, as a new view whose outline came from the cache would."""
        self._cache = cache
        self.counter = counter
        counter.cached.add(self.name)
        return self

    # -- loading ----------------------------------------------------------------------------

    def _cached(self, kind: str, payload: bytes, build, expected: type, *, on_disk: bool = True):
        cache = self._cache if self._cache is not None and (on_disk or self._cache.memory is not None) else None
        if cache is None:  # nothing would keep it: no key to compute (every block of a CLI run)
            return build()
        key = cache_key(kind.encode() + b"\0" + payload, self.module, self.is_package)
        found = cache.load(key, expected, from_disk=on_disk)
        if found is not None:  # anything else (another build's data, damage) is rebuilt
            self.counter.cached.add(self.name)
            return found
        value = build()
        if not (value.failure is not None and value.failure.from_recursion_limit):
            cache.store(key, value, to_disk=on_disk)
        return value

    def _load_outline(self, source: bytes) -> ModuleOutline:
        def build() -> ModuleOutline:
            parsed = parse_module(self.text)
            if isinstance(parsed, ParseFailure):
                return ModuleOutline(self.module, self.is_package, (), (), parsed)
            self._tree = parsed
            return outline_of(parsed, self.text, self.module, self.is_package)

        return self._cached("outline", source, build, ModuleOutline)

    def release_tree(self) -> None:
        """Drop the module's tree (an analysis is over: blocks needed later parse their own text)."""
        self._tree = self._tree_lines = None
        self._tree_starts = []

    def _summarize(self, index: int) -> BlockSummary:
        block = self.outline.blocks[index]
        text = "".join(self.lines[block.first_line - 1 : block.last_line])

        def build() -> BlockSummary:
            self.counter.parsed.add(self.name)
            if self._tree is None:
                return summarize_block(text, self.module, self.is_package, block.first_line)
            if self._tree_lines is None:
                self._tree_lines = position_lines(self.text)
                self._tree_starts = [first_line_of(statement) for statement in self._tree.body]
            starts = self._tree_starts
            statements = self._tree.body[bisect_left(starts, block.first_line) : bisect_right(starts, block.last_line)]
            return summarize_statements(statements, self._tree_lines, self.module, self.is_package, block.first_line)

        # Kept in memory only (the language server's edits reuse them): decoding a block summary
        # from disk took longer than building it again (docs/performance.md, "summaries"), while
        # outlines, which need the whole file parsed, stay on disk.
        return self._cached(
            f"block:{block.first_line}", text.encode("utf-8", "surrogatepass"), build, BlockSummary, on_disk=False
        )

    def block(self, index: int) -> BlockSummary:
        summary = self._blocks.get(index)
        if summary is None:
            summary = self._blocks[index] = self._summarize(index)
        return summary

    # -- questions --------------------------------------------------------------------------

    @property
    def blocks(self) -> tuple[Block, ...]:
        return self.outline.blocks

    @property
    def star_imports(self) -> tuple[str, ...]:
        return self.outline.star_imports

    def block_failures(self) -> list[ParseFailure]:
        return [summary.failure for summary in self._blocks.values() if summary.failure is not None]

    def effectful_blocks(self) -> list[int]:
        """Module-level code that does something beyond binding names, in order."""
        return [i for i, block in enumerate(self.blocks) if block.has_effect]

    def blocks_binding(self, name: str) -> list[int]:
        """The blocks that may bind ``name``, in order (asked for on every global lookup)."""
        if self._binders is None:
            self._binders = {}
            for i, block in enumerate(self.blocks):
                for bound in block.binds:
                    self._binders.setdefault(bound, []).append(i)
        return self._binders.get(name, [])

    def root_blocks(self, mentions: frozenset[str] = frozenset()) -> tuple[int, ...]:
        """Blocks whose functions are analyzed as entry points: anchored ones, or ones calling ``mentions``."""
        known = self._root_blocks.get(mentions)
        if known is not None:
            return known
        pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(mentions))) + r")\s*\(") if mentions else None
        chosen = []
        for i, block in enumerate(self.blocks):
            if block.anchored or (
                pattern is not None and pattern.search("".join(self.lines[block.first_line - 1 : block.last_line]))
            ):
                chosen.append(i)
        found = self._root_blocks[mentions] = tuple(chosen)
        return found

    def _defining_blocks(self, qualname: str) -> list[int]:
        top = qualname.split(".", 1)[0]
        if top.startswith("<lambda:"):
            line = int(top.split(":")[1])
            return [i for i, b in enumerate(self.blocks) if b.first_line <= line <= b.last_line]
        return self.blocks_binding(top)

    def function(self, qualname: str) -> FunctionSummary | None:
        for index in self._defining_blocks(qualname):
            found = self.block(index).function_index.get(qualname)
            if found is not None:
                return found
        return None

    def class_(self, qualname: str) -> ClassSummary | None:
        for index in self._defining_blocks(qualname):
            found = self.block(index).class_index.get(qualname)
            if found is not None:
                return found
        return None


class ViewMemory:
    """Module views kept across checks by a long-lived front end (the language server).

    A view is a function of the file's bytes and of how the file is named (its display name, its
    module): everything it holds (the decoded text, its lines, the outline, the
    block summaries built so far) is derived from them. An edit's check builds only the edited
    buffer's view again (building them all was a fifth of an edit). The least recently used views
    are dropped beyond ``capacity``.
    """

    #: A file whose status changed less than this long before it was read is read again by the
    #: next check: a write within the clock's granularity of the read (2 s on FAT) can leave its
    #: status equal.
    SETTLED_NS = 5_000_000_000

    def __init__(self, capacity: int = 10_000) -> None:
        self.capacity = capacity
        self._views: OrderedDict[tuple[Path, str, str, bool, str], ModuleView] = OrderedDict()
        #: The files read from disk (``from_disk``), by key: their status when read, and their view's.
        self._read: dict[tuple[Path, str, str, bool], tuple[tuple[int, ...], tuple[Path, str, str, bool, str]]] = {}

    def from_disk(
        self,
        key: tuple[Path, str, str, bool],
        read: Callable[[Path], bytes],
        cache: SummaryCache | None,
        counter: ParseCounter,
    ) -> ModuleView:
        """The view of the file ``key`` names, as it is on disk (``read`` reads it; OSError when it
        cannot). Not read again while its status (device, inode, size, modification and change
        times) is what it was when read, long enough after its last change (``SETTLED_NS``): an
        edit changes one buffer, and reading and hashing every file again cost each edit."""
        path = key[0]
        status = file_status(path)
        known = self._read.get(key)
        if known is not None and known[0] == status:
            kept = self._views.get(known[1])
            if kept is not None:
                self._views.move_to_end(known[1])
                return kept.serve(cache, counter)
        view = self.view(key, read(path), cache, counter)
        if time.time_ns() - max(status[3], status[4]) > self.SETTLED_NS:
            self._read[key] = (status, (*key, view.digest))
        else:
            self._read.pop(key, None)
        return view

    def view(
        self,
        key: tuple[Path, str, str, bool],
        source: bytes,
        cache: SummaryCache | None,
        counter: ParseCounter,
    ) -> ModuleView:
        """The view of ``source`` for ``key`` (path, display name, module, is a package): the one
        kept for the same bytes, else a new one, kept."""
        path, name, module, is_package = key
        digest = content_digest(source)
        full = (*key, digest)
        found = self._views.get(full)
        if found is not None:
            self._views.move_to_end(full)
            return found.serve(cache, counter)
        made = self._views[full] = ModuleView(name, source, module, is_package, cache, counter, digest)
        while len(self._views) > self.capacity:
            self._views.popitem(last=False)
        return made
