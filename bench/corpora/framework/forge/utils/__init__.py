from forge.utils.logging import logger
from forge.utils.seed import set_seed
from forge.utils.timers import Timer

__all__ = ["Timer", "logger", "set_seed"]
