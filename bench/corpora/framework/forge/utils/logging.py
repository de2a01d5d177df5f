"""forge: the framework logger.

Module utils/logging.py.
"""

import logging
import os

logger = logging.getLogger("forge")


def init_logger(rank=None):
    rank = int(os.environ.get("RANK", "0")) if rank is None else rank
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter(f"[rank{rank}] %(asctime)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO if rank == 0 else logging.WARNING)
    return logger
