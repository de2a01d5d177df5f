"""Output adapters: exactly one module per format, each a ``render(report) -> str``."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from ..api import Report

Renderer = Callable[[Report], str]


def _renderer(module: str) -> Renderer:
    """The ``render`` of format module ``module``, imported when first used: a run loads only its
    own format (SARIF's rule descriptors import every rule)."""

    def render(report: Report) -> str:
        rendered: str = importlib.import_module(f"{__name__}.{module}").render(report)
        return rendered

    return render


FORMATS: dict[str, Renderer] = {
    "text": _renderer("text"),
    "json": _renderer("json_format"),
    "sarif": _renderer("sarif"),
    "github": _renderer("github"),
    "gitlab": _renderer("gitlab"),
    "junit": _renderer("junit"),
}


def write_report(rendered: str, output: str | None) -> bool:
    """Write a report (or diff) to ``output`` or stdout; False when the file cannot be written."""
    import sys
    from pathlib import Path

    # File names that are not valid UTF-8 reach us as surrogate escapes: show them escaped.
    rendered = rendered.encode("utf-8", "backslashreplace").decode("utf-8")
    if output:
        try:
            Path(output).write_text(rendered, encoding="utf-8")
        except OSError as error:
            print(f"compile-ad-lint: cannot write {output}: {error.strerror}", file=sys.stderr)
            return False
    else:
        sys.stdout.write(rendered)
        sys.stdout.flush()
    return True


def render(name: str, report: Report, *, docs_url: str) -> str:
    """``report`` in format ``name``; rule links point under ``docs_url`` (``rule-docs-url``)."""
    if name == "sarif":
        from . import sarif

        return sarif.render(report, docs_url)
    return FORMATS[name](report)
