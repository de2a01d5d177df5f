"""Forward-mode AD through compiled callables (CAL001): what each spelling and call order gives.

Run: python facts/forward_ad.py [CASE ...] [--jobs N] [--json] [--record] [--check]
(needs torch; each case runs in its own process and compiles once or twice: a few minutes on 2 CPU cores)

Each case calls a compiled callable inside ``forward_ad.dual_level()`` with inputs made by
``make_dual`` and compares the output's tangent with eager. ``first call dual`` means the compiled
callable had never run before the dual call; ``plain first`` means it had run once with plain
inputs (a training step, a warm-up) before. Outcomes: ``tangent correct``, ``tangent None``,
``tangent wrong``, ``raises <Exception>``; jacobians: ``jacobian correct`` / ``jacobian all-zero``
/ ``jacobian wrong``. torch 2.14 made Dynamo graph-break on a dual input while tracing, so the
outcome of many cases depends on the version and on the call order.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import main


def _torch():
    import torch
    import torch._functorch.config

    torch.manual_seed(0)
    return torch


def _f(a):
    return (a.sin() * a).cos()


def _tangent(compiled, original, x=None, t=None, runs=1) -> str:
    torch = _torch()
    import torch.autograd.forward_ad as fwAD

    x = torch.randn(3) if x is None else x
    t = torch.randn(3) if t is None else t
    with fwAD.dual_level():
        want = fwAD.unpack_dual(original(fwAD.make_dual(x, t))).tangent
    got = None
    for _ in range(runs):
        with fwAD.dual_level():
            got = fwAD.unpack_dual(compiled(fwAD.make_dual(x, t))).tangent
    if got is None:
        return "tangent None"
    return "tangent correct" if torch.allclose(got, want, atol=1e-5) else "tangent wrong"


def _plain_first(compiled, original, inside_region=False) -> str:
    torch = _torch()
    import torch.autograd.forward_ad as fwAD

    if inside_region:
        with fwAD.dual_level():
            compiled(torch.randn(3))
    else:
        compiled(torch.randn(3))  # traced with plain inputs (a training step, a warm-up)
    return _tangent(compiled, original)


def _module(kind: str):
    torch = _torch()

    class Head(torch.nn.Module):  # a project-defined module with parameters
        def __init__(self) -> None:
            super().__init__()
            self.proj = torch.nn.Linear(3, 3)

        def forward(self, x):
            return self.proj(x).tanh()

    if kind == "params":
        return torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Tanh())
    if kind == "parameterless":
        return torch.nn.Tanh()
    if kind == "project":
        return Head()
    if kind == "builtin":
        return torch.nn.Linear(3, 3)
    raise ValueError(kind)


def _compiled(**kwargs):
    return _torch().compile(_f, **kwargs)


def _in_place(kind: str, plain_first: bool) -> str:
    module = _module(kind)
    reference = _module(kind)
    reference.load_state_dict(module.state_dict())
    module.compile()
    return _plain_first(module, reference) if plain_first else _tangent(module, reference)


def _wrapped_module(kind: str, plain_first: bool, **kwargs) -> str:
    torch = _torch()
    module = _module(kind)
    compiled = torch.compile(module, **kwargs)
    return _plain_first(compiled, module) if plain_first else _tangent(compiled, module)


def _requires_grad(plain_first: bool, **kwargs) -> str:
    torch = _torch()
    compiled = torch.compile(_f, **kwargs)
    x = torch.randn(3, requires_grad=True)
    if plain_first:
        compiled(torch.randn(3, requires_grad=True))
    return _tangent(compiled, _f, x=x)


def _dual_plain_dual() -> str:
    """The first call is dual (graph break on 2.14+), then a plain call, then dual again."""
    torch = _torch()
    compiled = torch.compile(_f)
    first = _tangent(compiled, _f)
    compiled(torch.randn(3))
    return f"first {first}; after a plain call {_tangent(compiled, _f)}"


def _two_wrappers() -> str:
    """Two torch.compile wrappers of one function: the plain call goes through one, the dual through the other."""
    torch = _torch()
    a, b = torch.compile(_f), torch.compile(_f)
    a(torch.randn(3))
    return _tangent(b, _f)


def _two_instances(kind: str) -> str:
    """Two instances of one module class, each compiled: the plain call goes through one, the dual through the other."""
    torch = _torch()
    first, second = _module(kind), _module(kind)
    compiled_first, compiled_second = torch.compile(first), torch.compile(second)
    compiled_first(torch.randn(3))
    return _tangent(compiled_second, second)


def _dynamo_optimize(plain_first: bool) -> str:
    torch = _torch()
    compiled = torch._dynamo.optimize("inductor")(_f)
    return _plain_first(compiled, _f) if plain_first else _tangent(compiled, _f)


def _disable_plain_first() -> str:
    torch = _torch()
    return _plain_first(torch.compiler.disable(_f), _f)


def _func_jvp(plain_first: bool) -> str:
    torch = _torch()
    compiled = torch.compile(_f)
    x, t = torch.randn(3), torch.randn(3)
    if plain_first:
        compiled(torch.randn(3))
    got = torch.func.jvp(compiled, (x,), (t,))[1]
    want = torch.func.jvp(_f, (x,), (t,))[1]
    return "tangent correct" if torch.allclose(got, want, atol=1e-5) else "tangent wrong"


def _field(a):
    return torch_tanh(a) * a.sum()


def torch_tanh(a):
    return a.tanh()


def _jacobian(function, size: int, plain_first: bool) -> str:
    torch = _torch()
    compiled = torch.compile(function)
    x = torch.randn(size)
    if plain_first:
        compiled(torch.randn(size))
    got = torch.autograd.functional.jacobian(compiled, x, strategy="forward-mode", vectorize=True)
    want = torch.autograd.functional.jacobian(function, x)
    if torch.allclose(got, want, atol=1e-5):
        return "jacobian correct"
    return "jacobian all-zero" if bool((got == 0).all()) else "jacobian wrong"


def _sin_cube(a):
    return (a * a * a).sin()


CASES = {
    # -- a compiled function --------------------------------------------------------------------
    "function, first call dual": lambda: _tangent(_compiled(), _f),
    "function, first call dual, called twice": lambda: _tangent(_compiled(), _f, runs=2),
    "function, first call dual, fullgraph=True": lambda: _tangent(_compiled(fullgraph=True), _f),
    "function, plain first": lambda: _plain_first(_compiled(), _f),
    "function, plain first inside dual_level": lambda: _plain_first(_compiled(), _f, inside_region=True),
    "function, plain first, fullgraph=True": lambda: _plain_first(_compiled(fullgraph=True), _f),
    "function, dual then plain then dual": _dual_plain_dual,
    "function, plain through another torch.compile wrapper first": _two_wrappers,
    "function, input requires grad, first call dual": lambda: _requires_grad(False),
    "function, input requires grad, plain first": lambda: _requires_grad(True),
    "function, input requires grad, first call dual, fullgraph=True": lambda: _requires_grad(False, fullgraph=True),
    "function, mode='max-autotune-no-cudagraphs', first call dual": lambda: _tangent(
        _compiled(mode="max-autotune-no-cudagraphs"), _f
    ),
    "torch._dynamo.optimize('inductor'), first call dual": lambda: _dynamo_optimize(False),
    "torch._dynamo.optimize('inductor'), plain first": lambda: _dynamo_optimize(True),
    # -- backends and transforms that keep tangents -----------------------------------------------
    "backend='eager', plain first": lambda: _plain_first(_compiled(backend="eager"), _f),
    "backend='aot_eager', first call dual": lambda: _tangent(_compiled(backend="aot_eager"), _f),
    "backend='aot_eager', plain first": lambda: _plain_first(_compiled(backend="aot_eager"), _f),
    "torch.compiler.disable, plain first": _disable_plain_first,
    "torch.func.jvp over the compiled function, first call": lambda: _func_jvp(False),
    "torch.func.jvp over the compiled function, plain first": lambda: _func_jvp(True),
    # -- modules --------------------------------------------------------------------------------
    "torch.compile(module with parameters), first call dual": lambda: _wrapped_module("params", False),
    "torch.compile(module with parameters), plain first": lambda: _wrapped_module("params", True),
    "torch.compile(module with parameters), first call dual, fullgraph=True": lambda: _wrapped_module(
        "params", False, fullgraph=True
    ),
    "torch.compile(parameterless module), first call dual": lambda: _wrapped_module("parameterless", False),
    "torch.compile(parameterless module), plain first": lambda: _wrapped_module("parameterless", True),
    "torch.compile(parameterless module), first call dual, fullgraph=True": lambda: _wrapped_module(
        "parameterless", False, fullgraph=True
    ),
    "project module, plain through another compiled instance of its class first": lambda: _two_instances("project"),
    "built-in nn.Linear, plain through another compiled instance first": lambda: _two_instances("builtin"),
    "project module .compile() in place, first call dual": lambda: _in_place("project", False),
    "project module .compile() in place, plain first": lambda: _in_place("project", True),
    "built-in nn.Linear .compile() in place, first call dual": lambda: _in_place("builtin", False),
    "built-in nn.Linear .compile() in place, plain first": lambda: _in_place("builtin", True),
    # -- torch.autograd.functional.jacobian(strategy="forward-mode", vectorize=True) ------------------
    "forward-mode jacobian, first call, tanh(x) * x.sum() on 5": lambda: _jacobian(_field, 5, False),
    "forward-mode jacobian, first call, sin(x**3) on 4": lambda: _jacobian(_sin_cube, 4, False),
    "forward-mode jacobian, plain first, tanh(x) * x.sum() on 5": lambda: _jacobian(_field, 5, True),
    "forward-mode jacobian, plain first, sin(x**3) on 4": lambda: _jacobian(_sin_cube, 4, True),
}

if __name__ == "__main__":
    sys.exit(main(__file__, CASES))
