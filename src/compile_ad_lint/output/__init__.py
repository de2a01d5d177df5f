"""Output adapters: exactly one module per format, each a ``render(report) -> str``."""

from __future__ import annotations

from collections.abc import Callable

from ..api import Report
from . import github, json_format, sarif, text

Renderer = Callable[[Report], str]

FORMATS: dict[str, Renderer] = {
    "text": text.render,
    "json": json_format.render,
    "sarif": sarif.render,
    "github": github.render,
}
