"""The prefilter of caller discovery: which files may call a requested function, read from their
bytes with regular expressions (no parse), and which checked files can hold an anchor."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from pathlib import Path

from ..cache import content_digest
from ..core.text import decode, nfkc
from ..knowledge.anchors import ANCHOR_WORDS
from ..project import at_word_boundary, matches_starting, read_source
from ..summary.outline import ANCHOR_PATTERN, ANCHOR_SPELLINGS, Before

#: The outline's anchor spellings in byte form, to pick candidate files without decoding them:
#: one pattern each, starting with its literal text (a pattern that starts with ``\b``, or the
#: alternation of all of them, is searched position by position, several times slower), with
#: what must stand before the match (checked by hand: ``_stands_after``).
_ANCHOR_SEARCHES = tuple((re.compile(spelling.pattern.encode()), spelling.before) for spelling in ANCHOR_SPELLINGS)
#: The outline's whole pattern in byte form: where the check by hand cannot decide (``_stands_after``).
_ANCHOR_BYTES = re.compile(ANCHOR_PATTERN.pattern.encode())
#: Every anchor contains one of these words (``knowledge.anchors``); ``in`` finds them far faster than a regex.
_ANCHOR_WORDS = tuple(word.encode() for word in ANCHOR_WORDS)
#: ``name(`` in source text: the names a file calls, for finding the callers of a function. A name
#: followed by a backslash or a comment is taken too: the ``(`` may follow on the next line
#: (``name \\`` then ``(x)``), a superset that costs what the plain pattern costs. The name is
#: matched whole and never given back (a lookahead's group, matched again): a name not followed by
#: ``(`` was tried again one character shorter down to its first (the torch tree's 46 MB: 1.11 ->
#: 0.80 s, the same names in every file).
_CALLED_NAME = re.compile(rb"\b(?=([A-Za-z_][A-Za-z0-9_]*))\1\s*[(\\#]")


#: An import statement (``from m import (A as B, ...)`` over lines included), and a name it binds
#: under another (``A as B``, ``import pkg.mod as m``).
_IMPORT_STATEMENT = re.compile(
    rb"(?m)^[ \t]*(?:from[ \t]+[\w.]+[ \t]+import[ \t]*(?:\([^)]*\)|[^\n]*)|import[ \t]+[^\n]*)"
)
_IMPORTED_AS = re.compile(rb"([A-Za-z_][\w.]*)\s+as\s+([A-Za-z_]\w*)")


def import_aliases(source: bytes) -> dict[str, frozenset[str]]:
    """The names a file's imports bind under another name, by the name imported (``from util.misc
    import NativeScalerWithGradNormCount as NativeScaler``): the file calls it by the alias."""
    if b" as " not in source:
        return {}
    found: dict[str, set[str]] = {}
    for statement in import_statements(source):
        text = statement.group()
        if _spells_as(text):
            for name, alias in _IMPORTED_AS.findall(text):
                found.setdefault(name.decode().rsplit(".", 1)[-1], set()).add(alias.decode())
    return {name: frozenset(aliases) for name, aliases in found.items()}


def import_statements(source: bytes) -> Iterator[re.Match[bytes]]:
    """The matches ``_IMPORT_STATEMENT.finditer(source)`` gives, tried only at the start of the
    lines that spell ``import`` (every match does on its first line): a ``(?m)^`` pattern is tried
    at every line, which took half of a callers round on the torch tree (docs/performance.md)."""
    end = 0
    at = source.find(b"import")
    while at != -1:
        start = source.rfind(b"\n", 0, at) + 1
        if start >= end:  # a line starting inside the previous match cannot start one (finditer's way)
            match = _IMPORT_STATEMENT.match(source, start)
            if match is not None and match.end() > at:
                yield match
                end = match.end()
        at = source.find(b"import", max(at + 6, end))


def _spells_as(text: bytes) -> bool:
    """Whether ``as`` stands between whitespace in ``text`` (``_IMPORTED_AS`` can match): most
    import statements alias nothing, and the pattern is tried at every position of those."""
    at = text.find(b"as")
    while at != -1:
        if at and text[at - 1 : at].isspace() and text[at + 2 : at + 3].isspace():
            return True
        at = text.find(b"as", at + 1)
    return False


def called_names_of(source: bytes) -> frozenset[bytes]:
    """The names a file calls (``name(``), the candidates for the callers of a requested function."""
    return frozenset(_CALLED_NAME.findall(source))


def may_see(
    source: bytes,
    path: Path,
    defining: Path,
    qualname: str,
    subclasses: Iterable[str] = (),
    *,
    aliases: Mapping[str, frozenset[str]] | None = None,
) -> bool:
    """Whether a file that calls the name of ``qualname`` (defined in ``defining``) can be calling
    that function, by what its text spells.

    A module-level function is called from its own file, where its module's name is spelled
    (``from pkg.train import main``, ``import pkg.train``, ``from pkg import train``), or where it
    is imported by name from a package above it or relatively (a re-export: ``from pkg import
    main``); a method where its class or one of its ``subclasses`` is named (constructed,
    imported, subclassed: a script building the project's ``MyTrainer`` calls ``BaseTrainer.step``)
    or in its own file; a function defined inside another (``<locals>``) or a lambda only in its own file (any
    other file can only reach it as a value, under another name). Without this, every script
    calling its own ``main()`` and every ``dict.update(...)`` or ``model.eval()`` made its file a
    caller: 262 of the 287 analyses of an 807-file robotics repository, 84 of its 95 seconds, for
    no finding. ``aliases``: the file's ``import_aliases``, when the caller has them already.
    """
    if path == defining:
        return True
    parts = qualname.split(".")
    if any(part.startswith("<") for part in parts):
        return False
    if len(parts) == 1:
        module, folder, packages = _module_and_packages(defining)
        if imported_from(source, parts[0], packages):
            return True
        # Both need the module's name as a word, which most files asked about do not spell: the set
        # of a file's words answers that (docs/performance.md, "the callers round's questions").
        return spelled(source, module) and (
            module_referenced(source, module, folder, aliases)
            # The module imported by name in a list over several lines, aliased (``run as r``).
            or imported_from(source, module, packages)
        )
    return any(spelled(source, name) for name in (parts[-2], *subclasses))


@lru_cache(maxsize=4096)
def _module_and_packages(defining: Path) -> tuple[str, str, frozenset[str]]:
    """The name a module is imported by, the folder holding it (its package's name) and the folders
    above it (asked once per defining file: ``may_see`` runs for every file and function of a
    callers round)."""
    package = defining.parent
    if defining.stem == "__init__":
        return package.name, package.parent.name, frozenset(package.parts)
    return defining.stem, package.name, frozenset(package.parts)


#: ``class Name(bases)`` (bases up to the first closing parenthesis), or with type parameters on
#: the line (``class Name[T](bases)``, Python 3.12); a definition when only spaces or tabs precede
#: it on its line (``class_definitions``).
_CLASS_DEFINITION = re.compile(rb"class[ \t]+(\w+)[ \t]*(?:\[[^\]\n]*\][ \t]*)?\(([^)]*)\)")


def _starts_line(source: bytes, position: int) -> bool:
    """Only spaces or tabs before ``position`` on its line."""
    return not source[source.rfind(b"\n", 0, position) + 1 : position].strip(b" \t")


#: A name, or a dotted chain of names (spaces around the dots allowed).
_DOTTED = re.compile(rb"\w+(?:[ \t]*\.[ \t]*\w+)*")


def class_definitions(source: bytes) -> Iterator[re.Match[bytes]]:
    """The matches of ``_CLASS_DEFINITION`` that start a line but for indentation."""
    return matches_starting(_CLASS_DEFINITION, source, _starts_line)


def subclass_index(contents: Iterable[bytes]) -> dict[str, frozenset[str]]:
    """Each name the bases of a class definition spell, with the classes defined on it (by name:
    ``class Mine(pkg.Base)`` and ``class Mine(Generic[T], Base)`` are both subclasses of ``Base``).
    A dotted base names its last part: ``class Config(Wrapper.Config)`` is no subclass of
    ``Wrapper`` (pytorch/torchtitan's configs nested in each component)."""
    index: dict[str, set[str]] = {}
    for source in contents:
        for match in class_definitions(source):
            name = match.group(1).decode("ascii", "replace")
            for dotted in set(_DOTTED.findall(match.group(2))):
                base = dotted.rsplit(b".", 1)[-1].strip()
                index.setdefault(base.decode("ascii", "replace"), set()).add(name)
    return {base: frozenset(names) for base, names in index.items()}


def subclasses_of(name: str, index: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """The classes defined on ``name``, directly or through others (``index``: ``subclass_index``)."""
    found: set[str] = set()
    pending = [name]
    while pending:
        for subclass in index.get(pending.pop(), ()):
            if subclass not in found and subclass != name:
                found.add(subclass)
                pending.append(subclass)
    return frozenset(found)


def spelled(source: bytes, word: str) -> bool:
    """``word`` in ``source`` as a whole word (``\\bword\\b``)."""
    words = _words_of(source)
    words.asked += 1
    if words.found is None and words.asked > _SEARCHES_BEFORE_WORDS:
        words.found = frozenset(_WORD.findall(source))
    if words.found is not None and _WORD_TEXT.fullmatch(word):
        return word.encode() in words.found  # a whole word is one of the maximal runs of word bytes
    return next(matches_starting(_word_pattern(word), source, at_word_boundary), None) is not None


def module_referenced(
    source: bytes, module: str, folder: str | None = None, aliases: Mapping[str, frozenset[str]] | None = None
) -> bool:
    """A module's name where code can reach the module: in an import statement (``import run``,
    ``try: import run``, ``x = 1; import run``), as a dotted path's part (``pkg.run``, ``from .run
    import``, ``run.train(...)``), as the string an import call is given (``import_module("run")``,
    ``__import__("run")``); not as the name of a call (``model.train()``) nor as a word of prose:
    huggingface/peft's tests were analyzed as callers of ``run.py``'s ``train`` because their
    comments say "they run really fast". (``may_see`` finds it imported by name in a list.)

    With the ``folder`` holding the module, a dotted path reaches it only through that folder's
    name (``pkg.run``, or a name the file imports that package as) or a relative or computed one
    (``.run``, ``f"{task}.run"``): every ``experiments/<task>/train.py`` of a framework spells
    ``forge.train.trainer``, which is another module named ``train``. ``train.py`` is the file's
    name, no attribute of the module."""
    for match in matches_starting(_word_pattern(module), source, at_word_boundary):
        start, end = match.start(), match.end()
        if _CALL_AFTER.match(source, end) is not None:
            continue
        if start > 0 and source[start - 1 : start] == b".":
            if folder is None or _through_folder(source, start - 1, folder, aliases):
                return True
            continue
        if source[end : end + 1] == b".":
            if _FILE_SUFFIX.match(source, end) is None:
                return True
            continue
        line = source[source.rfind(b"\n", 0, start) + 1 : start]
        if b"#" in line:
            continue  # in a comment (or after a string holding ``#``: not worth telling apart)
        if _IMPORT_BEFORE.search(line) is not None or _IMPORT_CALL_BEFORE.search(line) is not None:
            return True
    return False


#: The name that ends right before a position (a dotted path's previous part).
_NAME_BEFORE = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*\Z")


def _through_folder(source: bytes, dot: int, folder: str, aliases: Mapping[str, frozenset[str]] | None) -> bool:
    """Whether the dotted path part before ``source[dot]`` may be ``folder``, the package holding
    the module named after the dot: that name, a name an import binds it to (``import pkg.sub as
    s``; ``aliases``, the file's ``import_aliases``, read here when not given), or no plain name (a
    relative path's dot, a string's computed part, a name past ASCII)."""
    before = source[max(0, dot - 256) : dot]
    found = _NAME_BEFORE.search(before)
    if found is None or found.start() > 0 and before[found.start() - 1] >= 0x80:
        return True
    name = found.group().decode()
    if name == folder:
        return True
    return name in (import_aliases(source) if aliases is None else aliases).get(folder, ())


_CALL_AFTER = re.compile(rb"[ \t]*\(")
#: The file's name rather than an attribute (``see experiments/dino/train.py``: prose in a docstring).
_FILE_SUFFIX = re.compile(rb"\.pyi?\b")
#: An import statement begun earlier on the line: at its start or after ``;`` or a compound
#: statement's ``:``.
_IMPORT_BEFORE = re.compile(rb"(?:^|[;:])[ \t]*(?:import|from)[ \t]")
#: The module's name as the string an import call is given, right after its opening quote.
_IMPORT_CALL_BEFORE = re.compile(rb"(?:import_module|__import__)\([ \t]*[rRuU]?[\"']$")
#: A file searched for more words than this gets the set of its words: the callers of the examples
#: corpus's 330 ``main`` functions were each searched for the 330 script names (25,726 searches, a
#: tenth of its cold check), while a torch file is searched a few times.
_SEARCHES_BEFORE_WORDS = 16
_WORD = re.compile(rb"\w+")
#: A word made of word bytes only (as ``\\w`` in a bytes pattern reads them): one of those runs.
_WORD_TEXT = re.compile(r"[A-Za-z0-9_]+")


class _Words:
    """How often a file was searched for a word, the set of its words once that is worth it, and
    the modules it imports each name from (``imported_from``)."""

    __slots__ = ("asked", "found", "imports")

    def __init__(self) -> None:
        self.asked = 0
        self.found: frozenset[bytes] | None = None
        self.imports: dict[str, tuple[str, ...]] = {}


@lru_cache(maxsize=1024)  # the files of one check's caller search (a server keeps no more than these)
def _words_of(source: bytes) -> _Words:
    return _Words()


@lru_cache(maxsize=4096)
def _word_pattern(word: str) -> re.Pattern[bytes]:
    """``word`` ending at a word boundary (``spelled`` checks where it starts)."""
    return re.compile(re.escape(word.encode()) + rb"\b")


@lru_cache(maxsize=4096)
def _import_pattern(name: str) -> re.Pattern[bytes]:
    """``from <module> import name`` (``imported_from`` checks that ``from`` starts a word). A
    comment in the parentheses runs to its line's end, so it matches one way only: a comment that
    could end anywhere made a failed search backtrack exponentially."""
    word = re.escape(name.encode())
    return re.compile(
        rb"from[ \t]+([.\w]+)[ \t]+import(?:[ \t]+(?:[\w \t,]|\\\r?\n)*?|[ \t]*\((?:[\w\s,]|#[^\n]*\n)*?)\b"
        + word
        + rb"\b"
    )


def imported_from(source: bytes, name: str, packages: frozenset[str]) -> bool:
    """``from <module> import name`` (as an alias, in a list, in parentheses over several lines)
    with a relative ``<module>`` or one whose last part is one of ``packages``."""
    imports = _words_of(source).imports
    modules = imports.get(name)
    if modules is None:  # once per file and name: the packages differ between the functions asked about
        modules = imports[name] = tuple(
            match.group(1).decode("ascii", "replace")
            for match in matches_starting(_import_pattern(name), source, at_word_boundary)
        )
    return any(module.startswith(".") or module.rsplit(".", 1)[-1] in packages for module in modules)


def has_anchor(source: bytes) -> bool:
    """Whether ``source`` has text that the outline's anchor pattern matches (then the file is
    outlined), identifiers read as Python reads them (``outline.anchored_text``)."""
    if _spelled_anchor(source):
        return True
    if source.isascii():
        return False
    try:
        text = decode(source)
    except (UnicodeDecodeError, LookupError, SyntaxError):
        return False  # not decodable: nothing in it is analyzed
    normal = nfkc(text)
    return normal is not text and _spelled_anchor(normal.encode("utf-8", "surrogatepass"))


def _spelled_anchor(source: bytes) -> bool:
    if not any(word in source for word in _ANCHOR_WORDS):
        return False
    whole: list[bool] = []  # the whole pattern's answer, once asked
    for pattern, before in _ANCHOR_SEARCHES:
        if before is Before.ANYTHING:
            if pattern.search(source) is not None:
                return True
            continue
        for match in pattern.finditer(source):
            stands = _stands_after(source, match.start(), before)
            if stands is None:
                if not whole:
                    whole.append(_ANCHOR_BYTES.search(source) is not None)
                return whole[0]
            if stands:
                return True
    return False


def _stands_after(source: bytes, position: int, before: Before) -> bool | None:
    """Whether what stands before ``position`` is what ``before`` asks for; None when that cannot
    be told from the line (a dot on an earlier line, with comments between, inside brackets)."""
    if before is Before.WORD:
        return at_word_boundary(source, position)
    at = position - 1
    while at >= 0 and source[at] in b" \t\x0c\\":
        at -= 1
    if at < 0:
        return False
    if source[at] == ord("."):
        return True
    return None if source[at] in b"\r\n" else False


def names_of(joined: bytes) -> frozenset[bytes]:
    """The names a cached NUL-joined string holds (``Run._called_names``)."""
    return frozenset(joined.split(b"\0")) if joined else frozenset()


def called_names_in(files: list[tuple[Path, str]]) -> list[frozenset[bytes] | None]:
    """``called_names_of`` for files read from disk (a worker's share), None for a file whose
    contents are no longer the checked ones (the main process scans what it read)."""
    found: list[frozenset[bytes] | None] = []
    for path, digest in files:
        try:
            source = read_source(path)
        except OSError:
            source = None
        found.append(called_names_of(source) if source is not None and content_digest(source) == digest else None)
    return found
