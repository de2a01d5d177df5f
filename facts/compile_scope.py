"""What a compile spelling compiles: does calling the result run a Dynamo-compiled graph?

Run: python facts/compile_scope.py [CASE ...] [--jobs N] [--json] [--record] [--check]
(needs torch; each case in its own process)

A counting backend stands in for inductor: ``compiled`` means Dynamo handed at least one graph to
the backend when the result was called, ``not compiled`` means the call ran eagerly. The analysis
reads these rows to decide whether ``module.compile()`` in place makes a module's calls compiled
(torch 2.13 skips the frames of torch.nn's own modules; 2.14 no longer does).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import main


def _counting():
    graphs = []

    def backend(graph_module, example_inputs):
        graphs.append(graph_module)
        return graph_module.forward

    return backend, graphs


def _project_module():
    import torch

    class Head(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.proj = torch.nn.Linear(3, 3)

        def forward(self, x):
            return self.proj(x).tanh()

    return Head()


def _builtin(kind: str):
    import torch

    if kind == "linear":
        return torch.nn.Linear(3, 3)
    if kind == "sequential":
        return torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Tanh())
    return _project_module()


def _in_place(kind: str) -> str:
    import torch

    backend, graphs = _counting()
    module = _builtin(kind)
    module.compile(backend=backend)
    module(torch.randn(2, 3))
    return "compiled" if graphs else "not compiled"


def _wrapped(kind: str) -> str:
    import torch

    backend, graphs = _counting()
    compiled = torch.compile(_builtin(kind), backend=backend)
    compiled(torch.randn(2, 3))
    return "compiled" if graphs else "not compiled"


def _forward_attribute(kind: str, in_place: bool) -> str:
    """``compiled.forward(x)`` instead of ``compiled(x)``."""
    import torch

    backend, graphs = _counting()
    module = _builtin(kind)
    if in_place:
        module.compile(backend=backend)
        module.forward(torch.randn(2, 3))
    else:
        torch.compile(module, backend=backend).forward(torch.randn(2, 3))
    return "compiled" if graphs else "not compiled"


def _class_decorated(option: str) -> str:
    """``@torch.compile`` (or ``@torch.compile(backend=...)``) on an ``nn.Module`` class, then an instance called."""
    import torch

    backend, graphs = _counting()
    decorate = torch.compile(backend=backend) if option == "with arguments" else None

    class Head(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.proj = torch.nn.Linear(3, 3)

        def forward(self, x):
            return self.proj(x).tanh()

    if decorate is not None:
        Head = decorate(Head)
    else:
        # ``@torch.compile`` bare takes inductor; the counting backend stands in through the same
        # path (``torch.compile(Head, backend=...)`` is what the decorator line runs).
        Head = torch.compile(Head, backend=backend)
    Head()(torch.randn(2, 3))
    return "compiled" if graphs else "not compiled"


CASES = {
    "built-in nn.Linear .compile() in place": lambda: _in_place("linear"),
    "nn.Sequential of built-ins .compile() in place": lambda: _in_place("sequential"),
    "project module .compile() in place": lambda: _in_place("project"),
    "torch.compile(built-in nn.Linear)": lambda: _wrapped("linear"),
    "torch.compile(project module)": lambda: _wrapped("project"),
    "torch.compile(project module).forward(x)": lambda: _forward_attribute("project", False),
    "torch.compile(built-in nn.Linear).forward(x)": lambda: _forward_attribute("linear", False),
    "project module .compile() in place, then .forward(x)": lambda: _forward_attribute("project", True),
    "@torch.compile on a project module class, instance called": lambda: _class_decorated("bare"),
    "@torch.compile(backend=...) on a project module class, instance called": lambda: _class_decorated(
        "with arguments"
    ),
}

if __name__ == "__main__":
    sys.exit(main(__file__, CASES))
