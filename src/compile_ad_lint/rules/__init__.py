"""The rule registry: every rule class, by code."""

from __future__ import annotations

from ..findings import Applicability
from .backward_autocast_mismatch import BackwardAutocastMismatch
from .base import Case, FixAvailability, Rule
from .compiled_callable_in_dual_level import CompiledCallableInDualLevel
from .compiled_callable_runs_eagerly_under_forward_ad import CompiledCallableRunsEagerlyUnderForwardAd
from .double_backward_through_compiled import DoubleBackwardThroughCompiled
from .invalid_backward_pass_autocast import InvalidBackwardPassAutocast
from .unparsable_file import UnparsableFile
from .unused_compiled_output_zero_grad import UnusedCompiledOutputZeroGrad
from .unused_noqa import UnusedNoqa

ALL_RULES: tuple[type[Rule], ...] = (
    CompiledCallableInDualLevel,
    BackwardAutocastMismatch,
    InvalidBackwardPassAutocast,
    DoubleBackwardThroughCompiled,
    UnusedCompiledOutputZeroGrad,
    CompiledCallableRunsEagerlyUnderForwardAd,
    UnparsableFile,
    UnusedNoqa,
)
RULES_BY_CODE: dict[str, type[Rule]] = {rule.code: rule for rule in ALL_RULES}

# CAL001's module is being rewritten (its messages per torch version): its fix availability is
# declared here until that module declares it like the others (tests/test_cli_fixable.py checks every
# rule's against the fixtures' fixes).
CompiledCallableInDualLevel.fix_availability = FixAvailability.SOMETIMES
CompiledCallableInDualLevel.fix_safety = frozenset({Applicability.UNSAFE})

__all__ = ["ALL_RULES", "RULES_BY_CODE", "Case", "FixAvailability", "Rule"]
