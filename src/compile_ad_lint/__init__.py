"""compile-ad-lint: find the autograd decisions torch.compile bakes in silently."""

__version__ = "0.1.0"

from .api import Analyzer, Report, Stats, check  # noqa: E402
from .config import Config, ConfigError, load_config  # noqa: E402
from .findings import ConfirmResult, Finding, Location, RelatedLocation, Severity, Verdict  # noqa: E402

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
