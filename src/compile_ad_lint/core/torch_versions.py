"""Torch versions as the analysis sees them: release series, ranges of them, and the target.

Core types (no imports from the package): the knowledge tables say which series each fact holds
for (``Versions``), the front ends resolve which series the user's torch is (``TorchTarget``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import total_ordering

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

_SERIES = re.compile(r"\s*v?(\d+)\.(\d+)(?![\d])")


@total_ordering
@dataclass(frozen=True)
class Series:
    """A torch release series: every ``major.minor.*`` release."""

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Series):
            return NotImplemented
        return (self.major, self.minor) < (other.major, other.minor)

    @classmethod
    def parse(cls, text: str) -> Series:
        """``"2.14"`` or ``"2.14.1"`` (a local part or suffix after the patch is ignored)."""
        match = _SERIES.match(text)
        if match is None:
            raise ValueError(f"not a torch version: {text!r}")
        return cls(int(match.group(1)), int(match.group(2)))


@dataclass(frozen=True)
class Versions:
    """The series a row holds for: from ``since`` (inclusive) up to ``before`` (exclusive); None is open."""

    since: Series | None = None
    before: Series | None = None

    def holds_for(self, series: Series) -> bool:
        return (self.since is None or series >= self.since) and (self.before is None or series < self.before)

    def __str__(self) -> str:
        if self.since is None and self.before is None:
            return "every torch version"
        if self.since is None:
            return f"torch < {self.before}"
        if self.before is None:
            return f"torch >= {self.since}"
        return f"torch >= {self.since}, < {self.before}"


EVERY_VERSION = Versions()


@dataclass(frozen=True)
class TorchTarget:
    """The torch the findings speak for: the known series it admits, what admitted them, and from where."""

    #: The known series the target admits, oldest first (never empty).
    series: tuple[Series, ...]
    #: As written where it came from: ``2.14.1``, ``>=2.4``, or the newest known series.
    spec: str
    #: Where it came from: ``--target-torch``, ``pyproject.toml target-torch``, ``installed torch``, ...
    source: str
    #: Every series the knowledge has facts for, oldest first, when the target was resolved.
    known: tuple[Series, ...]
    #: The target admits versions older than the oldest known series (assumed to behave like it).
    older: bool = False
    #: The target admits versions newer than the newest known series (assumed to behave like it).
    newer: bool = False
    #: What the findings assume beyond the recorded facts (``older``/``newer``), or None.
    assumed: str | None = None

    def describe(self) -> str:
        """One line for a summary or a log: ``torch 2.14 (2.14.1, installed torch)``."""
        return f"{self.versions_text(self.series)} ({self.spec}, {self.source})"

    def versions_text(self, series: Iterable[Series]) -> str:
        """``torch 2.13``, ``torch 2.14-2.15``, ``torch >= 2.14`` (the target admits newer ones too)."""
        text = describe_series(series, self)
        return "any torch version" if text == "any version" else f"torch {text}"

    def as_dict(self) -> dict[str, object]:
        return {
            "spec": self.spec,
            "source": self.source,
            "series": [str(s) for s in self.series],
            "assumed": self.assumed,
        }


def describe_series(series: Iterable[Series], target: TorchTarget) -> str:
    """``2.13``, ``2.14-2.15``, ``>= 2.14`` (when ``target`` admits newer ones), ``<= 2.13`` (older ones)."""
    known = target.known
    chosen = sorted(set(series))
    if not chosen:
        return "no version"
    groups: list[list[Series]] = []
    for current in chosen:
        if (
            groups
            and groups[-1][-1] in known
            and current in known
            and known.index(current) == known.index(groups[-1][-1]) + 1
        ):
            groups[-1].append(current)
        else:
            groups.append([current])
    texts = []
    for group in groups:
        low, high = group[0], group[-1]
        open_low = target.older and low == known[0]
        open_high = target.newer and high == known[-1]
        if open_low and open_high:
            texts.append("any version")
        elif open_high:
            texts.append(f">= {low}")
        elif open_low:
            texts.append(f"<= {high}")
        else:
            texts.append(str(low) if low == high else f"{low}-{high}")
    return ", ".join(texts)


class TargetError(ValueError):
    """A ``target-torch`` value that is neither a version nor a specifier."""


def parse_setting(text: str) -> SpecifierSet:
    """``2.14`` (any 2.14 release), ``2.14.1`` (exactly), or a specifier (``>=2.4,<2.15``)."""
    value = text.strip()
    if not value:
        raise TargetError("an empty torch version")
    if value[0].isdigit() or value[0] == "v":
        try:
            version = Version(value)
        except InvalidVersion as error:
            raise TargetError(f"{text!r} is not a torch version (like 2.14 or 2.14.1)") from error
        release = version.release
        if len(release) <= 2:  # ``2.14``: any 2.14 release; ``2``: any 2.x
            return SpecifierSet(f"=={'.'.join(map(str, release))}.*")
        return SpecifierSet(f"=={version.public}")
    try:
        return SpecifierSet(value)
    except InvalidSpecifier as error:
        raise TargetError(
            f"{text!r} is neither a torch version (2.14, 2.14.1) nor a version specifier (>=2.4,<2.15)"
        ) from error
