"""Compiled backward vs autocast (CAL002) and the values ``backward_pass_autocast`` takes (CAL003).

Run: python facts/backward_autocast.py [CASE ...] [--jobs N] [--json] [--record] [--check]
(needs torch; CPU autocast with bfloat16; each case in its own process)

The region is an fp32 island (``autocast(enabled=False)`` around a matmul): its backward is what
autocast would otherwise cast to bf16, so a compiled backward traced under another autocast state
than the one it runs in gives other gradients than eager. ``same as eager`` means a relative
difference under 1e-5, ``differs from eager`` over 1e-4.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import main


def _region(x, w):
    import torch

    with torch.autocast("cpu", enabled=False):
        y = x.float() @ w.float()
    return y.pow(2).sum()


def _gradient(compiled: bool, config, forward_autocast: bool, backward_autocast: bool):
    import torch
    import torch._functorch.config as functorch_config

    torch._dynamo.reset()
    torch.manual_seed(0)
    x = torch.randn(256, 256)
    w = torch.randn(256, 256, requires_grad=True)
    bf16 = dict(device_type="cpu", dtype=torch.bfloat16)
    with functorch_config.patch(backward_pass_autocast=config):
        fn = torch.compile(_region) if compiled else _region
        with torch.autocast(**bf16, enabled=forward_autocast):
            z = fn(x, w)
        with torch.autocast(**bf16, enabled=backward_autocast):
            z.backward()
    return w.grad.double()


def _verdict(eager, compiled) -> str:
    """How a compiled run's gradient compares with eager's (the thresholds of the module docstring)."""
    rel = ((compiled - eager).norm() / eager.norm()).item()
    if rel < 1e-5:
        return "same as eager"
    return "differs from eager" if rel > 1e-4 else "within 1e-4 of eager"


def _compare(config, forward_autocast: bool, backward_autocast: bool) -> str:
    return _verdict(
        _gradient(False, config, forward_autocast, backward_autocast),
        _gradient(True, config, forward_autocast, backward_autocast),
    )


def _bf16_list():
    import torch

    return [{"device_type": "cpu", "dtype": torch.bfloat16}]


def _island_class():
    """The fp32 island as a module: the weight's backward is what autocast would cast to bf16."""
    import torch

    class Island(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(256, 256))

        def forward(self, x):
            with torch.autocast("cpu", enabled=False):
                y = x.float() @ self.w.float()
            return y.pow(2).sum()

    return Island


def _prepared_module_gradient(compile_how: str | None):
    """A module whose ``forward`` is replaced by one entering autocast, as accelerate's
    ``prepare_model`` does (``model.forward = autocast_context(model.forward)``), after the module
    was compiled in place (``module.compile()``), compiled as ``torch.compile(module)``, or not."""
    import torch

    torch._dynamo.reset()
    torch.manual_seed(0)

    Island = _island_class()
    island = Island()
    x = torch.randn(256, 256)
    module = island
    if compile_how == "in place":
        module.compile()
    elif compile_how == "torch.compile":
        module = torch.compile(island)
    original = module.forward

    def forward(*args, **kwargs):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return original(*args, **kwargs)

    module.forward = forward
    module(x).backward()
    return island.w.grad.double()


def _checkpointed_gradient(compiled: bool, reentrant: bool):
    """The fp32 island called through ``torch.utils.checkpoint.checkpoint`` under autocast, its
    backward (which recomputes the forward) outside."""
    import torch
    import torch.utils.checkpoint

    torch._dynamo.reset()
    torch.manual_seed(0)
    x = torch.randn(256, 256)
    w = torch.randn(256, 256, requires_grad=True)
    fn = torch.compile(_region) if compiled else _region
    with torch.autocast("cpu", dtype=torch.bfloat16):
        z = torch.utils.checkpoint.checkpoint(fn, x, w, use_reentrant=reentrant)
    z.backward()
    return w.grad.double()


def _compare_checkpointed(reentrant: bool) -> str:
    return _verdict(_checkpointed_gradient(False, reentrant), _checkpointed_gradient(True, reentrant))


def _compare_prepared(compile_how: str) -> str:
    return _verdict(_prepared_module_gradient(None), _prepared_module_gradient(compile_how))


def _class_decorated_gradient(compiled: bool, config) -> object:
    """The fp32 island as an ``nn.Module`` class compiled with ``@torch.compile`` on its definition,
    its forward under bf16 autocast entered through a ``contextlib.ExitStack``, the backward after
    the stack closed."""
    import contextlib

    import torch
    import torch._functorch.config as functorch_config

    torch._dynamo.reset()
    torch.manual_seed(0)

    Island = _island_class()
    model = (torch.compile(Island) if compiled else Island)()
    x = torch.randn(256, 256)
    with functorch_config.patch(backward_pass_autocast=config):
        with contextlib.ExitStack() as stack:
            stack.enter_context(torch.autocast("cpu", dtype=torch.bfloat16))
            z = model(x)
        z.backward()
    return model.w.grad.double()


def _compare_class_decorated(config) -> str:
    return _verdict(_class_decorated_gradient(False, config), _class_decorated_gradient(True, config))


def _default() -> str:
    import torch._functorch.config as functorch_config

    return repr(functorch_config.backward_pass_autocast)


def _accepts(value) -> str:
    """Whether tracing a compiled region's backward accepts ``value`` (it is read at trace time)."""
    import torch
    import torch._functorch.config as functorch_config

    w = torch.randn(4, requires_grad=True)
    try:
        with functorch_config.patch(backward_pass_autocast=value() if callable(value) else value):
            torch.compile(lambda a: (a * a).sum())(w).backward()
    except Exception as error:  # inductor wraps what the backward's tracing raised: name both
        root = getattr(error, "inner_exception", None) or error.__cause__ or error.__context__
        inner = f" ({type(root).__name__})" if root is not None else ""
        return f"raises {type(error).__name__}{inner}"
    return "accepted"


CASES = {
    "default value": _default,
    "forward in autocast, default config, backward outside": lambda: _compare("same_as_forward", True, False),
    "forward in autocast, config 'off', backward outside": lambda: _compare("off", True, False),
    "forward in autocast, default config, backward inside": lambda: _compare("same_as_forward", True, True),
    "forward in autocast, config 'off', backward inside": lambda: _compare("off", True, True),
    "forward outside autocast, default config, backward inside": lambda: _compare("same_as_forward", False, True),
    "forward outside autocast, matching kwargs list, backward inside": lambda: _compare(_bf16_list(), False, True),
    "module compiled in place, forward replaced to enter autocast, backward outside": lambda: _compare_prepared(
        "in place"
    ),
    "torch.compile(module), forward replaced to enter autocast, backward outside": lambda: _compare_prepared(
        "torch.compile"
    ),
    "forward in autocast through checkpoint(use_reentrant=False), default config, backward outside": lambda: (
        _compare_checkpointed(False)
    ),
    "forward in autocast through checkpoint(use_reentrant=True), default config, backward outside": lambda: (
        _compare_checkpointed(True)
    ),
    "@torch.compile module class, forward in autocast entered by an ExitStack, default config, backward outside": (
        lambda: _compare_class_decorated("same_as_forward")
    ),
    "@torch.compile module class, forward in autocast entered by an ExitStack, config 'off', backward outside": (
        lambda: _compare_class_decorated("off")
    ),
    "value 'same_as_forward'": lambda: _accepts("same_as_forward"),
    "value 'off'": lambda: _accepts("off"),
    "value: a list of autocast kwargs dicts": lambda: _accepts(_bf16_list),
    "value 'sameasforward' (a misspelled string)": lambda: _accepts("sameasforward"),
    "value: a bare kwargs dict": lambda: _accepts(lambda: _bf16_list()[0]),
    "value None": lambda: _accepts(None),
    "value False": lambda: _accepts(False),
}

if __name__ == "__main__":
    sys.exit(main(__file__, CASES))
