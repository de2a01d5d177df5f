"""What one ``check`` analyzes (the paths named, stdin, ``--dependents``) and which findings it reports."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..core.paths import real_path
from ..core.settings import Config
from ..project import default_root, project_root

#: The path that stands for stdin.
STDIN = "-"


@dataclass
class Scope:
    """What one ``check`` analyzes, and which of the findings it reports."""

    #: The paths handed to the analyzer (what the user named, plus the project root for stdin and
    #: ``--dependents``).
    paths: list[str]
    sources: dict[Path, bytes] = field(default_factory=dict)
    #: Resolved files whose findings are reported; None: every finding.
    keep: set[Path] | None = None
    #: With ``--dependents``: also findings whose related locations are in ``keep``.
    related_too: bool = False
    #: Paths named that are not files (always reported; kept by their display).
    problems: set[str] = field(default_factory=set)
    #: Files checked, when it is not the analyzer's count (stdin: 1; ``--dependents``: the named ones).
    checked: int | None = None
    #: stdin: its display name and text (for --show-source), and why a notebook on stdin is unreadable.
    stdin: tuple[str, bytes] | None = None
    stdin_failure: str | None = None


def root_path(root: Path | None) -> str | None:
    """The project root as a path relative to the working directory (so files show as relative paths)."""
    if root is None:
        return None
    try:
        return os.path.relpath(root)
    except ValueError:  # another drive on Windows
        return str(root)


def build_scope(args: argparse.Namespace, config: Config) -> Scope:
    """Raises ValueError for a usage error."""
    from ..core.paths import is_notebook
    from ..notebook import NotebookError
    from ..notebook import read as read_notebook

    paths = list(args.paths)
    stdin = paths == [STDIN] or (not paths and args.stdin_filename is not None)
    if STDIN in paths and len(paths) > 1:
        raise ValueError("- (stdin) cannot be combined with other paths")
    if args.stdin_filename is not None and not stdin:
        raise ValueError("--stdin-filename names the file stdin stands for: use it with - (or without paths)")
    if not stdin:
        paths = paths or ["."]
        if not args.dependents:
            return Scope(paths)
        from ..project import discover

        named, problems = discover(paths, config)
        root = root_path(config.root or default_root(paths))
        return Scope(
            [*paths, *([root] if root is not None else [])],
            keep={f.path for f in named},
            related_too=True,
            problems={p.display for p in problems},
            checked=len(named),
        )
    if args.confirm or args.dependents:
        raise ValueError(
            f"{'--confirm' if args.confirm else '--dependents'} works on files on disk; it cannot check stdin"
        )
    shown = args.stdin_filename if args.stdin_filename is not None else STDIN
    target = real_path(Path(shown))
    data = sys.stdin.buffer.read()
    source, failure = data, None
    if is_notebook(shown):
        try:
            source = read_notebook(target, data).text.encode("utf-8", "surrogatepass")
        except NotebookError as error:
            source, failure = b"", f"cannot read: {error}"
    analyzed = [shown]
    if args.stdin_filename is not None:  # the project's other files: callers of its functions, importers
        folder = project_root(target)[0]
        root = root_path(config.root or folder)
        if root is not None:
            analyzed.append(root)
    return Scope(analyzed, {target: source}, keep={target}, checked=1, stdin=(shown, data), stdin_failure=failure)


def narrowed(report, scope: Scope):  # type: ignore[no-untyped-def]
    """The report with only the findings ``scope`` asks for (its stats are the analysis's)."""

    def wanted(finding) -> bool:  # type: ignore[no-untyped-def]
        if finding.location.path in scope.problems or finding.location.file in scope.keep:  # type: ignore[operator]
            return True
        return scope.related_too and any(r.location.file in scope.keep for r in finding.related)  # type: ignore[operator]

    if scope.keep is None:
        return report
    return replace(report, findings=tuple(f for f in report.findings if wanted(f)))


def reader(scope: Scope, contents: dict[Path, bytes] | None = None):  # type: ignore[no-untyped-def]
    """A displayed file's bytes for fingerprints: stdin's own text, contents being fixed, else the disk."""

    def read(display: str) -> bytes | None:
        if scope.stdin is not None and display == scope.stdin[0]:
            return next(iter(scope.sources.values()), scope.stdin[1])
        if contents:
            found = contents.get(real_path(Path(display)))
            if found is not None:
                return found
        try:
            return Path(display).read_bytes()
        except OSError:
            return None

    return read


def stdin_failure(scope: Scope):  # type: ignore[no-untyped-def]
    from ..core.findings import Finding, Severity
    from ..core.locations import Location

    assert scope.stdin is not None and scope.stdin_failure is not None
    return Finding("CAL900", scope.stdin_failure, Severity.ERROR, Location.point(scope.stdin[0]))


def stdin_lines(scope: Scope):  # type: ignore[no-untyped-def]
    """``--show-source`` lines: stdin's own text for its findings, files on disk for the rest."""
    from ..core.text import decode, split_lines
    from ..output.text import read_lines

    assert scope.stdin is not None
    shown, data = scope.stdin
    try:
        own: list[str] | None = split_lines(decode(data))
    except (UnicodeDecodeError, LookupError, SyntaxError):
        own = None
    files: dict[str, list[str] | None] = {}

    def source_line(location):  # type: ignore[no-untyped-def]
        if location.cell is not None:
            from ..notebook import load

            notebook = load(location.path)
            cell = notebook.cell(location.cell) if notebook is not None else None
            return cell.lines[location.line - 1] if cell is not None and 1 <= location.line <= len(cell.lines) else None
        if location.path == shown:
            lines = own
        else:
            if location.path not in files:
                files[location.path] = read_lines(location.path)
            lines = files[location.path]
        return lines[location.line - 1] if lines is not None and 1 <= location.line <= len(lines) else None

    return source_line
