"""CAL003 invalid-backward-pass-autocast."""

from __future__ import annotations

import difflib
from collections.abc import Container, Iterator
from dataclasses import dataclass

from ..core.findings import HEADLINE_LIMIT, Applicability, Evidence, Finding, Fix, Severity, shortened
from ..core.locations import Location
from ..core.plans import ReplaceConfigValue, string_literal
from ..facts import ConfigWrite, DictLiteral, Facts, ListLiteral, LiteralValue, Symbol, config_value
from ..knowledge import torch_api as api
from .base import Case, FixAvailability, Rule


@dataclass(frozen=True)
class Cal003Evidence(Evidence):
    """What a CAL003 finding rests on: the literal written to ``backward_pass_autocast``, where and how
    (an assignment, ``config.patch(...)``), as the summaries hold it."""

    location: Location
    how: str
    value: LiteralValue

    def facts(self) -> tuple[tuple[str, str], ...]:
        return (("value", _show(self.value)),)


class InvalidBackwardPassAutocast(Rule):
    code = "CAL003"
    name = "invalid-backward-pass-autocast"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SOMETIMES
    fix_safety = frozenset({Applicability.SAFE, Applicability.UNSAFE})
    summary = "backward_pass_autocast is set to a value torch rejects when it traces the compiled backward."
    what_it_does = """
Flags `torch._functorch.config.backward_pass_autocast` set (by assignment or `config.patch(...)`, in
keyword or dict form, through any import alias) to a literal other than `"same_as_forward"`, `"off"`
or a list of autocast keyword dicts: a bare dict, a misspelled string, a list of something else.
"""
    why_bad = """
The value is only checked when the joint forward/backward graph is traced, at the compiled callable's
first call: training starts, then fails with an `AssertionError` (which inductor raises as
`BackendCompilerFailed`) far from the line that set it.
"""
    example = """
import torch
import torch._functorch.config as fc

fc.backward_pass_autocast = {"device_type": "cuda", "dtype": torch.bfloat16}
"""
    use_instead = """
import torch
import torch._functorch.config as fc

fc.backward_pass_autocast = [{"device_type": "cuda", "dtype": torch.bfloat16}]
"""
    VALID = (
        Case('import torch._functorch.config as fc\nfc.backward_pass_autocast = "off"\n'),
        Case(
            "import torch\nfrom torch._functorch import config\n\n"
            'with config.patch(backward_pass_autocast=[{"device_type": "cpu", "dtype": torch.bfloat16}]):\n    pass\n'
        ),
        Case(
            "import torch._functorch.config as fc\n\ndef f(mode):\n    fc.backward_pass_autocast = mode\n",
            note="not a literal",
        ),
        Case('config = {}\nconfig["backward_pass_autocast"] = "of"\n', note="an unrelated dict"),
    )
    INVALID = (
        Case('import torch._functorch.config as fc\nfc.backward_pass_autocast = "of"  # expect: CAL003\n'),
        Case(
            "import torch\nimport torch._functorch.config\n\n"
            '@torch._functorch.config.patch({"backward_pass_autocast": {"device_type": "cuda"}})  # expect: CAL003\n'
            "def train():\n    pass\n"
        ),
        Case(
            "from torch._functorch import config as functorch_config\n\n"
            'with functorch_config.patch(backward_pass_autocast="same-as-forward"):  # expect: CAL003\n    pass\n'
        ),
    )

    def findings(self, facts: Facts, reported_in: Container[str] | None = None) -> Iterator[Finding]:
        for event in facts.of(ConfigWrite):
            if event.is_literal and config_value(event.value) is None:
                shown, hint = _show(event.value), _hint(event.value)
                # The value is the user's literal: cut it to keep the headline readable at a glance.
                guess = f"; did you mean {hint.removeprefix('Did you mean ')}" if hint.startswith("Did you") else ""
                room = HEADLINE_LIMIT - len("backward_pass_autocast =  is not a value torch accepts") - len(guess)
                yield Finding(
                    code=self.code,
                    message=f"backward_pass_autocast = {shortened(shown, room)} is not a value torch accepts{guess}",
                    details=(
                        f'It is set to {shown} via {event.how}; torch accepts only "same_as_forward", "off" or a '
                        "list of autocast kwargs dicts and fails with an AssertionError (BackendCompilerFailed) when the "
                        "compiled backward is traced.",
                        *([] if guess else [hint]),
                    ),
                    severity=self.severity,
                    location=event.location,
                    evidence=Cal003Evidence(event.location, event.how, event.value),
                    fix=_fix(event),
                )


def _show(value: object) -> str:
    """The literal as source code (``{"device_type": "cuda", "dtype": torch.float16}``)."""
    if isinstance(value, Symbol):
        return value.name
    if isinstance(value, ListLiteral):
        return "[" + ", ".join(_show(v) for v in value.items) + "]"
    if isinstance(value, DictLiteral):
        return "{" + ", ".join(f"{_show(k)}: {_show(v)}" for k, v in value.items) + "}"
    if isinstance(value, tuple):
        return "(" + ", ".join(_show(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, str):
        return _string(value)
    if value is None or isinstance(value, (bool, int, float, complex, bytes)):
        return repr(value)
    return "..."  # not a literal the summaries produce; never show an internal object


_string = string_literal


#: The keywords of ``torch.amp.autocast``: a dict with only these (and a device) means one autocast.
_AUTOCAST_KWARGS = frozenset({"device_type", "dtype", "enabled", "cache_enabled"})


def _fix(event: ConfigWrite) -> Fix | None:
    """A dict of autocast kwargs (or a tuple of them) becomes a list: the meaning is certain, safe.
    A misspelled string becomes the nearest valid one: a guess at the meaning, unsafe."""
    value = event.value
    dicts = value if isinstance(value, tuple) and value else (value,)
    if all(isinstance(item, DictLiteral) and _autocast_kwargs(item) for item in dicts):
        shown = "dict" if isinstance(value, DictLiteral) else "tuple of dicts"
        return Fix(
            f"Make the {shown} a list: {_show(list_of(dicts))}",
            Applicability.SAFE,
            plan=ReplaceConfigValue(event.location),
        )
    if isinstance(value, str):
        close = difflib.get_close_matches(value, api.VALID_CONFIG_STRINGS, n=1, cutoff=0.5)
        if close:
            return Fix(
                f"Replace {_show(value)} with {string_literal(close[0])} (unsafe: a guess at what was meant)",
                Applicability.UNSAFE,
                plan=ReplaceConfigValue(event.location, close[0]),
            )
    return None


def list_of(items: tuple[LiteralValue, ...]) -> ListLiteral:
    return ListLiteral(tuple(items))


def _autocast_kwargs(value: DictLiteral) -> bool:
    keys = [key for key, _ in value.items]
    return (
        all(isinstance(key, str) for key in keys)
        and "device_type" in keys
        and set(keys) <= _AUTOCAST_KWARGS
        and len(set(keys)) == len(keys)
    )


def _hint(value: object) -> str:
    if isinstance(value, DictLiteral):
        return "Wrap the dict in a list: [{...}]."
    if isinstance(value, str):
        close = difflib.get_close_matches(value, api.VALID_CONFIG_STRINGS, n=1, cutoff=0.5)
        if close:
            return f'Did you mean "{close[0]}"?'
    return 'Use "same_as_forward", "off" or [{"device_type": ..., "dtype": ...}].'
