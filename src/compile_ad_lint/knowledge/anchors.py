"""Where the analysis starts: text that marks a block of code as worth analyzing, collected from the
rows that give it a meaning (a forward-AD region, a backward, a config write, a second-order
function, a framework call that runs the backward for the user).

The outline (``summary/outline.py``) anchors the blocks that match; discovery (``project.py``)
skips the files that contain none of the words first.
"""

from __future__ import annotations

from . import frameworks as fw
from . import torch_api as api
from .spelling import Anchor, ImportAnchor


def _module_anchors(qualified_names: list[str]) -> tuple[Anchor, ...]:
    """``autograd.functional`` for the module the names are in (its import is ``_imported``'s)."""
    modules = {name.rsplit(".", 1)[0] for name in qualified_names}
    found = []
    for module in sorted(modules):
        parent, last = module.rsplit(".", 2)[-2:]
        found.append(Anchor((parent, ".", last), "grad"))
    return tuple(found)


def _imported() -> ImportAnchor:
    """``from torch.autograd import backward as run_backward``, ``from torch.autograd import (Function,
    grad)``, ``from torch.autograd import functional``: the backward functions and the module of the
    second-order functions, imported from their module."""
    (module,) = {name.rsplit(".", 2)[-2] for name in api.BACKWARD_FUNCTIONS}
    names = [name.rsplit(".", 1)[-1] for name in api.BACKWARD_FUNCTIONS]
    names += sorted({name.rsplit(".", 2)[-2] for name in api.AUTOGRAD_FUNCTIONAL if name.rsplit(".", 3)[-3] == module})
    return ImportAnchor(module, tuple(names), "grad")


ANCHORS: tuple[Anchor | ImportAnchor, ...] = (
    *(anchor for row in api.TORCH_CALLS for anchor in row.anchors),
    *api.TENSOR_BACKWARD.anchors,
    *(anchor for row in api.BACKWARD_FUNCTIONS.values() for anchor in row.anchors),
    Anchor((api.CONFIG_KEY,), "backward"),
    *_module_anchors(list(api.AUTOGRAD_FUNCTIONAL)),
    _imported(),
    *(anchor for method in fw.FRAMEWORK_METHODS for anchor in method.anchors),
)
#: Every anchor contains one of these words (``in`` finds them far faster than a regex).
ANCHOR_WORDS: tuple[str, ...] = tuple(dict.fromkeys(anchor.word for anchor in ANCHORS))
