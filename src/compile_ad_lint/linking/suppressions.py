"""Which suppression comments of a checked file silence nothing (CAL901 ``unused-noqa``).

A ``# noqa: CAL002`` that silences nothing hides the next real CAL002 on that line; Ruff reports
such comments (RUF100). What a comment silenced is recorded while the other rules' findings are
filtered (``Analyzer._findings``); here the comments of each checked file are matched against it.

Only what the check can know is reported: codes of this tool (a ``# noqa: E501`` is flake8's), of
rules enabled in that file (a ``--select CAL001`` run knows nothing of CAL002), in a file the
analysis read to its end (none with a CAL900 finding); a bare ``# noqa`` belongs to every tool and
is left alone, this tool's blanket ``# compile-ad-lint: ignore`` is not. A code that names no rule
(``CAL999``) is reported too. A line whose suppression names CAL901 (``CAL901``, ``CAL9``, ``CAL``)
silences CAL901 there; no other suppression silences it (a blanket one would silence its own report).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path

from ..core.locations import Location
from ..core.paths import real_path
from ..core.settings import Config
from ..project import SourceFile, discover, project_root
from ..suppression import (
    SuppressionComment,
    SuppressionKind,
    code_spans,
    may_name_our_codes,
    suppression_comments,
)
from .events import UnusedSuppression

OWN_PREFIX = "CAL"
UNUSED_NOQA = "CAL901"


def unused_in_files(
    files: Sequence[SourceFile],
    contents: Mapping[Path, bytes],
    used: Mapping[str, Mapping[int, Collection[str]]],
    skipped: Collection[str],
    paths: Sequence[str],
    enabled_in: Callable[[SourceFile], Callable[[str], bool]],
    known: Collection[str],
    config: Config,
) -> list[UnusedSuppression]:
    """The unused suppressions of the checked ``files`` (but those ``skipped``: a CAL900 there),
    when the check of ``paths`` covers their whole projects (``config``'s excludes apply); ``used``
    by display path."""
    candidates = [
        f for f in files if f.display not in skipped and f.path in contents and may_name_our_codes(contents[f.path])
    ]
    if not whole_projects(paths, candidates, {f.path for f in files}, config):
        return []
    return [
        event
        for source_file in candidates
        for event in unused_suppressions(
            source_file.display,
            contents[source_file.path],
            used.get(source_file.display, {}),
            enabled_in(source_file),
            known,
        )
    ]


def unused_suppressions(
    display: str,
    source: bytes,
    used: Mapping[int, Collection[str]],
    enabled: Callable[[str], bool],
    known: Collection[str],
) -> list[UnusedSuppression]:
    """The suppressions of ``source`` (shown as ``display``) that silence nothing.

    ``used``: line -> the listed codes that silenced a finding there (``"*"`` for a blanket one);
    ``enabled(code)``: whether every rule ``code`` covers ran on this file; ``known``: the codes
    and prefixes that name rules.
    """
    lines = _text_lines(source)
    comments = suppression_comments(source)
    # A line whose comment names CAL901 (or a prefix of it) silences CAL901 there: nothing is said.
    silenced = {s.line for s in comments if any(UNUSED_NOQA.startswith(code) for code in s.codes)}
    found: list[UnusedSuppression] = []
    for suppression in comments:
        if suppression.line in silenced:
            continue
        text = lines[suppression.line - 1] if suppression.line <= len(lines) else ""
        on_line = used.get(suppression.line, ())
        if not suppression.codes:
            if suppression.kind is SuppressionKind.NOQA or on_line:
                continue  # a bare noqa is every tool's
            found.append(_unused(display, suppression, text, (), (), _remove_all(text, suppression)))
            continue
        ours = sorted(code for code in suppression.codes if code.startswith(OWN_PREFIX))
        mine = ours
        unknown = tuple(code for code in mine if code not in known)
        unused = tuple(code for code in mine if code in known and code not in on_line and enabled(code))
        if not unused and not unknown:
            continue
        dropped = set(unused) | set(unknown)
        if dropped == set(suppression.codes):
            removal = _remove_all(text, suppression)
        else:
            removal = _remove_codes(text, suppression, dropped)
        found.append(_unused(display, suppression, text, unused, unknown, removal))
    return found


def _text_lines(source: bytes) -> list[str]:
    """The file's lines as the tokenizer numbered them (decoded, line ends dropped)."""
    from ..core.text import decode, split_lines

    try:
        return [line.rstrip("\r\n") for line in split_lines(decode(source))]
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return []


def _unused(
    display: str,
    suppression: SuppressionComment,
    text: str,
    unused: tuple[str, ...],
    unknown: tuple[str, ...],
    removal: tuple[int, int, str],
) -> UnusedSuppression:
    location = Location(display, suppression.line, suppression.start + 1, suppression.line, suppression.end + 1)
    return UnusedSuppression(location, suppression.kind.value, unused, unknown, removal)


def _remove_all(text: str, suppression: SuppressionComment) -> tuple[int, int, str]:
    """The whole suppression, with the blanks before it (and after it, at the end of the line)."""
    start = len(text[: suppression.start].rstrip(" \t"))
    end = suppression.end if text[suppression.end :].strip(" \t") else len(text)
    return start + 1, end + 1, ""


def _remove_codes(text: str, suppression: SuppressionComment, dropped: set[str]) -> tuple[int, int, str]:
    """The list of codes without ``dropped``, written as the list's codes were (``, ``-separated)."""
    spans = code_spans(text, suppression)
    kept = [text[start:end] for code, start, end in spans if code not in dropped]
    return spans[0][1] + 1, spans[-1][2] + 1, ", ".join(kept)


def whole_projects(
    paths: Sequence[str], files: Sequence[SourceFile], checked: Collection[Path], config: Config
) -> bool:
    """Whether a check of ``paths`` (which checked the files ``checked``) covers every project its
    ``files`` are in: each file's project folder (``project_root``; a loose script's own folder)
    is inside a folder ``paths`` names, or every file discovery finds there was checked. Then a
    finding another file's code produces in a checked file is among the findings, and a
    suppression that silences none of them silences nothing."""
    if not files:
        return False
    folders = [real_path(given) for given in paths if Path(given).is_dir()]
    for project in {(project_root(f.path)[0] or f.path.parent) for f in files}:
        if any(project.is_relative_to(folder) for folder in folders):
            continue
        found, _ = discover([str(project)], config)
        if not all(f.path in checked for f in found):
            return False
    return True
