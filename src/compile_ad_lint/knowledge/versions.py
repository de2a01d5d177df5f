"""The torch versions the knowledge has facts for, and targets mapped onto them.

The facts scripts under ``facts/`` were run on one release of each known series (``RECORDED``); a
target admitting a series older than the oldest known one is assumed to behave like it, one newer
than the newest like that one (``TorchTarget.assumed`` says so).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..core.torch_versions import EVERY_VERSION, Series, TorchTarget, Versions

__all__ = ["EVERY_VERSION", "KNOWN_SERIES", "NEWEST", "OLDEST", "RECORDED", "Series", "Versions", "target_of"]

#: The release each series' facts were recorded on (``facts/recorded/torch-<release>.json``), oldest first.
RECORDED: dict[Series, str] = {
    Series(2, 13): "2.13.0",
    Series(2, 14): "2.14.1",
    Series(2, 15): "2.15.0",
}
KNOWN_SERIES: tuple[Series, ...] = tuple(sorted(RECORDED))
OLDEST, NEWEST = KNOWN_SERIES[0], KNOWN_SERIES[-1]


def target_of(series: Iterable[Series], spec: str, source: str) -> TorchTarget:
    """A target admitting exactly ``series`` (any series, known or not), mapped onto the known ones."""
    wanted = sorted(set(series))
    known = tuple(s for s in KNOWN_SERIES if s in wanted)
    older = any(s < OLDEST for s in wanted)
    newer = any(s > NEWEST for s in wanted)
    mapped = set(known) | ({OLDEST} if older else set()) | ({NEWEST} if newer else set())
    if not mapped:  # between two known series (none exist today): the nearest older one
        below = [s for s in KNOWN_SERIES if wanted and s < wanted[0]]
        mapped = {below[-1] if below else OLDEST}
    notes = []
    if older:
        notes.append(f"versions before {OLDEST} as {OLDEST} (facts recorded on {RECORDED[OLDEST]})")
    if newer:
        notes.append(f"versions after {NEWEST} as {NEWEST} (facts recorded on {RECORDED[NEWEST]})")
    return TorchTarget(tuple(sorted(mapped)), spec, source, KNOWN_SERIES, older, newer, "; ".join(notes) or None)


def default_target(source: str = "the newest torch with recorded facts") -> TorchTarget:
    return target_of([NEWEST], str(NEWEST), source)
