"""The rule codes, as data: what the settings validate ``select``/``ignore`` against without
importing the rules, which check at class creation that they match their row."""

from __future__ import annotations

from dataclasses import dataclass

from .findings import Severity


@dataclass(frozen=True)
class Code:
    code: str
    name: str
    severity: Severity


#: Every rule's code, in the order the rules are listed (``rules.ALL_RULES``) and documented.
CODES: tuple[Code, ...] = (
    Code("CAL001", "compiled-callable-in-dual-level", Severity.ERROR),
    Code("CAL002", "backward-autocast-mismatch", Severity.ERROR),
    Code("CAL003", "invalid-backward-pass-autocast", Severity.ERROR),
    Code("CAL004", "double-backward-through-compiled", Severity.ERROR),
    Code("CAL005", "unused-compiled-output-zero-grad", Severity.WARNING),
    Code("CAL006", "compiled-callable-runs-eagerly-under-forward-ad", Severity.WARNING),
    Code("CAL900", "unparsable-file", Severity.ERROR),
    Code("CAL901", "unused-noqa", Severity.WARNING),
)
BY_CODE: dict[str, Code] = {row.code: row for row in CODES}
