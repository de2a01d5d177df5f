"""What Python's and torch's containers do with what they hold: which methods store, return an
element or belong to the container itself, and which calls build one."""

from __future__ import annotations

from dataclasses import dataclass

#: Container methods returning one element (``dict.get``/``pop``/``setdefault``, ``list.pop``).
CONTAINER_ELEMENT_METHODS = frozenset({"get", "pop", "setdefault", "popitem", "__getitem__"})
#: ``dict.get(key, default=None)`` / ``dict.pop(key[, default])``: the key's item, else the default.
DICT_LOOKUP_METHODS = frozenset({"get", "pop"})


@dataclass(frozen=True)
class ContainerStore:
    """A container method storing one of its positional arguments in the receiver: the argument
    itself, or its ``elements``."""

    position: int
    elements: bool = False


#: Container methods storing their argument (``append(x)``, ``insert(i, x)``, ``add(x)``) or its
#: elements (``extend(iterable)``) in the receiver (Python docs library/stdtypes.html, mutable
#: sequence and set types).
CONTAINER_STORE_METHODS = {
    "append": ContainerStore(0),
    "insert": ContainerStore(1),
    "add": ContainerStore(0),
    "extend": ContainerStore(0, elements=True),
}
#: ``nn.ModuleDict.update(modules)``: registers each module of the mapping (torch/nn/modules/
#: container.py ``ModuleDict.update``: ``self[key] = module`` for each pair), as ``dict.update`` stores
#: each value. Modules are kept, unlike the other stores: a ModuleDict holds the model's parts.
CONTAINER_UPDATE = "update"

#: The attributes a container has of its own: the members of ``nn.ModuleDict``, ``nn.ModuleList``,
#: ``nn.Sequential``, ``nn.ParameterDict`` and ``nn.ParameterList`` (``dir()`` on torch 2.13.0,
#: ``nn.Module``'s methods with them, and the instance's ``training``) and of Python's ``dict``,
#: ``list``, ``tuple`` and ``set``. Any other attribute of an ``nn.ModuleDict`` is one of its items
#: (``nn.Module.__getattr__`` looks in ``_modules``): ``self.transformer.h`` in nanoGPT's GPT.
CONTAINER_MEMBERS = frozenset(
    {
        *("T_destination", "add", "add_module", "append", "apply", "bfloat16", "buffers", "call_super_init"),
        *("children", "clear", "compile", "copy", "count", "cpu", "cuda", "difference", "difference_update"),
        *("discard", "double", "dump_patches", "eval", "extend", "extra_repr", "float", "forward", "fromkeys"),
        *("get", "get_buffer", "get_extra_state", "get_parameter", "get_submodule", "half", "index", "insert"),
        *("intersection", "intersection_update", "ipu", "isdisjoint", "issubset", "issuperset", "items", "keys"),
        *("load_state_dict", "modules", "mtia", "named_buffers", "named_children", "named_modules"),
        *("named_parameters", "parameters", "pop", "popitem", "register_backward_hook", "register_buffer"),
        *("register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook"),
        *("register_full_backward_pre_hook", "register_load_state_dict_post_hook"),
        *("register_load_state_dict_pre_hook", "register_module", "register_parameter"),
        *("register_state_dict_post_hook", "register_state_dict_pre_hook", "remove", "requires_grad_", "reverse"),
        *("set_extra_state", "set_submodule", "setdefault", "share_memory", "sort", "state_dict"),
        *("symmetric_difference", "symmetric_difference_update", "to", "to_empty", "train", "training", "type"),
        *("union", "update", "values", "xpu", "zero_grad"),
    }
)


@dataclass(frozen=True)
class ContainerFactory:
    """A call that builds an empty container a registry starts from (``dict()``). ``mapping``: called
    with arguments, it builds a mapping of them whose values are its items (Python docs
    library/stdtypes.html ``dict(mapping, **kwargs)``; ``OrderedDict`` likewise): nanoGPT's
    ``nn.ModuleDict(dict(wte=..., h=nn.ModuleList(...)))``."""

    mapping: bool = False


def own_attribute(name: str) -> bool:
    """Whether ``name`` is a container's own attribute (``CONTAINER_MEMBERS``, or a private one)
    rather than, on an ``nn.ModuleDict``, one of its items."""
    return name in CONTAINER_MEMBERS or name.startswith("_")


#: Calls that build an empty container a registry starts from.
EMPTY_CONTAINER_FACTORIES = {
    "builtins.dict": ContainerFactory(mapping=True),
    "collections.OrderedDict": ContainerFactory(mapping=True),
    "collections.defaultdict": ContainerFactory(),
}
