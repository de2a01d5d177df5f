"""The knowledge tables (``compile_ad_lint/knowledge/``): every row cites where torch (or Python)
defines it, and every name of every row has a case here, analyzed through the public API: a small
project that imports the name under an alias and reports the finding the row enables, next to a
near-miss that must not be reported. Lines that must be reported carry ``# expect: CODE``; nothing
else may be reported. Rows whose cases live beside the behaviour they model are named in
``ELSEWHERE`` (module wrappers, grad modes, registries: ``tests/linking/test_reach.py``; frameworks:
``tests/knowledge/test_frameworks.py``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

import pytest

from compile_ad_lint.knowledge import containers, switches
from compile_ad_lint.knowledge import frameworks as fw
from compile_ad_lint.knowledge import torch_api as api
from compile_ad_lint.knowledge.calls import CALLS, MATCHED_NAMES, REACH_EFFECTS
from compile_ad_lint.knowledge.effects import Effect
from compile_ad_lint.rules import Case
from compile_ad_lint.testing import run_case

HEAD = "import torch\nimport torch.autograd.forward_ad as fwAD\nfrom torch import nn\n"
NET = (
    "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.l = nn.Linear(4, 4)\n\n"
    "    def forward(self, x):\n        return self.l(x)\n\n\n"
)


def _imported(name: str) -> str:
    """``from <module> import <last> as target``: the row's name reached through an alias."""
    module, attribute = name.rsplit(".", 1)
    return f"from {module} import {attribute} as target\n"


def _dual(name: str, compiled: str, marker: str) -> str:
    """CAL001 shape: ``compiled`` (an expression of ``f``) called on a dual tensor in a region."""
    return (
        HEAD
        + _imported(name)
        + f"\n\ndef f(x):\n    return x.sin()\n\n\ng = {compiled}\n\n\n"
        + f"def probe(x, t):\n    with fwAD.dual_level():\n        return g(fwAD.make_dual(x, t)){marker}\n"
    )


def _amp(name: str, setup: str, forward: str, after: str, marker: str) -> str:
    """CAL002 shape: a compiled module's forward under bf16 autocast, ``after`` runs its backward."""
    return (
        HEAD
        + _imported(name)
        + "\n\n"
        + NET
        + "def step(x, params):\n"
        + "".join(f"    {line}\n" for line in setup.splitlines())
        + "    with torch.autocast('cpu', dtype=torch.bfloat16):\n"
        + f"        {forward}\n"
        + f"    {after}{marker}\n"
    )


_CAL001 = "  # expect: CAL001"
_CAL002 = "  # expect: CAL002"
_OK = "  # ok"

#: effect -> (name -> the case with the finding, the near-miss). Every effect of the torch rows.
CASES: dict[Effect, Callable[[str], tuple[str, str]]] = {
    Effect.COMPILE: lambda n: (_dual(n, "target(f)", _CAL001), _dual(n, "target(f, backend='eager')", _OK)),
    Effect.COMPILER: lambda n: (_dual(n, "target('inductor')(f)", _CAL001), _dual(n, "target('eager')(f)", _OK)),
    Effect.PARTIAL: lambda n: (
        _dual(n, "target(torch.compile, backend='inductor')(f)", _CAL001),
        _dual(n, "target(torch.compile, backend='eager')(f)", _OK),
    ),
    Effect.DISABLE: lambda n: (
        HEAD + _imported(n) + "\n\ng = torch.compile(torch.sin)\n\n\ndef outer(x):\n    return g(x)\n\n\n"
        "h = target(outer)\n\n\ndef probe(x, t):\n    with fwAD.dual_level():\n"
        "        return h(fwAD.make_dual(x, t))  # expect: CAL001 (the compiled callee still runs compiled)\n",
        _dual(n, "target(f)", "  # ok: runs eagerly").replace("g = target(f)", "g = target(f)\ng = target()(g)"),
    ),
    Effect.DUAL_LEVEL: lambda n: (
        HEAD + _imported(n) + "\n\ng = torch.compile(torch.sin)\n\n\n"
        "def probe(x, t):\n    with target():\n        return g(fwAD.make_dual(x, t))" + _CAL001 + "\n",
        HEAD + _imported(n) + "\n\ng = torch.compile(torch.sin)\n\n\n"
        "def probe(x, t):\n    with target():\n        y = fwAD.make_dual(x, t)\n    return g(x)" + _OK + "\n",
    ),
    Effect.MAKE_DUAL: lambda n: (
        HEAD + _imported(n) + "\n\ng = torch.compile(torch.sin)\n\n\n"
        "def probe(x, t):\n    with fwAD.dual_level():\n        return g(target(x, t))" + _CAL001 + "\n",
        HEAD + _imported(n) + "\n\ng = torch.compile(torch.sin)\n\n\n"
        "def probe(x, t):\n    with fwAD.dual_level():\n        return g(torch.ones(3))" + _OK + "\n",
    ),
    Effect.UNPACK_DUAL: lambda n: (
        HEAD + _imported(n) + "\n\ng = torch.compile(torch.sin)\n\n\n"
        "def probe(x, t):\n    with fwAD.dual_level():\n        return g(fwAD.make_dual(x, t))" + _CAL001 + "\n",
        HEAD + _imported(n) + "\n\ng = torch.compile(torch.sin)\n\n\n"
        "def probe(x, t):\n    with fwAD.dual_level():\n        return g(target(fwAD.make_dual(x, t)).primal)"
        + _OK
        + "\n",
    ),
    Effect.NULL_CONTEXT: lambda n: (
        _amp(n, "model = torch.compile(Net())", "loss = model(x).sum()", "loss.backward()", _CAL002),
        _amp(
            n,
            "model = torch.compile(Net())",
            "loss = model(x).sum()\n        with target():\n            loss.backward()",
            "pass",
            _OK,
        ),
    ),
    Effect.EXIT_STACK: lambda n: (
        _amp(
            n,
            "model = torch.compile(Net())\nstack = target()",
            "stack.enter_context(torch.autocast('cpu', dtype=torch.bfloat16))\n        loss = model(x).sum()",
            "loss.backward()",
            _CAL002,
        ),
        _amp(
            n,
            "model = torch.compile(Net())\nstack = target()",
            "loss = model(x).sum()",
            "stack.enter_context(torch.autocast('cpu', dtype=torch.bfloat16))\n    loss.backward()",
            "  # ok: the stack entered the forward's autocast around the backward",
        ),
    ),
    Effect.COLLECTION: lambda n: (
        _amp(
            n,
            "blocks = target([torch.compile(Net())])",
            "for b in blocks:\n            loss = b(x).sum()",
            "loss.backward()",
            _CAL002,
        ),
        _amp(n, "blocks = target([Net()])", "for b in blocks:\n            loss = b(x).sum()", "loss.backward()", _OK),
    ),
    Effect.SEQUENTIAL: lambda n: (
        _amp(n, "model = target(torch.compile(Net()))", "loss = model(x).sum()", "loss.backward()", _CAL002),
        _amp(n, "model = target(Net())", "loss = model(x).sum()", "loss.backward()", _OK),
    ),
    Effect.GETATTR: lambda n: (
        _amp(
            n,
            "holder = Net()\nholder.net = torch.compile(Net())",
            "loss = target(holder, 'net')(x).sum()",
            "loss.backward()",
            _CAL002,
        ),
        _amp(
            n,
            "holder = Net()\nholder.net = torch.compile(Net())",
            "loss = target(holder, 'l')(x).sum()",
            "loss.backward()",
            _OK,
        ),
    ),
    Effect.SETATTR: lambda n: (
        _amp(
            n,
            "holder = Net()\ntarget(holder, 'net', torch.compile(Net()))",
            "loss = holder.net(x).sum()",
            "loss.backward()",
            _CAL002,
        ),
        _amp(n, "holder = Net()\ntarget(holder, 'net', Net())", "loss = holder.net(x).sum()", "loss.backward()", _OK),
    ),
    Effect.CALL_THROUGH: lambda n: (
        _amp(
            n,
            "block = torch.compile(Net())",
            "loss = target(block, x, use_reentrant=False).sum()",
            "loss.backward()",
            _CAL002,
        ),
        _amp(n, "block = Net()", "loss = target(block, x, use_reentrant=False).sum()", "loss.backward()", _OK),
    ),
    Effect.FUNCTIONAL_CALL: lambda n: (
        HEAD + _imported(n) + "\n\n" + NET + "model = torch.compile(Net())\n\n\n"
        "def probe(x, t):\n    params = {k: fwAD.make_dual(p, t) for k, p in model.named_parameters()}\n"
        "    with fwAD.dual_level():\n        return target(model, params, (torch.ones(2, 4),))" + _CAL001 + "\n",
        HEAD + _imported(n) + "\n\n" + NET + "model = torch.compile(Net())\n\n\n"
        "def probe(x, t):\n    params = dict(model.named_parameters())\n"
        "    with fwAD.dual_level():\n        return target(model, params, (torch.ones(2, 4),))" + _OK + "\n",
    ),
}

#: Tables whose rows have a case per name in another test module (the behaviour they model is tested there).
ELSEWHERE = {
    Effect.WRAPPER: "tests/linking/test_reach.py::test_module_wrapper_rows",
    Effect.SAME_MODULE: "tests/linking/test_reach.py::test_same_module_function_rows",
    Effect.GRAD_MODE: "tests/linking/test_reach.py::test_grad_mode_rows_disable, test_grad_mode_rows_enable",
    Effect.DATACLASS: "tests/linking/test_reach.py::test_dataclass_decorator_rows",
    Effect.EMPTY_CONTAINER: "tests/linking/test_reach.py::test_empty_container_factory_rows",
    Effect.FORWARD_MODE: "tests/linking/test_reach.py::test_forward_mode_function_rows",
    Effect.FRAMEWORK_CLASS: "tests/knowledge/test_frameworks.py",
}

TORCH_NAMES = sorted((name, row.effect) for row in api.TORCH_CALLS for name in row.names)


def _check(code: str, tmp_path) -> None:
    expected, reported = run_case(Case(code), tmp_path)
    assert reported == expected, code


@pytest.mark.parametrize(("name", "effect"), TORCH_NAMES, ids=[name for name, _ in TORCH_NAMES])
def test_torch_call_rows(name, effect, tmp_path):
    finding, near_miss = CASES[effect](name)
    _check(finding, tmp_path / "finding")
    _check(near_miss, tmp_path / "near_miss")


def test_every_effect_has_cases():
    effects = {meaning.effect for meanings in CALLS.values() for meaning in meanings}
    # The launch settings and config field defaults (``knowledge/switches.py``) have a case per row in
    # tests/knowledge/test_switches.py.
    switches = {Effect.SETTINGS, Effect.FIELD_DEFAULT}
    assert (
        effects - {Effect.AUTOCAST, Effect.CONFIG_PATCH, Effect.BACKWARD, Effect.AUTOGRAD_FUNCTIONAL}
        <= set(CASES) | set(ELSEWHERE) | switches
    )
    assert set(ELSEWHERE) <= REACH_EFFECTS
    assert {row.effect for row in api.TORCH_CALLS} <= set(api.CALL_EFFECTS)


_SOURCE = re.compile(r"(torch/[\w/]+\.py|Python [\w.]+|pyproject)")


@pytest.mark.parametrize(
    "row",
    [*api.TORCH_CALLS, *api.AUTOCAST_CONSTRUCTORS, *api.CONFIG_PATCHES, *api.BACKWARD_FUNCTIONS.values()],
    ids=lambda row: sorted(getattr(row, "names", None) or [row.name])[0],
)
def test_every_row_cites_its_source(row):
    assert _SOURCE.search(row.source), row.source


@pytest.mark.parametrize(
    "source",
    [*api.CONFIG_ATTRIBUTES.values(), *api.IN_PLACE_COMPILE_METHODS.values()]
    + [spec.source for spec in api.AUTOGRAD_FUNCTIONAL.values()],
)
def test_every_mapping_row_cites_its_source(source):
    assert _SOURCE.search(source), source


# -- autocast constructors: device, dtype and enabled, by keyword and by position ----------------------

AUTOCAST_NAMES = sorted((name, row) for row in api.AUTOCAST_CONSTRUCTORS for name in row.names)


def _autocast_call(row: api.AutocastConstructor, enabled: bool | None = None, positional: bool = False) -> str:
    """``target(...)`` entering bf16 autocast on cpu for ``row``'s signature, ``enabled`` as asked."""
    arguments: list[str | None] = [None] * 3
    keywords = {}
    if row.device_argument is not None:
        keyword, position = row.device_argument
        arguments[position] = "'cpu'"
    keyword, position = row.dtype_argument
    if positional:
        arguments[position] = "torch.bfloat16"
    else:
        keywords[keyword] = "torch.bfloat16"
    if enabled is not None:
        keyword, position = row.enabled_argument
        if positional and position is not None:
            arguments[position] = repr(enabled)
        else:
            keywords[keyword] = repr(enabled)
    if positional and row.enabled_argument[1] is not None and arguments[row.enabled_argument[1]] is None:
        arguments[row.enabled_argument[1]] = "True"  # positions before ``dtype`` must be filled
    used = [a for a in arguments if a is not None]
    assert arguments[: len(used)] == used, arguments
    return "target(" + ", ".join([*used, *(f"{k}={v}" for k, v in keywords.items())]) + ")"


def _autocast_case(name: str, call: str, marker: str) -> str:
    return (
        HEAD
        + _imported(name)
        + "\n\n"
        + NET
        + f"def step(x):\n    model = torch.compile(Net())\n    with {call}:\n        loss = model(x).sum()\n"
        + f"    loss.backward(){marker}\n"
    )


@pytest.mark.parametrize(("name", "row"), AUTOCAST_NAMES, ids=[name for name, _ in AUTOCAST_NAMES])
@pytest.mark.parametrize("positional", [False, True], ids=["keywords", "positions"])
def test_autocast_rows(name, row, positional, tmp_path):
    _check(_autocast_case(name, _autocast_call(row, positional=positional), _CAL002), tmp_path / "on")
    _check(_autocast_case(name, _autocast_call(row, True, positional), _CAL002), tmp_path / "enabled")
    _check(_autocast_case(name, _autocast_call(row, False, positional), _OK), tmp_path / "disabled")


@pytest.mark.parametrize(("name", "row"), AUTOCAST_NAMES, ids=[name for name, _ in AUTOCAST_NAMES])
def test_autocast_rows_as_decorators(name, row, tmp_path):
    code = (
        HEAD
        + _imported(name)
        + "\n\n"
        + NET
        + "model = torch.compile(Net())\n\n\n"
        + f"@{_autocast_call(row)}\ndef forward(x):\n    return model(x).sum()\n\n\n"
        + f"def step(x):\n    forward(x).backward(){_CAL002}\n"
    )
    _check(code, tmp_path)


# -- config patches and config attributes ----------------------------------------------------------------

CONFIG_NAMES = sorted((name, row) for row in api.CONFIG_PATCHES for name in row.names)


@pytest.mark.parametrize(("name", "row"), CONFIG_NAMES, ids=[name for name, _ in CONFIG_NAMES])
@pytest.mark.parametrize("form", ["keyword", "pair", "dict"])
def test_config_patch_rows(name, row, form, tmp_path):
    def patch(value: str) -> str:
        return {"keyword": f"target({row.key}={value})", "pair": f"target({row.key!r}, {value})"}.get(
            form, f"target({{{row.key!r}: {value}}})"
        )

    def case(value: str, marker: str) -> str:
        return (
            HEAD
            + _imported(name)
            + "\n\n"
            + NET
            + f"def step(x):\n    model = torch.compile(Net())\n    with {patch(value)}:\n"
            + "        with torch.autocast('cpu', dtype=torch.bfloat16):\n            loss = model(x).sum()\n"
            + f"    loss.backward(){marker}\n"
        )

    _check(case("'same_as_forward'", _CAL002), tmp_path / "default")
    _check(case("'off'", _OK), tmp_path / "off")
    invalid = case("'of'", "").replace(
        f"    with {patch(repr('of'))}:", f"    with {patch(repr('of'))}:  # expect: CAL003"
    )
    _check(invalid, tmp_path / "invalid")


@pytest.mark.parametrize(("module", "attribute"), sorted(api.CONFIG_ATTRIBUTES))
def test_config_attribute_rows(module, attribute, tmp_path):
    def case(value: str, marker: str, written: str = "") -> str:
        return (
            HEAD
            + f"import {module} as settings\n\n\n"
            + NET
            + f"settings.{attribute} = {value}{written}\n\n\n"
            + "def step(x):\n    model = torch.compile(Net())\n"
            + "    with torch.autocast('cpu', dtype=torch.bfloat16):\n        loss = model(x).sum()\n"
            + f"    loss.backward(){marker}\n"
        )

    _check(case("'same_as_forward'", _CAL002), tmp_path / "default")
    _check(case("'off'", _OK), tmp_path / "off")
    _check(case("{'device_type': 'cpu'}", "", "  # expect: CAL003"), tmp_path / "invalid")


# -- in-place compile methods ------------------------------------------------------------------------------


@pytest.mark.parametrize("method", sorted(api.IN_PLACE_COMPILE_METHODS))
def test_in_place_compile_rows(method, tmp_path):
    def case(build: str, marker: str) -> str:
        return (
            HEAD
            + "\n\n"
            + NET
            + f"def step(x):\n    model = {build}\n    model.{method}()\n"
            + "    with torch.autocast('cpu', dtype=torch.bfloat16):\n        loss = model(x).sum()\n"
            + f"    loss.backward(){marker}\n"
        )

    _check(case("Net()", _CAL002), tmp_path / "project-module")
    _check(case("nn.Linear(4, 4)", "  # ok: dynamo skips torch.nn's own frames"), tmp_path / "built-in")


# -- backward functions and torch.autograd.functional ------------------------------------------------------


@pytest.mark.parametrize("name", sorted(api.BACKWARD_FUNCTIONS))
def test_backward_function_rows(name, tmp_path):
    row = api.BACKWARD_FUNCTIONS[name]
    receiver = "loss" if row.receiver == "tensors" else "loss, params"

    # Spelled in full: an alias of a backward function is not an anchor (``summary/outline.py``).
    def case(call: str, marker: str, inside: bool = False) -> str:
        body = f"        {name}({call}){marker}\n" if inside else f"    {name}({call}){marker}\n"
        return (
            HEAD
            + "\n\n"
            + NET
            + "def step(x, params):\n    model = torch.compile(Net())\n"
            + "    with torch.autocast('cpu', dtype=torch.bfloat16):\n        loss = model(x).sum()\n"
            + body
        )

    _check(case(receiver, _CAL002), tmp_path / "outside")
    _check(
        case(f"{row.receiver}=loss" + (", inputs=params" if row.receiver == "outputs" else ""), _CAL002),
        tmp_path / "keyword",
    )
    _check(case(receiver, "  # ok: the same autocast", inside=True), tmp_path / "inside")
    positional = ", ".join(
        ["loss", *(["params"] if row.receiver == "outputs" else []), *["None"] * 10][: row.create_graph_position]
        + ["True"]
    )
    _check(case(positional, _CAL002 + ", CAL004"), tmp_path / "create-graph")


@pytest.mark.parametrize("name", sorted(api.AUTOGRAD_FUNCTIONAL))
def test_autograd_functional_rows(name, tmp_path):
    spec = api.AUTOGRAD_FUNCTIONAL[name]

    def case(extra: str, marker: str) -> str:
        return (
            HEAD
            + _imported(name)
            + "\n\nf = torch.compile(torch.sin)\n\n\n"
            + f"def probe(x, v):\n    return target(f, x{extra}){marker}\n"
        )

    if spec.always_second_order:
        _check(case(", v" if spec.create_graph_position == 3 else "", "  # expect: CAL004"), tmp_path / "finding")
        _check(
            case(", v" if spec.create_graph_position == 3 else "", "  # ok").replace(
                "torch.compile(torch.sin)", "torch.sin"
            ),
            tmp_path / "eager",
        )
    else:
        positions = ", None" * (spec.create_graph_position - 2)
        _check(case(f"{positions}, True", "  # expect: CAL004"), tmp_path / "create-graph")
        _check(
            case(f"{positions}, create_graph=False" if positions else ", create_graph=False", "  # ok"),
            tmp_path / "first-order",
        )


def _dotted_names(value: object, seen: set[int]) -> set[str]:
    """Every dotted name in a table: its keys, values, tuples and rows' fields, at any depth."""
    if id(value) in seen:
        return set()
    seen.add(id(value))
    if isinstance(value, str):
        return {value} if re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+", value) else set()
    if isinstance(value, dict):
        return set().union(*(_dotted_names(v, seen) for item in value.items() for v in item))
    if isinstance(value, (list, tuple, set, frozenset)):
        return set().union(*(_dotted_names(v, seen) for v in value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return set().union(*(_dotted_names(getattr(value, f.name), seen) for f in dataclasses.fields(value)))
    return set()


def test_every_name_a_table_matches_is_kept_whole_by_attribute_access():
    """Attribute access on external values keeps a name whole only while it may become one of
    ``MATCHED_NAMES`` (``linking.values.ExternalNames``): a table whose names were missing there
    would stop matching what code reaches through attributes (``torch.nn.parallel.X``)."""
    tables = [value for module in (api, fw, switches) for name, value in vars(module).items() if name.isupper()]
    in_tables = set().union(*(_dotted_names(table, set()) for table in tables))
    # Source citations and framework kinds are text, not names a value is compared with.
    cited = {name for name in in_tables if name.endswith(".py") or "/" in name}
    kinds = {row.kind for row in fw.FRAMEWORK_CLASSES} | {row.kind for row in fw.FRAMEWORK_METHODS}
    kinds |= {kind for kind, _ in switches.SETTINGS_OBJECTS.values()}
    assert in_tables - cited - kinds <= MATCHED_NAMES


def test_a_checkpoint_in_a_forward_ad_region_is_not_followed(tmp_path):
    """What a compiled function does with tangents inside ``torch.utils.checkpoint`` is not among
    the recorded facts (a reentrant checkpoint raises even eagerly): no CAL001 claim is made there."""
    code = (
        HEAD + "import torch.utils.checkpoint\n\n\n" + NET + "model = torch.compile(Net())\n\n\n"
        "def probe(x, t):\n    with fwAD.dual_level():\n"
        "        return torch.utils.checkpoint.checkpoint(model, fwAD.make_dual(x, t), use_reentrant=False)"
        + _OK
        + "\n"
    )
    _check(code, tmp_path)


def test_container_members_cover_the_installed_torch():
    """An attribute of an ``nn.ModuleDict`` is one of its items unless the container has it itself
    (``CONTAINER_MEMBERS``): a method a newer torch adds to the containers must be added there, or
    a call of it would be taken for a call of the container's items."""
    from torch import nn

    torch_containers = (nn.ModuleDict, nn.ModuleList, nn.Sequential, nn.ParameterDict, nn.ParameterList)
    own = {name for cls in (*torch_containers, dict, list, tuple, set) for name in dir(cls) if not name.startswith("_")}
    own |= {name for name in vars(nn.ModuleDict()) if not name.startswith("_")}
    assert own <= containers.CONTAINER_MEMBERS, sorted(own - containers.CONTAINER_MEMBERS)


@pytest.mark.parametrize("name", sorted(api.CONTEXT_MANAGER_DECORATORS))
def test_context_manager_decorator_rows(name, tmp_path):
    """A generator made a context manager: the caller's ``with`` body runs at its ``yield``, under
    the autocast the generator entered there; one whose ``yield`` follows its autocast runs without."""
    module, decorator = name.rsplit(".", 1)
    asynchronous = decorator.startswith("async")
    define, enter = ("async def", "async with") if asynchronous else ("def", "with")
    code = (
        HEAD
        + f"from {module} import {decorator}\n\nmodel = torch.compile(nn.Linear(4, 4))\n\n\n"
        + f"@{decorator}\n{define} amp():\n    with torch.autocast('cpu', dtype=torch.bfloat16):\n        yield\n\n\n"
        + f"@{decorator}\n{define} after():\n    with torch.autocast('cpu', dtype=torch.bfloat16):\n        pass\n    yield\n\n\n"
        + f"{define} step(x):\n    {enter} amp():\n        loss = model(x).sum()\n    loss.backward()  # expect: CAL002\n\n\n"
        + f"{define} other(x):\n    {enter} after():\n        loss = model(x).sum()\n    loss.backward()  # ok: no autocast at the yield\n"
    )
    _check(code, tmp_path)
