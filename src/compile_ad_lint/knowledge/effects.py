"""The behaviours a called name can have (``knowledge.calls`` indexes the rows that pick one).

Each has one handler, registered by a behaviour module of ``linking/effects/``; a table row names
its effect, so a new spelling of a known behaviour is a row and only a new behaviour needs code.
"""

from __future__ import annotations

import enum


class Effect(enum.Enum):
    # ``torch_api.TORCH_CALLS`` (``torch_api.CALL_EFFECTS`` says what each does)
    COMPILE = "compile"
    COMPILER = "compiler"
    PARTIAL = "partial"
    DISABLE = "disable"
    DUAL_LEVEL = "dual_level"
    MAKE_DUAL = "make_dual"
    UNPACK_DUAL = "unpack_dual"
    NULL_CONTEXT = "null_context"
    EXIT_STACK = "exit_stack"
    COLLECTION = "collection"
    SEQUENTIAL = "sequential"
    GETATTR = "getattr"
    SETATTR = "setattr"
    FUNCTIONAL_CALL = "functional_call"
    CALL_THROUGH = "call_through"
    # the other tables of ``torch_api``, by the table
    AUTOCAST = "autocast"  # AUTOCAST_CONSTRUCTORS
    CONFIG_PATCH = "config_patch"  # CONFIG_PATCHES
    BACKWARD = "backward"  # BACKWARD_FUNCTIONS
    AUTOGRAD_FUNCTIONAL = "autograd_functional"  # AUTOGRAD_FUNCTIONAL
    WRAPPER = "wrapper"  # MODULE_WRAPPERS
    SAME_MODULE = "same_module"  # SAME_MODULE_FUNCTIONS
    GRAD_MODE = "grad_mode"  # GRAD_MODES
    DATACLASS = "dataclass"  # DATACLASS_DECORATORS
    EMPTY_CONTAINER = "empty_container"  # EMPTY_CONTAINER_FACTORIES
    FORWARD_MODE = "forward_mode"  # FORWARD_MODE_FUNCTIONS
    # ``frameworks.FRAMEWORK_CLASSES``
    FRAMEWORK_CLASS = "framework_class"
    # ``switches``: settings the user sets at launch (``linking/analyses/switches.py``)
    SETTINGS = "settings"  # SETTINGS_CALLS
    FIELD_DEFAULT = "field_default"  # FIELD_DEFAULTS
