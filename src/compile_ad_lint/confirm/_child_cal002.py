"""CAL002's extra runs in the confirm child (``_child.py`` loads this file beside it; standard library only).

``force`` (compiled) answers reads of ``backward_pass_autocast`` with the matching value while a flagged
compiled callable runs (``force_config``); ``assume`` (eager) runs the backward of each flagged region
under the autocast state its compiled backward would have assumed (``assume_backward_autocast``): the
eager differential.
"""


def force_config(torch, forced, recorder):
    """Make reads of ``backward_pass_autocast`` return the matching value while a flagged compiled callable runs.

    ``forced`` maps compiled-callable handles (creation order of ``torch.compile`` results, the same in
    every run of a deterministic entry point) to values. Keying on the callable rather than on the call
    site also covers a region traced at an earlier call: its compiled backward is reused at the flagged one.
    """
    import torch._functorch.config as functorch_config

    device = torch.get_default_device().type

    def decode_entry(key, value):
        if key == "dtype" and isinstance(value, str):
            return getattr(torch, value.replace("torch.", ""))
        if key == "device_type" and value == "?":  # not known statically: the device this run checks
            return device
        return value

    def decode(value):
        if isinstance(value, list):
            return [{k: decode_entry(k, v) for k, v in item.items()} for item in value]
        return value

    rules = {int(handle): decode(value) for handle, value in forced}
    cls = type(functorch_config)
    original = cls.__getattr__
    hits = recorder.forced_hits

    def __getattr__(self, name):
        if name == "backward_pass_autocast" and self is functorch_config:
            written = original(self, name)
            for handle in reversed(recorder.running):
                if handle in rules:
                    value = rules[handle]
                    hits.append({"handle": handle, "written": repr(written), "forced": repr(value)})
                    return value
            return written
        return original(self, name)

    recorder.patch(cls, "__getattr__", __getattr__)


#: Autocast device types whose state the eager differential sets (with any a config list names).
AUTOCAST_DEVICES = ("cpu", "cuda")
MAX_ASSUMED_HITS = 200


def assumed_autocast(torch, config):
    """The autocast state, per device type, in which a region compiled now under ``config`` would have its
    backward traced (AOTAutograd: ``same_as_forward`` keeps the ambient state, ``off`` disables autocast,
    a list disables it and then enters each ``torch.amp.autocast(**kwargs)``): ``{device: (enabled, dtype)}``."""
    state = {
        device: (torch.is_autocast_enabled(device), torch.get_autocast_dtype(device)) for device in AUTOCAST_DEVICES
    }
    if config == "same_as_forward":
        return state
    state = {device: (False, dtype) for device, (_, dtype) in state.items()}
    for kwargs in config if isinstance(config, list) else []:
        device = kwargs.get("device_type")
        dtype = kwargs.get("dtype") or torch.get_autocast_dtype(device)
        state[device] = (bool(kwargs.get("enabled", True)), dtype)
    return state


def describe_autocast(state):
    enabled = [
        f"autocast({device!r}, {str(dtype).replace('torch.', '')})"
        for device, (on, dtype) in sorted(state.items())
        if on
    ]
    return " + ".join(enabled) if enabled else "no autocast"


def assume_backward_autocast(torch, handles, recorder):
    """The eager differential's run (eager, dynamo disabled): the backward of each call of a flagged
    compiled callable runs under the autocast state its compiled backward would have assumed, read from
    the written ``backward_pass_autocast`` and the autocast state at the call (:func:`assumed_autocast`);
    the rest of the backward runs as written.

    The region's backward nodes are the autograd nodes created during the call (sequence numbers in
    ``[before, after)``) that its outputs reach. A pre-hook sets the autocast state for each of them, a
    post-hook puts the previous state back; the autocast cast cache is off meanwhile, so no cast made in
    the backward outlives it (an optimizer step would make a cached copy stale).
    """
    import functools

    import torch._functorch.config as functorch_config
    from torch.utils._pytree import tree_leaves

    def sequence_nr():
        return torch._C._autograd._get_sequence_nr()

    def region_nodes(result, before, after):
        seen, nodes = set(), []
        pending = [t.grad_fn for t in tree_leaves(result) if isinstance(t, torch.Tensor) and t.grad_fn is not None]
        while pending and len(seen) < 200000:
            node = pending.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if not before <= node._sequence_nr() < after:
                continue  # made before the call (the inputs' history) or an AccumulateGrad leaf node
            nodes.append(node)
            pending.extend(child for child, _ in node.next_functions)
        return nodes

    def current(devices):
        return {device: (torch.is_autocast_enabled(device), torch.get_autocast_dtype(device)) for device in devices}

    def hooks(state):
        saved = []

        def enter(grad_outputs):
            with recorder.guard():
                saved.append((current(state), torch.is_autocast_cache_enabled()))
                torch.set_autocast_cache_enabled(False)
                for device, (enabled, dtype) in state.items():
                    torch.set_autocast_dtype(device, dtype)
                    torch.set_autocast_enabled(device, enabled)

        def leave(grad_inputs, grad_outputs):
            with recorder.guard():
                if saved:
                    previous, cache = saved.pop()
                    for device, (enabled, dtype) in previous.items():
                        torch.set_autocast_enabled(device, enabled)
                        torch.set_autocast_dtype(device, dtype)
                    torch.set_autocast_cache_enabled(cache)

        return enter, leave

    # Dynamo traces a compiled callable again when the ambient autocast state changes (it guards on it),
    # not when the config does: a region keeps the state assumed at its first call under each ambient state.
    traced = {}

    def region(handle, call):
        @functools.wraps(call)
        def run(*args, **kwargs):
            written = functorch_config.backward_pass_autocast
            ambient = tuple(sorted(current(AUTOCAST_DEVICES).items()))
            state = traced.setdefault((handle, ambient), assumed_autocast(torch, written))
            before = sequence_nr()
            result = call(*args, **kwargs)
            with recorder.guard():
                nodes = region_nodes(result, before, sequence_nr())
                enter, leave = hooks(state)
                for node in nodes:
                    node.register_prehook(enter)
                    node.register_hook(leave)
                if len(recorder.assumed_hits) < MAX_ASSUMED_HITS:
                    recorder.assumed_hits.append(
                        {
                            "handle": handle,
                            "written": repr(written),
                            "assumed": describe_autocast(state),
                            "nodes": len(nodes),
                        }
                    )
            return result

        return run

    recorder.regions.update((int(handle), region) for handle in handles)
