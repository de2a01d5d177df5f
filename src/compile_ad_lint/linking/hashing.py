"""``hashed_once``: frozen value dataclasses and events that keep their hash once computed."""

from __future__ import annotations

from typing import Any, TypeVar

_T = TypeVar("_T")


#: What value objects keep to save work, left out when they cross to another process: the hash
#: (string hashes differ between processes) and what can be computed again (``_contents``, a
#: wrapper's ``_holders`` and ``_held_modules``, an autocast state's ``_description``).
_NOT_PICKLED = frozenset({"_hash", "_contents", "_holders", "_held_modules", "_description"})


def hashed_once(cls: type[_T]) -> type[_T]:
    """For frozen value dataclasses hashed millions of times per run (memo keys, heap cells, class
    lookups: ``ClassVal`` 2.9 M times on the generated framework), and events (the effects of walk
    summaries, a root's events kept once each): the hash of the fields is
    computed once per object and kept on it. It is not pickled: string hashes differ between
    processes, and values come back from worker processes."""

    def __hash__(self: Any) -> int:
        known = self._hash  # the class's None until the object keeps its own
        if known is None:
            state = self.__dict__
            known = state["_hash"] = hash(tuple(v for k, v in state.items() if not k.startswith("_")))
        return known

    def __getstate__(self: object) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in _NOT_PICKLED}

    cls._hash = None  # type: ignore[attr-defined]  # read as an attribute: faster than the instance dict's get
    cls.__hash__ = __hash__  # type: ignore[method-assign,assignment]
    cls.__getstate__ = __getstate__  # type: ignore[attr-defined]
    return cls
