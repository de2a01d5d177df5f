"""compile-ad-lint: find the autograd decisions torch.compile bakes in silently."""

from ._version import __version__
from .api import Analyzer, Report, Stats, check
from .config import Config, ConfigError, load_config
from .findings import ConfirmResult, Finding, Location, RelatedLocation, Severity, Verdict

__all__ = [
    "Analyzer",
    "Config",
    "ConfigError",
    "ConfirmResult",
    "Finding",
    "Location",
    "RelatedLocation",
    "Report",
    "Severity",
    "Stats",
    "Verdict",
    "__version__",
    "check",
    "load_config",
]
