"""compile-ad-lint: find the autograd decisions torch.compile bakes in silently."""

from ._version import __version__
from .api import Analyzer, Report, Stats, check
from .config import load_config
from .core.findings import ConfirmResult, Finding, Severity, Verdict
from .core.locations import Location, RelatedLocation
from .core.settings import Config, ConfigError

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
