"""Which plain calls of a compiled callable can run before a dual call of it, within one root.

From torch 2.14 on, a compiled callable's first call with dual inputs graph-breaks and keeps its
tangent, but a call after it was traced with plain inputs reuses that graph (``knowledge.behaviour``).
A root's analysis is one program: its plain calls (``CompiledCallPlain``) are joined to its dual calls
(``CompiledCallInDualRegion.plain_first``) when the root is done, so calls in another script (another
process) never count. A plain call counts unless both it and the dual call are module-level code
outside loops and it comes after the dual call.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from ..core.locations import Location
from .events import CompiledCallInDualRegion, CompiledCallPlain, Event
from .values import UNKNOWN_BACKEND, Compiled, ExternalInstance, Instance, Wrapper


def traced_key(compiled: Compiled) -> object:
    """What a traced graph is shared by (``facts/forward_ad.py``, ``knowledge.behaviour`` claims):
    a function's code (two ``torch.compile`` wrappers of one function share it), a module class that
    torch.nn defines (two compiled ``nn.Linear`` instances share it), but one compiled instance of a
    project module (another instance of its class traces its own): the analysis knows instances by
    class, so the compile site stands for the instance."""
    target = compiled.target
    if isinstance(target, ExternalInstance):
        return target
    if target is None or isinstance(target, (Instance, Wrapper)):
        return (target, compiled.site)
    return target


def _same_backend(a: Compiled, b: Compiled) -> bool:
    return a.backend == b.backend or UNKNOWN_BACKEND in (a.backend, b.backend)


def with_plain_first(events: Iterable[Event]) -> list[Event]:
    """The root's events with each dual call's ``plain_first`` filled in, the plain calls dropped."""
    events = list(events)
    plain: dict[object, list[CompiledCallPlain]] = {}
    for event in events:
        if isinstance(event, CompiledCallPlain):
            plain.setdefault(traced_key(event.compiled), []).append(event)
    joined: list[Event] = []
    #: What ``_before`` depends on -> its answer: the dual calls of one compiled callable at one
    #: place, reached along many call chains (740 of them in a generated trainer's root), share it.
    known: dict[tuple, tuple[Location, ...]] = {}
    for event in events:
        if isinstance(event, CompiledCallPlain):
            continue
        if isinstance(event, CompiledCallInDualRegion) and event.dual_inputs:
            key = traced_key(event.compiled)
            flagged = event.chain[0].location
            asked = (key, event.compiled.backend, event.once, flagged.path, flagged.line)
            before = known.get(asked)
            if before is None:
                before = known[asked] = _before(event, plain.get(key, ()))
            if before:
                event = replace(event, plain_first=before)
        joined.append(event)
    return joined


def _before(event: CompiledCallInDualRegion, calls: Iterable[CompiledCallPlain]) -> tuple[Location, ...]:
    flagged = event.chain[0].location
    found = set()
    for call in calls:
        if not _same_backend(call.compiled, event.compiled):
            continue
        if call.once and event.once and call.location.path == flagged.path and call.location.line > flagged.line:
            continue  # module-level code after the region, run once: it comes after
        found.add(call.location)
    return tuple(sorted(found, key=Location.sort_key))
