"""The findings of every run compared: each run against the reference, the ``# expect:`` marks of the corpora."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench_common import OURS_COLD
from bench_corpora import Corpus
from bench_rows import Row
from bench_tools import relative_to_root


@dataclass
class CorpusResult:
    corpus: Corpus
    rows: list[Row]
    consistent: bool
    mismatches: list[str]
    lsp: dict[str, dict] = field(default_factory=dict)  # LSP_COLD / LSP_WARM -> session summary
    lsp_file: str | None = None  # root-relative path of the file flake8 (one file) and the client opened
    errors: list[str] = field(default_factory=list)  # measurements that could not be made
    #: Language-server publishes that differ from the CLI before the project pass ran (not mismatches:
    #: the server shows the open files' own entry points while edits follow each other).
    lsp_interim: list[str] = field(default_factory=list)


def _findings_key(findings: list) -> str:
    return json.dumps(findings, sort_keys=True)


def _field_differences(a: object, b: object, prefix: str = "", limit: int = 4) -> list[str]:
    """``key: A -> B`` for the (nested) fields where ``a`` and ``b`` differ, at most ``limit``."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for key in sorted(set(a) | set(b), key=str):
            if a.get(key) != b.get(key):
                out.extend(_field_differences(a.get(key), b.get(key), f"{prefix}{key}.", limit - len(out)))
            if len(out) >= limit:
                break
        return out[:limit]
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        out = []
        for index, (x, y) in enumerate(zip(a, b)):
            if x != y:
                out.extend(_field_differences(x, y, f"{prefix}{index}.", limit - len(out)))
            if len(out) >= limit:
                break
        return out[:limit]
    show = lambda v: (json.dumps(v, default=str) if not isinstance(v, str) else repr(v))[:240]
    return [f"{prefix.rstrip('.') or 'value'}: {show(a)} -> {show(b)}"]


_LSP_FIELDS = ("code", "line0", "character0", "end_line0", "end_character0", "message", "related")


def _named(item: object) -> object:
    """An LSP comparison tuple (lsp_client.diagnostic_keys) as a dict with field names."""
    if isinstance(item, tuple) and len(item) == len(_LSP_FIELDS) and isinstance(item[0], str):
        return dict(zip(_LSP_FIELDS, item))
    return item


def _location(item: object) -> tuple:
    if isinstance(item, dict):
        return tuple(item[k] for k in ("path", "line", "column", "line0", "character0", "code") if k in item)
    return (item,)


def describe_difference(got: Sequence, want: Sequence, reference: str) -> str:
    """What differs between two finding lists: counts, then the first pair at the same place field by field."""
    missing = [_named(w) for w in want if w not in got]
    extra = [_named(g) for g in got if g not in want]
    text = f"{len(got)} findings vs {len(want)} in {reference}; {len(missing)} not found here, {len(extra)} only here"
    by_place = {_location(m): m for m in missing}
    for item in extra:
        twin = by_place.get(_location(item))
        if twin is not None:
            fields = "; ".join(_field_differences(twin, item))
            return f"{text}; at {':'.join(str(x) for x in _location(item) if x is not None)} {fields} ({reference} -> here)"
    first = missing[:1] or extra[:1]
    which = "not found here" if missing else "only here"
    return f"{text}; first {which}: {json.dumps(first, default=str)[:400]}"


def compare_findings(labelled: Sequence[tuple[str, list]]) -> list[str]:
    """Labels of the runs whose findings differ from the first one's (with a short reason)."""
    if not labelled:
        return []
    reference_label, reference = labelled[0]
    key = _findings_key(reference)
    problems = []
    for label, findings in labelled[1:]:
        if _findings_key(findings) != key:
            problems.append(f"{label}: {describe_difference(findings, reference, reference_label)}")
    return problems


def touch(path: Path, count: int) -> None:
    with open(path, "ab") as handle:
        handle.write(f"\n# compile-ad-lint bench touch {count}\n".encode())


def same_findings(label: str, got: list, want: list, reference: str) -> list[str]:
    """One mismatch line (or none) when two comparable finding lists differ."""
    if got == want:
        return []
    return [f"{label}: {describe_difference(got, want, reference)}"]


def marked_mismatches(corpus: Corpus, findings: Sequence[dict]) -> list[str]:
    """A generated corpus: its findings must be exactly the (path, line, code) the generator marked."""
    found = sorted((relative_to_root(corpus.cwd / f["path"], corpus.directory), f["line"], f["code"]) for f in findings)
    want = sorted(tuple(e) for e in corpus.expected or ())
    return same_findings(f"{corpus.name}: {OURS_COLD} vs the generator's # expect marks", found, want, "the marks")
