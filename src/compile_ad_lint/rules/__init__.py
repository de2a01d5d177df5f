"""The rule registry: every rule class, by code."""

from __future__ import annotations

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

__all__ = ["ALL_RULES", "RULES_BY_CODE", "Case", "FixAvailability", "Rule"]
