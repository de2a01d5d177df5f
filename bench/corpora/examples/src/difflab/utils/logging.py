"""The library's loggers: one per module, under the "difflab" root, quiet by default."""

import logging
import os
import threading

_lock = threading.Lock()
_default_handler = None
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def _root():
    return logging.getLogger("difflab")


def _configure_root():
    global _default_handler
    with _lock:
        if _default_handler is not None:
            return
        _default_handler = logging.StreamHandler()
        root = _root()
        root.addHandler(_default_handler)
        root.setLevel(_LEVELS.get(os.environ.get("DIFFLAB_VERBOSITY", "warning"), logging.WARNING))
        root.propagate = False


def get_logger(name=None):
    _configure_root()
    return logging.getLogger(name or "difflab")


def set_verbosity(level):
    _configure_root()
    _root().setLevel(level)


def set_verbosity_info():
    set_verbosity(logging.INFO)


def set_verbosity_error():
    set_verbosity(logging.ERROR)
