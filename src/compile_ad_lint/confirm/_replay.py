"""Replaying one compiled region inside the user's own process (``confirm -- COMMAND``; loaded by
``_live.py``, never imported by the linter; standard library and torch only).

A :class:`Region` is one call of a flagged compiled callable as the user's code made it: the callable,
its inputs, the autocast state around the call, the RNG state before it, the config its compiled
backward was traced under, and (from hooks on its outputs) the gradient the user's own backward sent
into each output. The replays run the region again with those inputs and that upstream gradient,
through ``torch.autograd.grad`` (never ``.grad``, so the user's parameters are left as they are):

* compiled as written and compiled under the matching config: the same function compiled afresh
  (one new code object per replay, so neither reuses the other's graph) under each
  ``backward_pass_autocast``, the fix differential of design.md section 1;
* eagerly (``torch.compiler.set_stance("force_eager")``, so compiled callables nested in it run
  eagerly too), with the backward under the autocast the real one ran in, and under the autocast the
  compiled backward assumed (the eager differential).

Every replay restores the RNG state of the user's call first (dropout draws the same numbers) and the
user's RNG state afterwards. Each function returns a plain measurement dict; the linter decides the
verdict from it (``live_verdicts``).
"""

import contextlib
import itertools
import math
import time

AUTOCAST_DEVICES = ("cpu", "cuda")
_REPLAYS = itertools.count()


def autocast_state(torch):
    """``{device: (enabled, dtype name)}`` of the calling thread."""
    return {
        device: (bool(torch.is_autocast_enabled(device)), str(torch.get_autocast_dtype(device)).replace("torch.", ""))
        for device in AUTOCAST_DEVICES
    }


def describe(state):
    enabled = [f"autocast({device!r}, {dtype})" for device, (on, dtype) in sorted(state.items()) if on]
    return " + ".join(enabled) if enabled else "no autocast"


@contextlib.contextmanager
def autocast_as(torch, state):
    """Run the block under exactly ``state`` (every device in it), whatever the ambient autocast is."""
    saved = autocast_state(torch)
    cache = torch.is_autocast_cache_enabled()
    try:
        torch.set_autocast_cache_enabled(False)  # no cast made here outlives the replay
        for device, (enabled, dtype) in state.items():
            torch.set_autocast_dtype(device, getattr(torch, dtype))
            torch.set_autocast_enabled(device, enabled)
        yield
    finally:
        for device, (enabled, dtype) in saved.items():
            torch.set_autocast_enabled(device, enabled)
            torch.set_autocast_dtype(device, getattr(torch, dtype))
        torch.set_autocast_cache_enabled(cache)


def assumed(forward, config):
    """The autocast state a compiled backward traced under ``config`` assumes, for a forward run under
    ``forward`` (AOTAutograd: ``same_as_forward`` keeps it, ``off`` disables autocast, a list disables
    it and enters each ``torch.amp.autocast(**kwargs)``)."""
    if config == "same_as_forward":
        return dict(forward)
    state = {device: (False, dtype) for device, (_, dtype) in forward.items()}
    for kwargs in config if isinstance(config, list) else []:
        device = kwargs.get("device_type")
        dtype = str(kwargs.get("dtype") or forward.get(device, (False, "bfloat16"))[1]).replace("torch.", "")
        state[device] = (bool(kwargs.get("enabled", True)), dtype)
    return state


def matching_config(forward, backward):
    """The ``backward_pass_autocast`` under which the compiled backward runs as the real one did:
    ``"off"`` when the backward ran outside autocast, ``"same_as_forward"`` when under the forward's
    state, else the list of the backward's autocast contexts."""
    enabled = {device: dtype for device, (on, dtype) in backward.items() if on}
    if not enabled:
        return "off"
    if assumed(forward, "same_as_forward") == backward:
        return "same_as_forward"
    return [{"device_type": device, "dtype": dtype} for device, dtype in sorted(enabled.items())]


def _config_value(torch, value):
    """A config value as torch wants it (dtypes as ``torch.dtype`` objects)."""
    if isinstance(value, list):
        return [dict(item, dtype=getattr(torch, str(item["dtype"]).replace("torch.", ""))) for item in value]
    return value


def config_text(value):
    if isinstance(value, list):
        return "[" + ", ".join(f"{{device_type={i['device_type']!r}, dtype={i['dtype']}}}" for i in value) + "]"
    return repr(value)


def plain_config(value):
    """A config value read from torch, as JSON (dtypes by name)."""
    if isinstance(value, (list, tuple)):
        return [
            {key: (str(item).replace("torch.", "") if key == "dtype" else item) for key, item in dict(entry).items()}
            for entry in value
        ]
    return value if isinstance(value, str) else repr(value)


def rng_state(torch):
    state = {"cpu": torch.get_rng_state()}
    with contextlib.suppress(Exception):
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(torch, state):
    torch.set_rng_state(state["cpu"])
    if "cuda" in state:
        torch.cuda.set_rng_state_all(state["cuda"])


def relative_difference(torch, a, b):
    """||a - b|| / ||b|| over gradient lists (inf when their shapes differ or a NaN appears; 0 when
    both are zero): the same measure as ``compare.relative_difference``. A leaf None on one side
    counts as zeros there (None against zeros is CAL005's question, not this one's)."""
    if len(a) != len(b):
        return math.inf
    pairs = []
    for x, y in zip(a, b):
        if x is None and y is None:
            continue
        x = torch.zeros_like(y) if x is None else x
        y = torch.zeros_like(x) if y is None else y
        if x.shape != y.shape:
            return math.inf
        pairs.append((x, y))
    if not pairs:
        return 0.0
    diff = math.sqrt(sum(float((x.double() - y.double()).pow(2).sum()) for x, y in pairs))
    norm = math.sqrt(sum(float(y.double().pow(2).sum()) for _, y in pairs))
    if math.isnan(diff) or math.isnan(norm):
        return math.inf
    if norm == 0.0:
        return 0.0 if diff == 0.0 else math.inf
    return diff / norm


def finite(value):
    """JSON-safe: infinity and NaN as strings."""
    return value if value is None or math.isfinite(value) else repr(value)


class Region:
    """One call of a flagged compiled callable, as the user's code made it."""

    def __init__(self, torch, handle, target, call, args, kwargs, before):
        """``before``: :meth:`before_call`'s snapshot, taken when the user's call started."""
        self.torch = torch
        self.handle = handle
        self.target = target  # the uncompiled callable (a module, a function) and how it was compiled
        self.call = call  # the user's compiled callable, as they call it
        self.args, self.kwargs = args, kwargs
        self.rng, self.versions, self.forward = before
        self.config = "same_as_forward"  # backward_pass_autocast its compiled backward was traced under
        self.outputs = []
        self.upstream = {}  # output index -> (backward serial, gradient)
        self.device = next((t.device.type for t, _ in self.versions), torch.get_default_device().type)

    @staticmethod
    def before_call(torch, args, kwargs):
        """The RNG state, the input tensors' versions and the autocast state as the user's call starts."""
        from torch.utils._pytree import tree_flatten

        flat, _ = tree_flatten((args, kwargs))
        versions = [(t, t._version) for t in flat if isinstance(t, torch.Tensor)]
        return rng_state(torch), versions, autocast_state(torch)

    def traced(self, config, forward):
        """What the compiled graph was traced under: the config, and the autocast state inside the
        compiled frame (a wrapper that enters autocast in ``forward``, as accelerate's does, is
        inside the user's call but outside the frame)."""
        self.config = config
        if forward is not None:
            self.forward = forward

    def attach(self, result, serial):
        """Hooks on the outputs that need a gradient: each keeps what the user's backward sends into it."""
        from torch.utils._pytree import tree_leaves

        torch = self.torch
        self.outputs = [t for t in tree_leaves(result) if isinstance(t, torch.Tensor)]
        for index, tensor in enumerate(self.outputs):
            if tensor.requires_grad:

                def keep(grad, index=index):
                    if isinstance(grad, torch.Tensor):  # None: this output got no gradient
                        with contextlib.suppress(Exception):  # never break the user's backward
                            self.upstream[index] = (serial(), grad.detach().clone())

                tensor.register_hook(keep)
        self.outputs = [(t.requires_grad, t.dtype) for t in self.outputs]

    def fed_by(self, serial):
        """The outputs the backward numbered ``serial`` sent a gradient into, with those gradients."""
        return [(index, grad) for index, (number, grad) in sorted(self.upstream.items()) if number == serial]

    def inputs_changed(self):
        return [t for t, version in self.versions if t._version != version]

    def leaves(self):
        """The region's leaves: the module's parameters that need a gradient, then each input tensor
        that needs one (a fresh leaf with its value); with their names for the report."""
        torch = self.torch
        from torch.utils._pytree import tree_map

        names, leaves, seen = [], [], set()
        module = self.target.module
        if module is not None:
            for name, parameter in module.named_parameters():
                if parameter.requires_grad and id(parameter) not in seen:
                    seen.add(id(parameter))
                    names.append(name)
                    leaves.append(parameter)
        counter = itertools.count()

        def fresh(value):
            if isinstance(value, torch.Tensor) and value.requires_grad and id(value) not in seen:
                number = next(counter)
                if value.is_leaf:  # a parameter passed as an argument: its own gradient
                    seen.add(id(value))
                    names.append(f"argument tensor {number}")
                    leaves.append(value)
                    return value
                leaf = value.detach().requires_grad_(True)
                names.append(f"argument tensor {number} (an activation)")
                leaves.append(leaf)
                return leaf
            return value

        args, kwargs = tree_map(fresh, (self.args, self.kwargs))
        return names, leaves, args, kwargs

    # -- the replays ------------------------------------------------------------------------------

    def run(self, fn, args, kwargs, eager=False, config=None):
        """The region's forward once more: the user's RNG state, the forward's autocast state."""
        torch = self.torch
        set_rng_state(torch, self.rng)
        stance = torch.compiler.set_stance("force_eager") if eager else contextlib.nullcontext()
        patch = contextlib.nullcontext()
        if config is not None:
            import torch._functorch.config as functorch_config

            patch = functorch_config.patch(backward_pass_autocast=_config_value(torch, config))
        with stance, patch, autocast_as(torch, self.forward):
            return fn(*args, **kwargs)

    def grads(self, result, fed, leaves, backward, create_graph=False):
        from torch.utils._pytree import tree_leaves

        torch = self.torch
        outputs = [t for t in tree_leaves(result) if isinstance(t, torch.Tensor)]
        with autocast_as(torch, backward):
            return torch.autograd.grad(
                [outputs[index] for index, _ in fed],
                leaves,
                [grad for _, grad in fed],
                allow_unused=True,
                create_graph=create_graph,
            )

    def fresh_compiled(self):
        """The region's callable compiled again the way the user compiled it, as a new code object (a
        wrapper named once per replay), so dynamo traces it anew instead of reusing a cached graph."""
        number = next(_REPLAYS)
        name = f"_compile_ad_lint_replay_{number}"
        namespace = {"_target": self.target.callable}
        source = f"def {name}(*args, **kwargs):\n    return _target(*args, **kwargs)\n"
        exec(compile(source, f"<compile-ad-lint replay {number}>", "exec"), namespace)
        return self.target.compile(namespace[name], **self.target.options)


class Target:
    """What a compiled callable was made from: ``callable`` (the module or function), its ``module``
    when there is one (its parameters are the region's leaves), the original ``torch.compile`` and the
    options the user passed."""

    def __init__(self, callable_, module, compile_, options):
        self.callable = callable_
        self.module = module
        self.compile = compile_
        self.options = options


def _dtypes(grads):
    return sorted({str(g.dtype).replace("torch.", "") for g in grads if g is not None})


def cal002(region, serial, backward, backend):
    """The fix differential on one region: compiled under the config as written and under the
    matching config, eager under the real backward's autocast and under the assumed one."""
    torch = region.torch
    started = time.monotonic()
    fed = region.fed_by(serial)
    written = plain_config(region.config)
    matching = matching_config(region.forward, backward)
    base = {
        "kind": "cal002",
        "device": region.device,
        "written": written,
        "matching": matching,
        "written_text": config_text(written),
        "matching_text": config_text(matching),
        "forward": describe(region.forward),
        "backward": describe(backward),
        "assumed": describe(assumed(region.forward, written)),
        "backend": backend,
    }
    if not fed:
        return dict(base, outcome="no-upstream")
    if assumed(region.forward, written) == backward:
        return dict(base, outcome="same")
    changed = region.inputs_changed()
    if changed:
        return dict(base, outcome="inputs-changed", changed=len(changed))
    names, leaves, args, kwargs = region.leaves()
    if not leaves:
        return dict(base, outcome="no-leaves")
    after = rng_state(torch)
    try:
        runs = {}
        for name, config in (("written", written), ("matching", matching)):
            fresh = region.fresh_compiled()
            runs[name] = region.grads(region.run(fresh, args, kwargs, config=config), fed, leaves, backward)
        eager_out = region.run(region.target.callable, args, kwargs, eager=True)
        runs["eager"] = region.grads(eager_out, fed, leaves, backward)
        eager_out = region.run(region.target.callable, args, kwargs, eager=True)
        runs["eager_assumed"] = region.grads(eager_out, fed, leaves, assumed(region.forward, written))
    finally:
        set_rng_state(torch, after)
    rel = lambda a, b: finite(relative_difference(torch, runs[a], runs[b]))  # noqa: E731
    grads = runs["written"]
    return dict(
        base,
        outcome="measured",
        differential=rel("written", "matching"),
        vs_eager_written=rel("written", "eager"),
        vs_eager_matching=rel("matching", "eager"),
        eager_differential=rel("eager_assumed", "eager"),
        dtypes=_dtypes(grads),
        size=sum(g.numel() for g in grads if g is not None),
        leaves=len(leaves),
        outputs=len(fed),
        seconds=round(time.monotonic() - started, 2),
    )


def _kind_of(torch, grad):
    if grad is None:
        return "none"
    return "zeros" if not bool(grad.detach().ne(0).any()) else "values"


def cal005(region, serial, backward, real_before):
    """None against zeros: the region's leaves through the compiled callable as written and eagerly,
    with only the outputs the user's backward used; and what the user's own backward left in ``.grad``."""
    torch = region.torch
    fed = region.fed_by(serial)
    base = {"kind": "cal005", "device": region.device}
    if not fed:
        return dict(base, outcome="no-upstream")
    names, leaves, args, kwargs = region.leaves()
    after = rng_state(torch)
    try:
        compiled = region.grads(region.run(region.call, args, kwargs), fed, leaves, backward)
        eager = region.grads(region.run(region.target.callable, args, kwargs, eager=True), fed, leaves, backward)
    finally:
        set_rng_state(torch, after)
    rows = []
    for name, leaf, c, e in zip(names, leaves, compiled, eager):
        real = ""
        if id(leaf) in real_before:
            now = leaf.grad
            real = f"{'none' if real_before[id(leaf)] else 'set'}->{_kind_of(torch, now)}"
        rows.append(
            {
                "name": name,
                "shape": list(leaf.shape),
                "compiled": _kind_of(torch, c),
                "eager": _kind_of(torch, e),
                "real": real,
            }
        )
    return dict(base, outcome="measured", leaves=rows, outputs=len(fed), unused=len(region.outputs) - len(fed))


def cal001(torch, call, args, kwargs, result, raised, rng_before):
    """Tangents of the flagged call's outputs as the user's run got them (or its exception), against
    the same call replayed eagerly with the same dual inputs."""
    import torch.autograd.forward_ad as fwAD
    from torch.utils._pytree import tree_leaves

    def tangents(values):
        return [fwAD.unpack_dual(t).tangent for t in tree_leaves(values) if isinstance(t, torch.Tensor)][:8]

    after = rng_state(torch)
    eager_raised = None
    try:
        set_rng_state(torch, rng_before)
        with torch.compiler.set_stance("force_eager"):
            eager = call(*args, **kwargs)
    except Exception as error:
        eager, eager_raised = None, error
    finally:
        set_rng_state(torch, after)
    device = next(
        (t.device.type for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)),
        torch.get_default_device().type,
    )
    base = {"kind": "cal001", "device": device}
    if raised is not None or eager_raised is not None:
        return dict(
            base, outcome="raised", written_raised=describe_error(raised), eager_raised=describe_error(eager_raised)
        )
    pairs = []
    for written, reference in zip(tangents(result), tangents(eager)):
        pair = {"eager_none": reference is None, "compiled_none": written is None, "rel": None, "dtype": None}
        if written is not None and reference is not None:
            pair["rel"] = finite(relative_difference(torch, [written], [reference]))
            pair["dtype"] = str(reference.dtype).replace("torch.", "")
        pairs.append(pair)
    return dict(base, outcome="measured", pairs=pairs)


def describe_error(error):
    if error is None:
        return None
    lines = str(error).strip().splitlines()
    return {"type": type(error).__name__, "message": lines[0][:300] if lines else ""}


def double_backward(region, serial, backward):
    """CAL004's eager witness: the region's gradient with ``create_graph=True``, differentiated again,
    eagerly (None: there was no region to replay)."""
    torch = region.torch
    fed = region.fed_by(serial) or [(index, None) for index, (needs, _) in enumerate(region.outputs) if needs]
    names, leaves, args, kwargs = region.leaves()
    if not leaves or not fed:
        return None
    after = rng_state(torch)
    try:
        out = region.run(region.target.callable, args, kwargs, eager=True)
        outputs = [t for t in _tensors(torch, out)]
        picked = [outputs[index] for index, _ in fed]
        ups = [torch.ones_like(t) if grad is None else grad for t, (_, grad) in zip(picked, fed)]
        with autocast_as(torch, backward):
            first = torch.autograd.grad(picked, leaves, ups, allow_unused=True, create_graph=True)
            total = sum(g.float().pow(2).sum() for g in first if g is not None and g.requires_grad)
            if not isinstance(total, torch.Tensor):
                return {"ok": False, "reason": "the region's gradient does not depend on its leaves again"}
            torch.autograd.grad(total, leaves, allow_unused=True)
        return {"ok": True}
    except Exception as error:
        return {"ok": False, "error": describe_error(error)}
    finally:
        set_rng_state(torch, after)


def _tensors(torch, values):
    from torch.utils._pytree import tree_leaves

    return [t for t in tree_leaves(values) if isinstance(t, torch.Tensor)]
