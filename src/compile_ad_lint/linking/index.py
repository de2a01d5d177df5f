"""The interpreter's module index: files to summaries (parsed lazily) and dotted names to files.

Discovery (``project.py``) decides which files are checked; this index answers, during one
analysis, which file an import names as seen from the importing file and hands out each module's
view on first use, recording what the analysis read (and which candidate files it found absent)
so the caller can key its results on exactly those dependencies.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..core.paths import interned
from ..layout import LayoutFacts, PackageLayout
from ..project import display_path
from ..summary.model import ClassSummary, Definition, FunctionSummary, Stmt
from ..summary.view import ModuleView
from .incremental import Part, Recording

ViewProvider = Callable[[Path, str, str, bool], ModuleView]


class ModuleIndex:
    """Maps files to summaries (parsed lazily) and dotted names to files."""

    def __init__(
        self, provider: ViewProvider, extra_roots: Sequence[Path] = (), layout: PackageLayout | None = None
    ) -> None:
        self._provider = provider
        #: Which folders are packages (module identities), for this index's check only.
        self.layout = layout or PackageLayout()
        self._views: dict[Path, ModuleView] = {}
        #: Modules asked for since the owner last cleared it (the dependencies of one analysis).
        self.accessed: set[Path] = set()
        #: Where imports looked for a file and found none since the last clear, as (folder, entry):
        #: the deepest existing folder above a candidate tried and its entry (file or subfolder) on
        #: the way there, which does not exist. The analysis depends on their absence (a
        #: ``helpers.py`` created later changes what it finds); a candidate can appear only once its
        #: entry does, so one listing of each folder answers for all the candidates below it
        #: (lerobot: 158,000 candidates, 144 folders).
        self.absent: set[tuple[str, str]] = set()
        #: (path an import found, the file it resolved to) where a symlink made them differ, since
        #: the last clear: the analysis depends on where the links point.
        self.links: set[tuple[str, str]] = set()
        self._listings: dict[str, frozenset[str] | None] = {}
        self._root_lookups: dict[tuple[str, str], _Found] = {}
        #: The walk being summarized (``walks.Recording``): the files it views, the definitions
        #: it reads (``function``, ``definition``, ``class_``, ``block_body``, ``imports``) and the
        #: entries found missing go there too.
        self.recording: Recording | None = None
        self._displays: dict[Path, str] = {}
        self._extra_roots = tuple(dict.fromkeys(r.resolve() for r in extra_roots))
        self._lookups: dict[tuple[str, Path], _Found] = {}
        #: ``_lookups`` by the importing file itself: its folder is a new path at each call, whose
        #: hash is computed again (105,000 lookups in a check of huggingface/peft).
        self._file_lookups: dict[tuple[str, Path], _Found] = {}
        self._folders: dict[Path, Path] = {}
        #: The ids of the groups of missing entries (``_groups``) in ``absent`` since the last
        #: clear: a lookup misses dozens of candidates (one per import root), the same for most
        #: names, added once per group rather than at every import.
        self._merged: set[int] = set()
        #: Each distinct group of missing entries a lookup found, kept once (ids stay valid).
        self._groups: dict[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]] = {}
        self._package_chains: dict[Path, tuple[tuple[Path, ...], tuple[tuple[str, str], ...]]] = {}

    @contextmanager
    def detached(self) -> Iterator[None]:
        """What is read meanwhile is compared, not depended on: neither the analysis nor the walk
        being summarized depends on it (``Interpreter._definitions_hold`` compares a summary's files
        and definitions before knowing it will replay it; ``depend_on`` once it does)."""
        recording, accessed = self.recording, self.accessed
        self.recording, self.accessed = None, set()
        try:
            yield
        finally:
            self.recording, self.accessed = recording, accessed

    def depend_on(self, files: Iterable[Path], absent: Iterable[tuple[str, str]]) -> None:
        """The analysis depends on these files and these missing entries (those of a walk summary
        it replays: the files it read and those holding the definitions it read)."""
        self.accessed.update(files)
        self.absent.update(absent)

    def start_recording(self) -> None:
        """Forget the dependencies recorded so far (one analysis starts)."""
        self.accessed.clear()
        self.absent.clear()
        self._merged.clear()
        self.links.clear()

    def layout_facts(self) -> LayoutFacts:
        """What the analysis since the last clear found about the layout: the package markers
        that decided the identities of the files it read, and the links its imports followed."""
        layout = self.layout
        return LayoutFacts.of((marker for path in self.accessed for marker in layout.markers(path)), self.links)

    def name_display(self, path: Path, display: str) -> None:
        self._displays[interned(path)] = display  # looked up by the interned path, compared by identity

    def display(self, path: Path) -> str:
        shown = self._displays.get(path)
        if shown is None:
            shown = self._displays[path] = display_path(path)
        return shown

    def note(self, path: Path) -> None:
        """The walk being summarized depends on all of ``path``'s contents."""
        if self.recording is not None:
            self.recording.files.add(path)

    def view(self, path: Path) -> ModuleView:
        """``path``'s view; the walk being summarized depends on all of the file's contents."""
        if self.recording is not None:
            self.recording.files.add(path)
        self.accessed.add(path)
        return self._views.get(path) or self._load(path)

    def function(self, path: Path, qualname: str) -> FunctionSummary | None:
        """A function's summary; the walk being summarized depends on that definition only."""
        found = self._function_summary(path, qualname)
        if self.recording is not None:
            self.recording.parts.setdefault(Part("function", path, qualname), found)
        return found

    def callee(self, path: Path, qualname: str) -> FunctionSummary | None:
        """A function's summary, for a call of it: the walk being summarized depends on its
        parameters only (and on its being there), since it depends on what the call gives through
        the callee's own summary (``walks.Call``)."""
        found = self._function_summary(path, qualname)
        if self.recording is not None:
            self.recording.parts.setdefault(Part("signature", path, qualname), _signature(found))
        return found

    def definition(self, path: Path, qualname: str) -> Definition | None:
        """What executing a function's ``def`` statement reads of it (``Definition``); the walk being
        summarized depends on that, not on the body: a class body defines every method, and
        whatever reads a class attribute would otherwise depend on every method's body."""
        summary = self._function_summary(path, qualname)
        found = summary.definition if summary is not None else None
        if self.recording is not None:
            self.recording.parts.setdefault(Part("definition", path, qualname), found)
        return found

    def _function_summary(self, path: Path, qualname: str) -> FunctionSummary | None:
        self.accessed.add(path)
        return (self._views.get(path) or self._load(path)).function(qualname)

    def block_body(self, path: Path, index: int) -> tuple[Stmt, ...]:
        """The statements of ``path``'s module-level block ``index`` (a ``class`` block's are its
        ``Define``, not the class body); the walk being summarized that runs them depends on them
        and on what they read, not on the rest of the file."""
        found = self._view(path).block(index).body
        if self.recording is not None:
            self.recording.parts.setdefault(Part("block", path, str(index)), found)
        return found

    def class_(self, path: Path, qualname: str) -> ClassSummary | None:
        """A class's summary (its methods' bodies are their own definitions)."""
        found = self._view(path).class_(qualname)
        if self.recording is not None:
            self.recording.parts.setdefault(Part("class", path, qualname), found)
        return found

    def imports(self, path: Path) -> tuple[str, ...] | None:
        """The modules ``path``'s module-level code imports, None when it cannot be parsed."""
        view = self._view(path)
        found = view.outline.imports if view.failure is None else None
        if self.recording is not None:
            self.recording.parts.setdefault(Part("imports", path, ""), found)
        return found

    def rebindable(self, path: Path) -> frozenset[str]:
        """``path``'s globals that a module-level rebinder may change (``ModuleOutline.rebindable``)."""
        view = self._view(path)
        found = view.outline.rebindable if view.failure is None else frozenset()
        if self.recording is not None:
            self.recording.parts.setdefault(Part("rebindable", path, ""), found)
        return found

    def star_imports(self, path: Path) -> tuple[str, ...]:
        found = self._view(path).star_imports
        if self.recording is not None:
            self.recording.parts.setdefault(Part("star_imports", path, ""), found)
        return found

    def module_name(self, path: Path) -> str:
        """The dotted name of ``path``'s module (from where it is, not what it holds)."""
        return self._view(path).module

    def is_package(self, path: Path) -> bool:
        return self._view(path).is_package

    def view_of(self, path: Path) -> ModuleView:
        """``path``'s view, for a caller that records a narrower dependency itself (the heap cells
        module globals are read from, a digest)."""
        return self._view(path)

    def identity(self, path: Path) -> tuple:
        """``path``'s view's identity (``ModuleView.identity``), compared rather than depended on:
        neither the analysis nor the walk being summarized depends on it."""
        return (self._views.get(path) or self._load(path)).identity

    def part(self, part: Part) -> object:
        """What ``function``, ``callee`` (``signature``), ``definition``, ``class_``, ``block_body``, ``imports``,
        ``rebindable`` or ``star_imports`` answers now."""
        path, name = part.path, part.name
        match part.kind:
            case "function":
                return self.function(path, name)
            case "signature":
                return _signature(self.callee(path, name))
            case "definition":
                return self.definition(path, name)
            case "class":
                return self.class_(path, name)
            case "block":
                return self.block_body(path, int(name))
            case "imports":
                return self.imports(path)
            case "rebindable":
                return self.rebindable(path)
            case "star_imports":
                return self.star_imports(path)

    def _view(self, path: Path) -> ModuleView:
        self.accessed.add(path)
        return self._views.get(path) or self._load(path)

    def _load(self, path: Path) -> ModuleView:
        identity = self.layout.identity(path)
        module, is_package = identity.module, identity.is_package
        view = self._views[path] = self._provider(path, self.display(path), module, is_package)
        return view

    def search_roots(self, importer: Path) -> Iterator[Path]:
        # A script's own folder is sys.path[0]; inside a package only the package root is.
        yield self.layout.identity(importer).root
        yield from self._extra_roots

    def folder(self, path: Path) -> Path:
        """``path.parent``, the same object each time: a new one is made and hashed at each call of
        ``parent``, and imports ask for their file's folder at every name they resolve."""
        found = self._folders.get(path)
        if found is None:
            found = self._folders[path] = path.parent
        return found

    def find_module(self, dotted: str, importer: Path) -> Path | None:
        """The file of module ``dotted`` as seen from ``importer``, or None (external module)."""
        key = (dotted, importer)
        found = self._file_lookups.get(key)
        if found is None:
            folder_key = (dotted, self.folder(importer))
            found = self._lookups.get(folder_key)
            if found is None:
                found = self._lookups[folder_key] = self._search(dotted, importer)
            self._file_lookups[key] = found
        path, missed, link = found
        if missed:
            group = id(missed)
            if group not in self._merged:
                self._merged.add(group)
                self.absent.update(missed)
            recording = self.recording
            if recording is not None and group not in recording.lookups:
                recording.lookups.add(group)
                recording.absent.update(missed)
        if link is not None:
            self.links.add(link)
        return path

    def _search(self, dotted: str, importer: Path) -> _Found:
        """(the module's file or None, the missing entries of the candidates tried before it, the
        link followed to the file if any)."""
        missed: dict[tuple[str, str], None] = {}
        found: _Found = (None, (), None)
        for root in dict.fromkeys(self.search_roots(importer)):
            found = self._search_root(str(root), dotted)
            missed.update(dict.fromkeys(found[1]))
            if found[0] is not None:
                break
        group = tuple(missed)
        return found[0], self._groups.setdefault(group, group), found[2]

    def _search_root(self, root: str, dotted: str) -> _Found:
        """``dotted`` under one root: ``root/a/b/__init__.py`` then ``root/a/b.py``, as (the file or
        None, the missing entry of each candidate not there). Answered once per root and name, from
        folder listings: every file imports through the same roots (the package roots of every
        checked file: lerobot has 61), so asking the file system per importer and candidate made the
        search grow with files times roots (180,000 stat calls, a quarter of lerobot's cold run)."""
        key = (root, dotted)
        known = self._root_lookups.get(key)
        if known is None:
            known = self._root_lookups[key] = self._candidates_under(root, [p for p in dotted.split(".") if p])
        return known

    def _candidates_under(self, root: str, parts: list[str]) -> _Found:
        entries = self._entries(root)
        if entries is None:
            return None, (self._deepest_folder_above(root),), None
        if not parts:
            return None, (), None
        folder = root
        for name in parts[:-1]:
            below = self._entries(os.path.join(folder, name)) if name in entries else None
            if below is None:
                return None, ((folder, name),), None  # both candidates are missing at the same entry
            folder, entries = os.path.join(folder, name), below
        last = parts[-1]
        missed: list[tuple[str, str]] = []
        package = os.path.join(folder, last)
        package_entries = self._entries(package) if last in entries else None
        if package_entries is None:
            missed.append((folder, last))
        elif "__init__.py" in package_entries and os.path.isfile(init := os.path.join(package, "__init__.py")):
            found, link = _followed(init)
            return found, (), link
        else:
            missed.append((package, "__init__.py"))
        module = last + ".py"
        if module in entries and os.path.isfile(file := os.path.join(folder, module)):
            found, link = _followed(file)
            return found, tuple(missed), link
        missed.append((folder, module))
        return None, tuple(missed), None

    def _entries(self, folder: str) -> frozenset[str] | None:
        """The names in ``folder``, None when it is not a folder; listed once per index."""
        if folder in self._listings:
            return self._listings[folder]
        try:
            entries: frozenset[str] | None = frozenset(os.listdir(folder))
        except OSError:
            entries = None
        self._listings[folder] = entries
        return entries

    def _deepest_folder_above(self, path: str) -> tuple[str, str]:
        """The deepest existing folder above ``path`` (which is not a folder) and its entry on the
        way to ``path``."""
        folder, entry = os.path.split(path)
        while self._entries(folder) is None and os.path.split(folder)[0] != folder:
            folder, entry = os.path.split(folder)
        return folder, entry

    def package_chain(self, path: Path) -> tuple[Path, ...]:
        """The ``__init__.py`` files Python runs before ``path`` (outermost first); the file system
        is asked once per file (every root of a registry's package asks for the same chains)."""
        known = self._package_chains.get(path)
        if known is None:
            found = []
            links = []
            directory = path.parent
            while (directory / "__init__.py").is_file() and directory.parent != directory:
                init, link = _followed(str(directory / "__init__.py"))
                if link is not None:
                    links.append(link)
                if init != path:
                    found.append(init)
                directory = directory.parent
            known = self._package_chains[path] = (tuple(reversed(found)), tuple(links))
        chain, links_followed = known
        self.links.update(links_followed)
        return chain

    def split_qualified(self, qualified: str, importer: Path) -> tuple[Path, list[str]] | None:
        """Longest importable prefix of ``qualified`` and the attribute names after it."""
        parts = qualified.split(".")
        for cut in range(len(parts), 0, -1):
            found = self.find_module(".".join(parts[:cut]), importer)
            if found is not None:
                return found, parts[cut:]
        return None


#: A module search's answer: the file or None, the missing entries of the candidates tried, and
#: (the candidate, the file it resolved to) when a symlink made them differ.
_Found = tuple[Path | None, tuple[tuple[str, str], ...], tuple[str, str] | None]


def _followed(candidate: str) -> tuple[Path, tuple[str, str] | None]:
    """The file ``candidate`` names, symlinks followed, and the link when it differs."""
    target = interned(Path(candidate).resolve())
    return target, ((candidate, str(target)) if str(target) != candidate else None)


def _signature(function: FunctionSummary | None) -> tuple[str, ...] | None:
    """What a call depends on of the function it calls (``ModuleIndex.callee``)."""
    return function.params if function is not None else None
