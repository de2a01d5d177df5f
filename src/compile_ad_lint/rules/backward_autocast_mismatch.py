"""CAL002 backward-autocast-mismatch."""

from __future__ import annotations

from collections.abc import Container, Iterator
from dataclasses import dataclass
from typing import Union

from ..core.findings import Applicability, Condition, Evidence, Finding, Fix, Severity, headline
from ..core.locations import Location, RelatedLocation, StatementSite, unique_related
from ..core.plans import ConfigLiteral, SetConfigAtModuleLevel, WrapInConfigPatch, config_source
from ..facts import NO_AUTOCAST, AutocastState, BackwardThroughCompiled, ConfigState, ConfigWrite, Facts, OutputFacts
from ..knowledge import torch_api as api
from .base import Case, FixAvailability, Rule, contradicts, on_path, path_conditions


@dataclass(frozen=True)
class Mismatch:
    """A compiled output whose backward was traced for another autocast state than the backward's."""

    output: OutputFacts
    #: The autocast state its compiled backward was traced for.
    assumed: AutocastState


#: A ``backward_pass_autocast`` value as the analysis knows it: ``"off"``, ``"same_as_forward"``, or the
#: list-of-kwargs form as ``(device, dtype)`` pairs, dtype without ``torch.`` and the device None when
#: the code does not spell it (``torch.autocast(device_type=dev)``).
MatchingConfig = Union[str, tuple[tuple[Union[str, None], str], ...]]


@dataclass(frozen=True)
class Cal002Evidence(Evidence):
    """What a CAL002 finding rests on, as the interpreter's values: the first mismatched compiled call
    (where, compiled how, under which config and forward autocast), the backward's autocast, and the
    config that would match it.

    Confirm mode runs from these (the compiled call to force, the value to force it to, the probe's
    contexts); the report's facts are rendered from them.
    """

    compiled_call: Location
    compile_site: Location
    backend: str
    config: ConfigState
    forward_autocast: AutocastState
    backward_autocast: AutocastState
    matching_config: MatchingConfig
    #: Autocast-sensitive code in the flagged compiled regions (the numeric effect is likely when any).
    islands: tuple[Location, ...] = ()
    #: The statement and function of the backward call, and of the compiled call (the config flip).
    flagged: StatementSite | None = None
    compiled_call_site: StatementSite | None = None

    def facts(self) -> tuple[tuple[str, str], ...]:
        return tuple(
            sorted(
                {
                    "backend": self.backend,
                    "config": self.config_text(),
                    "forward_autocast": _state_fact(self.forward_autocast),
                    "backward_autocast": _state_fact(self.backward_autocast),
                    "matching_config": self.matching_text(),
                    "call_site": f"{self.compiled_call.path}:{self.compiled_call.line}",
                    "numeric_effect": "likely" if self.islands else "unknown",
                }.items()
            )
        )

    def config_text(self) -> str:
        """The config as written, as a Python literal (``'same_as_forward'``, ``(('cpu', 'bfloat16'),)``)."""
        return repr(self.config.value)

    def matching_text(self) -> str:
        """The matching config as a Python literal; an unknown device shows as ``'?'``."""
        value = self.matching_config
        if isinstance(value, str):
            return repr(value)
        return repr([{"device_type": device or "?", "dtype": f"torch.{dtype}"} for device, dtype in value])


class BackwardAutocastMismatch(Rule):
    code = "CAL002"
    name = "backward-autocast-mismatch"
    severity = Severity.ERROR
    VERSIONED_TABLES = ("in_place",)
    fix_availability = FixAvailability.SOMETIMES
    fix_safety = frozenset({Applicability.SAFE, Applicability.UNSAFE})
    summary = "backward() runs under a different autocast context than the compiled backward was traced for."
    what_it_does = """
Flags a backward (`t.backward()`, `scaler.scale(loss).backward()`, `torch.autograd.backward`,
`torch.autograd.grad`) whose graph goes through the output of a compiled call, when the autocast
context the backward actually runs under differs from the one the compiled backward assumed.

The assumption is `torch._functorch.config.backward_pass_autocast` as in effect at the compiled call
(module-level assignment, `config.patch(...)` as a context manager or decorator, or the default
`"same_as_forward"`), combined with the autocast context at the compiled call (`with` blocks,
`@torch.autocast` decorators, contexts entered in calling functions, nested `enabled=False`). The
finding is reported at the backward call; related locations name the compiled call, the compile site
and where the autocast context and the config come from.

The compiled module is followed through wrappers (`DDP(...)`, `DataParallel`, FSDP, `.module`,
`._orig_mod`), module-preserving calls (`.cuda()`, `.to(...)`, `.train()`, ...), submodules compiled in
place or assigned back, factories returning tuples, dataclass fields and registries, and
`self.forward = torch.compile(self.forward)`. Frameworks that enter autocast or run the backward for
the user are known from a table (`knowledge/frameworks.py`): accelerate's `Accelerator.autocast()`,
`prepare()` and `backward()`; Lightning `Trainer(precision=...).fit(...)` (reported at `fit`) and
Fabric `setup()`/`backward()`; Hugging Face `Trainer.train()` with `TrainingArguments(bf16=...)`.
Outputs computed under `torch.no_grad()`/`inference_mode()`, detached outputs, and frozen modules whose
inputs do not require grad carry no compiled backward.
"""
    why_bad = """
AOTAutograd traces the backward graph once, at the compiled callable's first call, under the autocast
state that `backward_pass_autocast` describes. The real `backward()` does not re-trace: if it runs
under another autocast context, the compiled backward can compute different gradients than eager
would, with no error. The AMP-recommended pattern (forward under autocast, backward outside)
mismatches the default `"same_as_forward"`.

Whether the gradients actually change depends on the region: they do when its backward has ops that
autocast computes differently, such as an `autocast(enabled=False)` fp32 island, explicit
`.float()` casts, or ops autocast runs in float32 (softmax, layer_norm, losses). The finding's
`numeric_effect` fact says `likely` (with the island as a related location) when the compiled region
visibly holds one, `unknown` otherwise; `--confirm` measures it.
"""
    example = """
import torch

model = torch.compile(net)
with torch.autocast("cuda", dtype=torch.bfloat16):
    loss = model(x).float().mean()
loss.backward()  # compiled backward assumed autocast, eager backward runs without it
"""
    use_instead = """
import torch
import torch._functorch.config as functorch_config

model = torch.compile(net)
with functorch_config.patch(backward_pass_autocast="off"):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(x).float().mean()
loss.backward()
"""
    VALID = (
        Case(
            """
import torch
import torch._functorch.config as fc

model = torch.compile(net)
with fc.patch(backward_pass_autocast="off"):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x).sum()
loss.backward()
""",
            note="config matches a backward outside autocast",
        ),
        Case(
            """
import torch

model = torch.compile(net)
with torch.autocast("cpu", dtype=torch.bfloat16):
    loss = model(x).sum()
    loss.backward()
""",
            note="backward inside the same autocast as the forward",
        ),
        Case(
            """
import torch

model = torch.compile(net)
with torch.autocast("cpu", dtype=torch.bfloat16):
    out = model(x)
other = (w * 2).sum()
other.backward()
""",
            note="the backward's tensor does not come from the compiled call",
        ),
        Case(
            """
import torch

model = torch.compile(net, backend="eager")
with torch.autocast("cpu", dtype=torch.bfloat16):
    loss = model(x).sum()
loss.backward()
""",
            note="backend='eager' has an eager backward",
        ),
    )
    INVALID = (
        Case(
            """
import torch

model = torch.compile(net)
with torch.autocast("cuda", dtype=torch.bfloat16):
    loss = model(x).float().mean()
loss.backward()  # expect: CAL002
"""
        ),
        Case(
            """
import torch
from torch._functorch import config

config.backward_pass_autocast = "off"
step = torch.compile(fn)

def train(x):
    out = step(x)
    with torch.amp.autocast("cpu"):
        torch.autograd.grad(out.sum(), [x])  # expect: CAL002
"""
        ),
        Case(
            """
import torch

model = torch.compile(net)
scaler = torch.amp.GradScaler()

@torch.autocast("cuda")
def forward(x):
    return model(x)

def train(x):
    loss = forward(x).mean()
    scaler.scale(loss).backward()  # expect: CAL002
"""
        ),
    )

    def findings(self, facts: Facts, reported_in: Container[str] | None = None) -> Iterator[Finding]:
        eager_backward = facts.safe.eager_backward
        backwards = [(event, facts.outputs(event.origins)) for event in facts.of(BackwardThroughCompiled)]
        config_files = {event.location.path for event in facts.of(ConfigWrite)}
        context = _FixContext(backwards, eager_backward, config_files)
        for event, origins in backwards:
            own = _own_conditions(event)
            mismatched = [
                Mismatch(origin, assumed)
                for origin in origins
                if origin.compiled.backend not in eager_backward
                for assumed in [assumed_backward_autocast(origin)]
                if assumed is not None and assumed.differs_from(event.backward_autocast)
                if not contradicts((*own, *_output_conditions(origin, assumed)))
            ]
            if mismatched:
                yield self.finding(event, mismatched, context)

    def finding(self, event: BackwardThroughCompiled, mismatched: list[Mismatch], context: _FixContext) -> Finding:
        origin, assumed = mismatched[0].output, mismatched[0].assumed
        actual = event.backward_autocast
        fix = suggested_config(origin, actual)
        sites = {m.output.compiled.site for m in mismatched}
        islands = [island for island in event.islands if island.compiled_site in sites]
        # Where the compiled call, the config and the island are: the chain's locations (cells in
        # a notebook), never a line number in the text.
        message = headline(
            f"{event.spelling} runs with {actual.describe()}, but the compiled call traced its backward for "
            f"{assumed.describe()}",
            f"Backward runs with {actual.describe()}, but the compiled call traced it for {assumed.describe()}",
        )
        if islands:
            numeric = f"Numeric effect likely: the compiled region holds {islands[0].description}."
        else:
            numeric = "Numeric effect unknown: no autocast-sensitive op is visible in the compiled region."
        details = (
            f"The compiled backward was traced under {origin.config.describe()} with the forward under "
            f"{origin.forward_autocast.describe()}, so it can compute different gradients than eager.",
            numeric,
            f"To restore eager semantics, {fix}.",
            *self.only_on_details(m.output.compiled for m in mismatched),
        )
        related: list[RelatedLocation] = []
        for mismatch in mismatched:
            output = mismatch.output
            related.append(
                RelatedLocation(
                    output.call_site,
                    f"compiled call ran with {output.forward_autocast.describe()}; backward traced for "
                    f"{mismatch.assumed.describe()}",
                )
            )
            related.append(
                RelatedLocation(
                    output.compiled.site,
                    f"compiled here ({output.compiled.spelling}, {output.compiled.backend_text})",
                )
            )
            if output.forward_autocast.source is not None:
                related.append(
                    RelatedLocation(
                        output.forward_autocast.source, f"forward autocast context: {output.forward_autocast.origin}"
                    )
                )
            if output.config.source is not None:
                related.append(
                    RelatedLocation(
                        output.config.source, f"{output.config.describe()} set here ({output.config.origin})"
                    )
                )
        if actual.source is not None:
            related.append(RelatedLocation(actual.source, f"backward autocast context: {actual.origin}"))
        for island in islands:
            related.append(
                RelatedLocation(
                    island.location, f"autocast-sensitive code in the compiled region: {island.description}"
                )
            )
        fixes = context.fixes(event, [m.output for m in mismatched])
        conditions = path_conditions(
            _own_conditions(event), [_output_conditions(m.output, m.assumed) for m in mismatched]
        )
        finding = Finding(
            code=self.code,
            message=message,
            details=details,
            severity=self.severity,
            location=event.location,
            related=unique_related(related),
            fix=fixes[0] if fixes else None,
            alternative_fixes=tuple(fixes[1:]),
            evidence=Cal002Evidence(
                origin.call_site,
                origin.compiled.site,
                origin.compiled.backend,
                origin.config,
                origin.forward_autocast,
                actual,
                matching_config(origin, actual),
                tuple(island.location for island in islands),
                event.site,
                origin.site,
            ),
        )
        shorter = (
            f"backward runs with {actual.describe()}; the compiled backward was traced for {assumed.describe()}",
            f"backward under {actual.describe()}, compiled backward traced for {assumed.describe()}",
            "the backward and the compiled backward disagree on autocast",
        )
        return on_path(finding, conditions, shorter)


def _own_conditions(event: BackwardThroughCompiled) -> tuple[Condition, ...]:
    """Where the backward runs, and what makes its autocast the one it runs under."""
    actual = event.backward_autocast
    return (*event.conditions, *_launched(actual), *_switched(actual))


def _output_conditions(output: OutputFacts, assumed: AutocastState) -> frozenset[Condition]:
    """Where a compiled output is made, and what makes the autocast its backward was traced for."""
    return (
        output.path_conditions()
        | frozenset(_launched(output.forward_autocast))
        | frozenset(_switched(assumed) if assumed is output.forward_autocast else ())
    )


def _launched(state: AutocastState) -> tuple[Condition, ...]:
    """An autocast a launcher may turn on (``accelerate launch --mixed_precision``): the finding
    holds when the launch sets its environment variable."""
    return (Condition(state.launched_by, True, None),) if state.active and state.launched_by else ()


def _switched(state: AutocastState) -> tuple[Condition, ...]:
    """An autocast on only when a flag is (``torch.autocast(..., enabled=args.amp)``), or made on
    an arm of a switch and entered after it (``precision_context``): the finding, which took it as
    on, holds when the flag is set and on that arm."""
    if not state.active:
        return ()
    return ((Condition(state.condition, True, None),) if state.condition else ()) + state.switches


def assumed_backward_autocast(origin: OutputFacts) -> AutocastState | None:
    """The autocast state the compiled backward was traced for (None when the config is unknown)."""
    value = origin.config.value
    if value == "same_as_forward":
        return origin.forward_autocast
    if value == "off":
        return NO_AUTOCAST
    if isinstance(value, tuple) and value:
        device, dtype = value[0]
        return AutocastState(True, device, dtype)
    return None


def matching_config(origin: OutputFacts, actual: AutocastState) -> MatchingConfig:
    """The ``backward_pass_autocast`` value that matches the backward's real context (the device None
    when it is not known statically, e.g. ``torch.autocast(device_type=dev)``)."""
    if not actual.active:
        return "off"
    if not origin.forward_autocast.differs_from(actual) and origin.forward_autocast.active:
        return "same_as_forward"
    # An unknown device gets the dtype autocast defaults to where the device is not listed.
    dtype = actual.dtype or (api.AUTOCAST_DEFAULT_DTYPE.get(actual.device, "float16") if actual.device else "float16")
    return ((actual.device, dtype),)


def suggested_config(origin: OutputFacts, actual: AutocastState) -> str:
    value = matching_config(origin, actual)
    if isinstance(value, tuple):
        target, dtype = value[0]
        device = "<the backward's autocast device>" if target is None else f'"{target}"'
        literal = f'[{{"device_type": {device}, "dtype": torch.{dtype}}}]'
    else:
        literal = f'"{value}"'
    return f"wrap the compiled call in torch._functorch.config.patch(backward_pass_autocast={literal})"


class _FixContext:
    """What the fixes of one run's CAL002 findings must respect: every compiled call's backwards.

    A compiled call traces one backward, for one config: a fix may set the config at a call only
    when every backward through it (flagged or not) needs that same value, and a ``with`` block
    must never take in another compiled call whose backwards need something else.
    """

    def __init__(
        self,
        backwards: list[tuple[BackwardThroughCompiled, list[OutputFacts]]],
        eager_backward: frozenset[str],
        config_files: set[str],
    ) -> None:
        #: compiled call site -> the values its backwards need (None: not known for certain).
        self.needs: dict[Location, set[ConfigLiteral | None]] = {}
        #: compiled call site -> whether its config is the default (nothing sets it).
        self.default_config: dict[Location, bool] = {}
        for event, origins in backwards:
            for origin in origins:
                if origin.compiled.backend in eager_backward:
                    continue
                known = assumed_backward_autocast(origin) is not None
                self.needs.setdefault(origin.call_site, set()).add(
                    certain_matching_config(origin, event.backward_autocast) if known else None
                )
                default = origin.config.source is None and self.default_config.get(origin.call_site, True)
                self.default_config[origin.call_site] = default
        self.config_files = config_files

    def fixes(self, event: BackwardThroughCompiled, outputs: list[OutputFacts]) -> list[Fix]:
        """The wrap at the compiled calls (safe), then setting the config at module level (unsafe)."""
        values = {certain_matching_config(output, event.backward_autocast) for output in outputs}
        if len(values) != 1:
            return []
        value = values.pop()
        calls = tuple(sorted({output.call_site for output in outputs}))
        if value is None or any(self.needs.get(call) != {value} for call in calls):
            return []  # unknown, or another backward through one of these calls needs another config
        avoid = tuple(sorted(site for site in self.needs if site not in calls and site.path in {c.path for c in calls}))
        literal = config_source(value)
        where = ", ".join(
            f"{call.path}:{call.line}" if call.path != event.location.path else f"line {call.line}" for call in calls
        )
        call_word = "call" if len(calls) == 1 else "calls"
        fixes = [
            Fix(
                f"Wrap the compiled {call_word} at {where} in `with torch._functorch.config.patch(backward_pass_autocast={literal}):`",
                Applicability.SAFE,
                plan=WrapInConfigPatch(calls, value, avoid),
            )
        ]
        paths = {call.path for call in calls}
        # Module level only in the backward's own module: the config a module sets at import is what
        # its own functions' compiled calls trace under (set in an imported module it would depend
        # on import order, and the analysis could not show it took effect).
        if paths == {event.location.path}:
            path = paths.pop()
            in_module = [site for site in self.needs if site.path == path]
            if path not in self.config_files and all(
                self.needs[site] == {value} and self.default_config.get(site, False) for site in in_module
            ):
                fixes.append(
                    Fix(
                        f"Set `torch._functorch.config.backward_pass_autocast = {literal}` once at the top of {path} "
                        "(unsafe: it applies to every compiled call traced after the import, in every module)",
                        Applicability.UNSAFE,
                        plan=SetConfigAtModuleLevel(path, value),
                    )
                )
        return fixes


def certain_matching_config(origin: OutputFacts, actual: AutocastState) -> ConfigLiteral | None:
    """``matching_config`` when it is certain from the code, as a fix writes it; else None.

    Not certain: an autocast that depends on a flag (``enabled=use_amp``), or a device or dtype the
    code does not spell as a literal.
    """
    forward = origin.forward_autocast
    if actual.condition is not None or (actual.active and (actual.device is None or actual.dtype is None)):
        return None
    value = matching_config(origin, actual)
    if value == "off":
        return "off"
    if value == "same_as_forward":
        return (
            "same_as_forward"
            if forward.condition is None and forward.device is not None and forward.dtype is not None
            else None
        )
    if isinstance(value, str):
        return None
    pairs = tuple((target, dtype) for target, dtype in value if target is not None)
    return pairs if len(pairs) == len(value) and all(dtype.isidentifier() for _, dtype in pairs) else None


def _state_fact(state: AutocastState) -> str:
    if not state.active:
        return "off"
    return f"{state.device or '?'}/{state.dtype or '?'}"
