"""Issue 11 ("Reach"): the shapes real training code hides compiled regions in, one case per row of
the ``torch_api`` tables they are read from, plus the path-sensitivity, registry and numeric-effect
behaviour. Lines that must be reported carry ``# expect: CODE``; nothing else may be reported.
"""

from __future__ import annotations

import copy
import gc
import weakref
from collections import Counter
from pathlib import Path

import pytest

from compile_ad_lint import Config, Location
from compile_ad_lint.api import Analyzer
from compile_ad_lint.cli import main
from compile_ad_lint.core.locations import StatementSite
from compile_ad_lint.knowledge import torch_api as api
from compile_ad_lint.knowledge.calls import MATCHED_NAMES
from compile_ad_lint.linking.arguments import argument_data
from compile_ad_lint.linking.interpreter import Interpreter
from compile_ad_lint.linking.reach import Reach
from compile_ad_lint.linking.values import (
    DEFAULT_CONFIG,
    MAX_NESTING,
    NO_AUTOCAST,
    ClassVal,
    Collection,
    Compiled,
    CompiledOutput,
    ConstVal,
    Data,
    External,
    ExternalNames,
    FunctionVal,
    Instance,
    Wrapper,
    compiled_output,
    derived,
    held_modules,
    in_stable_order,
    normalize,
    stable_text,
)
from compile_ad_lint.rules import Case
from compile_ad_lint.testing import expected_in, reported, run_case, write_case

NET = (
    "import torch\nfrom torch import nn\n\n"
    "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.l = nn.Linear(4, 4)\n\n"
    "    def forward(self, x):\n        return self.l(x)\n\n\n"
)
AMP = "    with torch.autocast('cpu', dtype=torch.bfloat16):\n        loss = model(x).sum()\n"
FORWARD_AD = "import torch\nfrom torch.autograd import forward_ad as fwAD\n\n\n"
#: A compiled call on dual tensors after the code under test: the analysis still reports it.
STILL_REPORTED = (
    "model = torch.compile(torch.nn.Linear(4, 4))\nwith fwAD.dual_level():\n"
    "    model(fwAD.make_dual(torch.randn(4), torch.randn(4)))  # expect: CAL001\n"
)


def _step(setup: str, marker: str = "  # expect: CAL002") -> Case:
    return Case(
        NET
        + "def step(x):\n"
        + "".join(f"    {line}\n" for line in setup.splitlines())
        + AMP
        + f"    loss.backward(){marker}\n"
    )


def _check(case: Case, tmp_path) -> None:
    expected, reported = run_case(case, tmp_path)
    assert reported == expected


# -- rows of the torch_api tables ------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(api.WRAPPER_BY_NAME))
def test_module_wrapper_rows(name, tmp_path):
    module, cls = name.rsplit(".", 1)
    case = _step(f"from {module} import {cls} as Wrapper\nmodel = Wrapper(torch.compile(Net()))")
    _check(case, tmp_path)


@pytest.mark.parametrize("name", sorted(api.WRAPPER_BY_NAME))
def test_module_wrapper_rows_module_attribute(name, tmp_path):
    module, cls = name.rsplit(".", 1)
    case = _step(
        f"from {module} import {cls} as Wrapper\nwrapped = Wrapper(torch.compile(Net()))\nmodel = wrapped.module"
    )
    _check(case, tmp_path)


def test_wrapper_of_eager_module_is_eager(tmp_path):
    _check(
        _step("from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = DDP(Net().to('cuda'))", "  # ok"),
        tmp_path,
    )


def test_compiling_the_wrapper(tmp_path):
    _check(
        _step("from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = torch.compile(DDP(Net()))"),
        tmp_path,
    )


@pytest.mark.parametrize("name", sorted(api.SAME_MODULE_FUNCTIONS))
def test_same_module_function_rows(name, tmp_path):
    module, function = name.rsplit(".", 1)
    _check(_step(f"from {module} import {function} as same\nmodel = same(torch.compile(Net()))"), tmp_path)


_METHOD_ARGUMENTS = {"to": "'cuda'", "type": "torch.float32", "apply": "print", "to_empty": "device='cpu'"}


@pytest.mark.parametrize("method", sorted(api.MODULE_RETURNING_METHODS))
def test_module_returning_method_rows(method, tmp_path):
    _check(_step(f"model = torch.compile(Net()).{method}({_METHOD_ARGUMENTS.get(method, '')})"), tmp_path)


def test_module_method_overridden_by_the_project(tmp_path):
    code = (
        NET
        + "class Odd(Net):\n    def cuda(self):\n        return Net()\n\n\ndef step(x):\n    model = torch.compile(Odd()).cuda()\n"
        + AMP
    )
    _check(Case(code + "    loss.backward()  # ok: Odd.cuda returns an eager module\n"), tmp_path)


def test_orig_mod_is_eager(tmp_path):
    _check(_step("model = torch.compile(Net())._orig_mod", "  # ok"), tmp_path)


@pytest.mark.parametrize("method", sorted(api.MODULE_CHILDREN_METHODS))
def test_children_method_rows(method, tmp_path):
    loop = "for name, child in" if method.startswith("named") else "for child in"
    code = (
        NET
        + "class Pair(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.a = Net()\n        self.b = Net()\n\n"
        "    def forward(self, x):\n        return self.b(self.a(x))\n\n\n"
        f"def step(x):\n    model = Pair()\n    {loop} model.{method}():\n        child.compile()\n"
        + AMP
        + "    loss.backward()  # expect: CAL002\n"
    )
    _check(Case(code), tmp_path)


@pytest.mark.parametrize("method", sorted(api.MODULE_PARAMETER_METHODS))
def test_parameter_method_rows_freeze(method, tmp_path):
    target = "_, p" if method.startswith("named") else "p"
    _check(
        _step(
            f"model = torch.compile(Net())\nfor {target} in model.{method}():\n    p.requires_grad = False",
            "  # ok: frozen",
        ),
        tmp_path,
    )


@pytest.mark.parametrize("method", sorted(api.MODULE_REGISTRATION_METHODS))
def test_registration_method_rows(method, tmp_path):
    code = (
        NET
        + "class Holder(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.enc = Net()\n\n"
        "    def forward(self, x):\n        return self.enc(x)\n\n\n"
        f"def step(x):\n    model = Holder()\n    model.{method}('enc', torch.compile(model.enc))\n"
        + AMP
        + "    loss.backward()  # expect: CAL002\n"
    )
    _check(Case(code), tmp_path)


def test_registration_into_module_dict(tmp_path):
    code = (
        NET
        + "class Stack(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.layers = nn.ModuleDict()\n"
        "        for i in range(2):\n            self.layers[str(i)] = Net()\n\n"
        "    def forward(self, x):\n        for layer in self.layers.values():\n            x = layer(x)\n        return x\n\n\n"
        "def step(x):\n    model = Stack()\n    for layer_id, block in model.layers.named_children():\n"
        "        model.layers.register_module(layer_id, torch.compile(block))\n"
        + AMP
        + "    loss.backward()  # expect: CAL002\n"
    )
    _check(Case(code), tmp_path)


@pytest.mark.parametrize("method", sorted(api.CONTAINER_ELEMENT_METHODS - {"__getitem__", "popitem"}))
def test_container_element_method_rows(method, tmp_path):
    code = (
        NET
        + "MODELS = {}\n\n\ndef register(name, model):\n    MODELS[name] = model\n\n\nregister('net', torch.compile(Net()))\n\n\n"
    )
    code += f"def step(x, name):\n    model = MODELS.{method}(name)\n" + AMP + "    loss.backward()  # expect: CAL002\n"
    _check(Case(code), tmp_path)


@pytest.mark.parametrize("factory", sorted(api.EMPTY_CONTAINER_FACTORIES))
def test_empty_container_factory_rows(factory, tmp_path):
    module, name = factory.rsplit(".", 1)
    imports = "" if module == "builtins" else f"from {module} import {name}\n"
    code = (
        NET
        + imports
        + f"REGISTRY = {name}()\n\n\ndef add(name, fn):\n    REGISTRY[name] = fn\n\n\nadd('net', torch.compile(Net()))\n\n\n"
    )
    code += "def step(x, name):\n    model = REGISTRY[name]\n" + AMP + "    loss.backward()  # expect: CAL002\n"
    _check(Case(code), tmp_path)


@pytest.mark.parametrize("name", sorted(n for n, mode in api.GRAD_MODES.items() if mode is not True))
def test_grad_mode_rows_disable(name, tmp_path):
    module, function = name.rsplit(".", 1)
    argument = "False" if function == "set_grad_enabled" else ""
    code = NET + f"from {module} import {function} as mode\n\nmodel = torch.compile(Net())\n\n\ndef step(x, y):\n"
    code += f"    with torch.autocast('cpu', dtype=torch.bfloat16):\n        with mode({argument}):\n            target = model(x)\n"
    code += "        loss = (y - target).pow(2).sum()\n    loss.backward()  # ok: no graph through the compiled call\n"
    _check(Case(code), tmp_path)


@pytest.mark.parametrize("name", sorted(n for n, mode in api.GRAD_MODES.items() if mode is True))
def test_grad_mode_rows_enable(name, tmp_path):
    module, function = name.rsplit(".", 1)
    code = NET + f"from {module} import {function} as mode\n\nmodel = torch.compile(Net())\n\n\ndef step(x):\n"
    code += "    with torch.no_grad(), mode():\n        with torch.autocast('cpu', dtype=torch.bfloat16):\n            loss = model(x).sum()\n"
    code += "    loss.backward()  # expect: CAL002\n"
    _check(Case(code), tmp_path)


def test_inference_mode_false_keeps_grad(tmp_path):
    code = (
        NET
        + "model = torch.compile(Net())\n\n\ndef step(x):\n    with torch.inference_mode(False):\n"
        + AMP.replace("    ", "        ", 1).replace("\n        loss", "\n            loss")
    )
    code += "    loss.backward()  # expect: CAL002\n"
    _check(Case(code), tmp_path)


def test_no_grad_decorator_without_parentheses(tmp_path):
    code = (
        NET
        + "model = torch.compile(Net())\n\n\n@torch.no_grad\ndef target(x):\n    return model(x)\n\n\ndef step(x, y):\n"
    )
    code += "    with torch.autocast('cpu', dtype=torch.bfloat16):\n        loss = (y - target(x)).pow(2).sum()\n    loss.backward()  # ok\n"
    _check(Case(code), tmp_path)


@pytest.mark.parametrize("name", sorted(api.FORWARD_MODE_FUNCTIONS))
def test_forward_mode_function_rows(name, tmp_path):
    module, function = name.rsplit(".", 1)
    code = f"import torch\nfrom {module} import {function}\n\nf = torch.compile(lambda x: x.sin())\n\n\ndef jac(x):\n"
    code += f"    a = {function}(f, x, strategy='forward-mode', vectorize=True)  # expect: CAL001\n"
    code += f"    b = {function}(f, x)  # ok: reverse mode\n    c = {function}(f, x, strategy='forward-mode')  # ok: raises at once\n    return a, b, c\n"
    _check(Case(code), tmp_path)


@pytest.mark.parametrize("decorator", sorted(api.DATACLASS_DECORATORS))
def test_dataclass_decorator_rows(decorator, tmp_path):
    module, name = decorator.rsplit(".", 1)
    code = (
        NET + f"from {module} import {name}\n\n\n@{name}\nclass Spec:\n    model_fn: object\n    name: str = 'x'\n\n\n"
    )
    code += (
        "def build():\n    return torch.compile(Net())\n\n\nSPEC = Spec(model_fn=build)\n\n\ndef step(x):\n    model = SPEC.model_fn()\n"
        + AMP
    )
    _check(Case(code + "    loss.backward()  # expect: CAL002\n"), tmp_path)


@pytest.mark.parametrize("base", sorted(api.KEYWORD_FIELD_BASES))
def test_keyword_field_base_rows(base, tmp_path):
    module, name = base.rsplit(".", 1)
    code = NET + f"from {module} import {name}\n\n\nclass Spec({name}):\n    model: object\n\n\n"
    code += "SPEC = Spec(model=torch.compile(Net()))\n\n\ndef step(x):\n    model = SPEC.model\n" + AMP
    _check(Case(code + "    loss.backward()  # expect: CAL002\n"), tmp_path)


# -- shapes ------------------------------------------------------------------------------------------


def test_two_line_compile_then_ddp(tmp_path):
    _check(
        _step(
            "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = Net()\nmodel = torch.compile(model)\nmodel = DDP(model, device_ids=[0])"
        ),
        tmp_path,
    )


def test_in_place_compile_of_loop_variable(tmp_path):
    code = (
        NET
        + "class Deep(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.blocks = nn.ModuleList([Net() for _ in range(3)])\n\n"
        "    def forward(self, x):\n        for block in self.blocks:\n            x = block(x)\n        return x\n\n\n"
        "def step(x):\n    model = Deep()\n    for block in model.blocks:\n        block.compile()\n"
        + AMP
        + "    loss.backward()  # expect: CAL002\n"
    )
    _check(Case(code), tmp_path)


def test_in_place_compile_of_builtin_elements_compiles_nothing(tmp_path):
    code = (
        NET
        + "class Deep(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])\n\n"
        "    def forward(self, x):\n        for block in self.blocks:\n            x = block(x)\n        return x\n\n\n"
        "def step(x):\n    model = Deep()\n    for block in model.blocks:\n        block.compile()\n"
        + AMP
        + "    loss.backward()  # ok\n"
    )
    _check(Case(code), tmp_path)


def test_factory_tuple_positions(tmp_path):
    code = (
        NET
        + "def build():\n    return torch.compile(Net()), Net()\n\n\ndef step(x):\n    model, other = build()\n"
        + AMP
    )
    code += (
        "    loss.backward()  # expect: CAL002\n\n\ndef other_step(x):\n    other, model = build()\n"
        + AMP
        + "    loss.backward()  # ok: eager element\n"
    )
    _check(Case(code), tmp_path)


def test_forward_replaced_in_init(tmp_path):
    code = NET.replace(
        "        self.l = nn.Linear(4, 4)\n",
        "        self.l = nn.Linear(4, 4)\n        self.forward = torch.compile(self.forward)\n",
    )
    _check(Case(code + "def step(x):\n    model = Net()\n" + AMP + "    loss.backward()  # expect: CAL002\n"), tmp_path)


def test_compile_override_calling_super_is_named(tmp_path):
    code = NET + "class TrainingTask(Net):\n    def compile(self, **kwargs):\n        super().compile(**kwargs)\n\n\n"
    code += (
        "def step(x):\n    model = TrainingTask()\n    model.compile(mode='max-autotune')\n"
        + AMP
        + "    loss.backward()  # expect: CAL002\n"
    )
    write_case(Case(code), tmp_path)
    (finding,) = Analyzer(Config(), use_cache=False, jobs=1).check([str(tmp_path)]).findings
    assert any(
        "TrainingTask.compile()" in r.message and "nn.Module.compile()" not in r.message.split("(")[1]
        for r in finding.related
    )


def test_compile_override_without_super_is_an_ordinary_call(tmp_path):
    code = NET + "class Task(Net):\n    def compile(self):\n        self.ready = True\n\n\n"
    code += (
        "def step(x):\n    model = Task()\n    model.compile()\n"
        + AMP
        + "    loss.backward()  # ok: Task.compile never compiles\n"
    )
    _check(Case(code), tmp_path)


def test_frozen_module_with_input_requiring_grad(tmp_path):
    code = NET + "disc = torch.compile(Net())\ngen = Net()\n\n\ndef step(z):\n    disc.requires_grad_(False)\n"
    code += "    with torch.autocast('cpu', dtype=torch.bfloat16):\n        loss = disc(gen(z)).sum()\n    loss.backward()  # expect: CAL002\n"
    code += "\n\ndef probe(x):\n    disc.requires_grad_(False)\n    with torch.autocast('cpu', dtype=torch.bfloat16):\n        loss = disc(x).sum()\n"
    code += "    loss.backward()  # ok: frozen and its input does not require grad\n"
    _check(Case(code), tmp_path)


def test_flag_path_sensitivity(tmp_path):
    code = (
        NET
        + "model = torch.compile(Net())\n\n\ndef step(x, amp, scaler):\n    with torch.autocast('cuda', enabled=amp):\n        loss = model(x).sum()\n"
    )
    code += "    if amp:\n        scaler.scale(loss).backward()  # expect: CAL002\n    else:\n        loss.backward()  # ok: autocast was off on this path\n"
    _check(Case(code), tmp_path)


def test_flag_set_by_branches(tmp_path):
    # vjepa2: ``mixed_precision = True`` / ``False`` by dtype, then the same flag decides both.
    code = (
        NET
        + "model = torch.compile(Net())\n\n\ndef step(x, dtype, scaler):\n    if dtype == 'bf16':\n        mixed_precision = True\n"
    )
    code += "    else:\n        mixed_precision = False\n    with torch.cuda.amp.autocast(enabled=mixed_precision):\n        loss = model(x).sum()\n"
    code += "    if mixed_precision:\n        scaler.scale(loss).backward()  # expect: CAL002\n    else:\n        loss.backward()  # ok: autocast off on this path\n"
    _check(Case(code), tmp_path)


def test_flag_inside_arm_decides_the_autocast(tmp_path):
    code = (
        NET
        + "model = torch.compile(Net())\n\n\ndef step(x, amp):\n    if not_amp_related():\n        pass\n    if amp:\n        pass\n"
    )
    code += "    else:\n        with torch.autocast('cuda', enabled=amp):\n            loss = model(x).sum()\n        loss.backward()  # ok: amp is false in this arm: autocast off\n"
    _check(Case(code), tmp_path)


def test_registry_filled_by_import_side_effects(tmp_path):
    files = (
        ("pkg/__init__.py", "import pkg.models  # noqa: F401\n"),
        (
            "pkg/registry.py",
            "SPECS = {}\n\n\ndef register(name, fn):\n    SPECS[name] = fn\n\n\ndef get(name):\n    return SPECS[name]\n",
        ),
        (
            "pkg/models.py",
            "import torch\nfrom pkg.registry import register\n\nregister('lin', torch.compile(torch.nn.Linear(4, 4)))\n",
        ),
        (
            "pkg/train.py",
            (
                "import torch\nfrom pkg.registry import get\n\n\ndef step(x, name):\n    model = get(name)\n"
                "    with torch.autocast('cpu', dtype=torch.bfloat16):\n        loss = model(x).sum()\n    loss.backward()  # expect: CAL002\n"
            ),
        ),
    )
    _check(Case("", files=files), tmp_path)


def test_registry_without_registrations_asks_the_callers(tmp_path):
    files = (
        (
            "registry.py",
            "SPECS = {}\n\n\ndef register(name, fn):\n    SPECS[name] = fn\n\n\ndef get(name):\n    return SPECS[name]\n",
        ),
        (
            "trainer.py",
            (
                "import torch\nfrom registry import get\n\n\ndef fit(x, name):\n    model = get(name)\n"
                "    with torch.autocast('cpu', dtype=torch.bfloat16):\n        loss = model(x).sum()\n    loss.backward()  # expect: CAL002\n"
            ),
        ),
        (
            "main.py",
            "import torch\nfrom registry import register\nfrom trainer import fit\n\nregister('lin', torch.compile(torch.nn.Linear(4, 4)))\n\nif __name__ == '__main__':\n    fit(torch.ones(4), 'lin')\n",
        ),
    )
    _check(Case("", files=files), tmp_path)


# -- numeric effect ------------------------------------------------------------------------------------


def _finding(code: str, tmp_path):
    write_case(Case(code), tmp_path)
    (finding,) = Analyzer(Config(), use_cache=False, jobs=1).check([str(tmp_path)]).findings
    return finding


def test_numeric_effect_likely_with_fp32_island(tmp_path):
    code = (
        "import torch\nfrom torch import nn\n\n\nclass Scorer(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.proj = nn.Linear(4, 4)\n\n"
        "    def forward(self, x):\n        h = self.proj(x)\n        with torch.autocast('cpu', enabled=False):\n            return h.float().exp()\n\n\n"
        "model = torch.compile(Scorer())\n\n\ndef step(x):\n" + AMP + "    loss.backward()  # expect: CAL002\n"
    )
    finding = _finding(code, tmp_path)
    assert finding.facts_dict["numeric_effect"] == "likely"
    assert "can compute different gradients" in finding.full_message and "silently differ" not in finding.full_message
    island = [r for r in finding.related if r.message.startswith("autocast-sensitive code")]
    assert island and island[0].location.line == 12 and "autocast(enabled=False)" in island[0].message


@pytest.mark.parametrize(
    "op",
    [
        "x.softmax(-1)",
        "torch.nn.functional.layer_norm(x, (4,))",
        "x.logsumexp(-1)",
        "torch.nn.functional.mse_loss(x, x)",
        "x.to(torch.float32)",
    ],
)
def test_numeric_effect_likely_ops(op, tmp_path):
    code = f"import torch\n\n\n@torch.compile\ndef region(x):\n    return {op}\n\n\ndef step(x):\n    with torch.autocast('cpu', dtype=torch.bfloat16):\n"
    code += "        loss = region(x).sum()\n    loss.backward()  # expect: CAL002\n"
    assert _finding(code, tmp_path).facts_dict["numeric_effect"] == "likely"


def test_numeric_effect_unknown(tmp_path):
    code = "import torch\n\n\n@torch.compile\ndef region(x):\n    return torch.tanh(x) * 2\n\n\ndef step(x):\n    with torch.autocast('cpu', dtype=torch.bfloat16):\n"
    code += "        loss = region(x).sum()\n    loss.backward()  # expect: CAL002\n"
    finding = _finding(code, tmp_path)
    assert finding.facts_dict["numeric_effect"] == "unknown"
    assert "Numeric effect unknown" in finding.full_message


@pytest.mark.parametrize("module", sorted(api.AUTOCAST_FP32_MODULES))
def test_fp32_module_rows(module, tmp_path):
    code = (
        f"import torch\n\nmodel = torch.compile({module}())\n\n\ndef step(x):\n"
        + AMP
        + "    loss.backward()  # expect: CAL002\n"
    )
    assert _finding(code, tmp_path).facts_dict["numeric_effect"] == "likely"


# -- values that would grow without end --------------------------------------------------------------


def _depth(value: object) -> int:
    """How many collections deep ``value`` is, counted here (not from the values' own bookkeeping)."""
    if not isinstance(value, Collection):
        return 0
    return 1 + max((_depth(v) for part in (value.items, *value.positions) for v in part), default=0)


def _inside_at_any_depth(value: object) -> set:
    if not isinstance(value, Collection):
        return {value}
    return set().union(*(_inside_at_any_depth(v) for part in (value.items, *value.positions) for v in part))


def test_collections_nest_at_most_the_limit_and_keep_what_they_hold():
    first, second = Compiled(None, "inductor", Location.point("a.py", 1), "torch.compile"), ConstVal("x")
    shallow = Collection(frozenset([Collection(frozenset([first]))]))
    assert _depth(shallow) == 2 and shallow == Collection(frozenset([Collection(frozenset([first]))]))
    value = Collection(frozenset([first]))
    for level in range(12):
        value = Collection(frozenset([value, second] if level % 2 else [value]), positions=(frozenset([value]),))
        assert _depth(value) <= MAX_NESTING
        assert {first, second} <= _inside_at_any_depth(value) or level == 0
    # Going down any number of levels still reaches what was put in at the bottom.
    reached, level_values = set(), frozenset([value])
    for _ in range(40):
        level_values = frozenset().union(*(v.elements() for v in level_values if isinstance(v, Collection)))
        reached |= level_values
    assert first in reached


def test_an_attribute_wrapped_again_by_each_construction_stays_shallow(tmp_path, monkeypatch):
    """diffusers' quantizers: ``self.skip = config.skip or []`` then ``self.skip = [self.skip]``.
    Instance attributes accumulate what every construction stored, and each configuration walks the
    constructor again, wrapping all of it once more: collections 31 deep, 23 GB before the run died."""
    configs = [f"class Config{i}:\n    skip = ['layer{i}']\n\n\n" for i in range(6)]
    code = (
        FORWARD_AD + "class Quantizer:\n    def __init__(self, config):\n        self.skip = config.skip or []\n"
        "        if not isinstance(self.skip, list):\n            self.skip = [self.skip]\n\n\n"
        + "".join(configs)
        + "def build(config):\n    return Quantizer(config)\n\n\n"
        + "quantizers = ["
        + ", ".join(f"build(Config{i}())" for i in range(6))
        + "]\n"
        + STILL_REPORTED
    )
    stored: list[frozenset] = []
    original = Interpreter.store_attribute

    def recording(self, cls, name, values):
        stored.append(values)
        return original(self, cls, name, values)

    monkeypatch.setattr(Interpreter, "store_attribute", recording)
    expected, reported = run_case(Case(code), tmp_path)
    assert reported == expected
    assert stored and max(_depth(v) for values in stored for v in values) <= MAX_NESTING


def test_a_compiled_module_nested_deeper_than_the_limit_is_still_reached(tmp_path):
    depth = MAX_NESTING + 2
    loops = "".join("    " * (i + 1) + f"for v{i} in {f'v{i - 1}' if i else 'nested'}:\n" for i in range(depth))
    code = (
        "import torch\nfrom torch.autograd import forward_ad as fwAD\n\n"
        "model = torch.compile(torch.nn.Linear(4, 4))\n"
        f"nested = {'[' * depth}model{']' * depth}\n"
        "with fwAD.dual_level():\n    x = fwAD.make_dual(torch.randn(4), torch.randn(4))\n"
        + loops
        + "    " * (depth + 1)
        + f"v{depth - 1}(x)  # expect: CAL001\n"
    )
    _check(Case(code), tmp_path)


def test_a_wrapping_applied_again_inside_itself_adds_nothing():
    """trl's trainers froze the FSDP module ``prepare`` made of the frozen model, once per
    configuration walked: FSDP around a frozen wrapper around FSDP, 32 deep and growing."""
    model = Compiled(None, "inductor", Location.point("a.py", 1), "torch.compile")
    fsdp_site, freeze_site = Location.point("utils.py", 296), Location.point("trainer.py", 547)
    value: object = model
    for _ in range(20):
        value = Wrapper(frozenset([value]), "FullyShardedDataParallel", fsdp_site)
        value = Wrapper(frozenset([value]), "requires_grad_(False)", freeze_site, frozen=True)
    assert value == Wrapper(
        frozenset([Wrapper(frozenset([model]), "FullyShardedDataParallel", fsdp_site)]),
        "requires_grad_(False)",
        freeze_site,
        frozen=True,
    )


def test_a_forward_replaced_by_a_wrapper_of_the_module_itself_is_followed_once(tmp_path):
    """composer: ``model.forward = ctx(model.forward)`` where ``model`` is a wrapper of the module:
    calling the module ran the replacement, which called the module, which ran the replacement...
    until the frame limit (a CAL900 in every test that builds a Trainer)."""
    code = (
        FORWARD_AD + "class Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.l = torch.nn.Linear(4, 4)\n\n    def forward(self, x):\n        return self.l(x)\n\n\n"
        "def context(fn):\n    return fn\n\n\n"
        "net = Net()\nwrapped = torch.nn.parallel.DistributedDataParallel(net)\n"
        "net.forward = context(wrapped)\n"
        "model = torch.compile(torch.nn.Linear(4, 4))\nwith fwAD.dual_level():\n"
        "    x = fwAD.make_dual(torch.randn(4), torch.randn(4))\n    net(x)\n"
        "    model(x)  # expect: CAL001\n"
    )
    _check(Case(code), tmp_path)


def _count_module_calls(monkeypatch) -> Counter:
    """Calls of project modules (``Instance`` callees) by class and line, while the test runs."""
    calls: Counter = Counter()
    original = Interpreter.call_one

    def counting(self, callee, args, span, frame, func):
        if isinstance(callee, Instance):
            calls[(callee.cls.qualname, span.line)] += 1
        return original(self, callee, args, span, frame, func)

    monkeypatch.setattr(Interpreter, "call_one", counting)
    return calls


def test_modules_that_share_a_replaced_forward_follow_it_once(tmp_path, monkeypatch):
    """composer: every model class's ``forward`` held the same replacements (wrappers of the trainer
    state's model, which held every test model), so calling one model ran a wrapper that called the
    next model, whose replacement called the next...: every order of the models (95,900 module
    calls for 7 classes before; a test file's check did not finish in 5 minutes)."""
    count = 7
    models = "".join(
        f"class Model{i}(torch.nn.Module):\n    def forward(self, x):\n        return x\n\n\n" for i in range(count)
    )
    pick = "def pick(i):\n" + "".join(f"    if i == {i}:\n        return Model{i}()\n" for i in range(count))
    code = (
        FORWARD_AD
        + models
        + pick
        # An index the analysis cannot know: ``pick`` may return any model (a literal would pick one).
        + "\n\nmodel = pick(torch.randint(7, ()).item())\n"
        "wrapped = torch.nn.parallel.DistributedDataParallel(model)\nmodel.forward = wrapped\n"
        "compiled = torch.compile(torch.nn.Linear(4, 4))\nwith fwAD.dual_level():\n"
        "    x = fwAD.make_dual(torch.randn(4), torch.randn(4))\n    model(x)\n"
        "    compiled(x)  # expect: CAL001\n"
    )
    calls = _count_module_calls(monkeypatch)
    _check(Case(code), tmp_path)
    # Each model is called at the call site, then once more inside the replacement (its own forward).
    assert set(calls.values()) == {2} and len(calls) == count


def test_a_replaced_forward_that_compiles_is_still_followed_inside_another_one(tmp_path):
    """Replacements already running are not followed again, but new ones are: a compiled forward
    replacing one module's, reached through another module's replacement, is still reported."""
    code = (
        FORWARD_AD + "class Inner(torch.nn.Module):\n    def forward(self, x):\n        return x\n\n\n"
        "class Outer(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.inner = Inner()\n\n    def forward(self, x):\n        return self.inner(x)\n\n\n"
        "outer = Outer()\nouter.inner.forward = torch.compile(outer.inner.forward)\n"
        "outer.forward = torch.nn.parallel.DistributedDataParallel(outer.inner)\n"
        "with fwAD.dual_level():\n"
        "    outer(fwAD.make_dual(torch.randn(4), torch.randn(4)))  # expect: CAL001\n"
    )
    _check(Case(code), tmp_path)


def test_a_call_reaches_each_callee_once_through_nested_wrappers(tmp_path, monkeypatch):
    """A model that may be wrapped by DDP, then FSDP, then frozen is each of those and the wrappers
    hold each other: calling it reached the module once per path through the wrappers (8 here;
    composer's trainer called one tokenizer 65,000 times from one line)."""
    code = (
        "import sys\n\nimport torch\nfrom torch.autograd import forward_ad as fwAD\n"
        "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\n\n\n"
        "class Net(torch.nn.Module):\n    def forward(self, x):\n        return x\n\n\n"
        "def prepare(model, ddp, fsdp, frozen):\n    if ddp:\n        model = DDP(model)\n"
        "    if fsdp:\n        model = FSDP(model)\n    if frozen:\n        model = model.requires_grad_(False)\n"
        "    return model\n\n\n"
        "def step(model, x):\n    return model(x)\n\n\n"
        "flag = len(sys.argv) > 1\nmodel = prepare(Net(), flag, flag, flag)\n"
        "compiled = torch.compile(torch.nn.Linear(4, 4))\nwith fwAD.dual_level():\n"
        "    x = fwAD.make_dual(torch.randn(4), torch.randn(4))\n    step(model, x)\n"
        "    compiled(x)  # expect: CAL001\n"
    )
    calls = _count_module_calls(monkeypatch)
    _check(Case(code), tmp_path)
    assert dict(calls) == {("Net", code.splitlines().index("    return model(x)") + 1): 1}


def test_attribute_chains_of_external_values_stay_short(tmp_path, monkeypatch):
    """composer's trainer state stored attributes of what its attributes held; each walk run again
    named one more segment (``GradScaler._computed.batch_size.epoch.value``...): 10,945 names 19
    segments deep here before."""
    code = (
        FORWARD_AD + "class Clock:\n    def __init__(self):\n        self.now = torch.__version__\n\n"
        "    def tick(self):\n        self.now = self.now.batch\n\n"
        "    def tock(self):\n        self.now = self.now.epoch\n\n\n"
        "clock = Clock()\n" + "clock.tick()\nclock.tock()\n" * 8 + STILL_REPORTED
    )
    names: set[str] = set()
    original = Interpreter.store_attribute

    def recording(self, cls, name, values):
        names.update(v.name for v in values if isinstance(v, External))
        return original(self, cls, name, values)

    monkeypatch.setattr(Interpreter, "store_attribute", recording)
    _check(Case(code), tmp_path)
    assert names == {"torch.__version__", "torch.__version__.batch", "torch.__version__.epoch"}


def test_external_names_stay_whole_while_a_table_may_match_them():
    names = ExternalNames(MATCHED_NAMES | {"mylib.helpers.compile_model"})
    chain = ["torch", "nn", "parallel", "distributed", "DistributedDataParallel"]
    name = chain[0]
    for part in chain[1:]:
        name = names.attribute(name, part)
    assert name == "torch.nn.parallel.distributed.DistributedDataParallel"
    assert names.attribute(names.attribute("mylib", "helpers"), "compile_model") == "mylib.helpers.compile_model"
    # Past the first segment no table knows, only the last one is kept: root, start and last stay.
    deep = names.attribute(names.attribute(names.attribute("torch", "nn"), "LayerNorm"), "weight")
    assert deep == "torch.nn.LayerNorm.weight"
    assert names.attribute(deep, "data") == "torch.nn.LayerNorm.weight.data"
    assert names.attribute("torch.nn.LayerNorm.weight.data", "bfloat16") == "torch.nn.LayerNorm.weight.bfloat16"
    assert names.attribute("numpy", "random") == "numpy.random"
    assert names.attribute("numpy.random", "Generator") == "numpy.Generator"


def test_equal_compiled_outputs_are_one_object_while_alive():
    """Walks of other analyses make equal outputs; kept as one object they compare by identity
    (data's origins are compared and merged all the time); one nothing holds any more is dropped."""
    site, other = Location.point("a.py", 3), Location.point("a.py", 4)
    compiled = Compiled(None, "inductor", site, "torch.compile")
    first = compiled_output(site, compiled, NO_AUTOCAST, DEFAULT_CONFIG, StatementSite((3, 3)))
    again = compiled_output(Location.point("a.py", 3), compiled, NO_AUTOCAST, DEFAULT_CONFIG, StatementSite((3, 3)))
    assert again is first
    elsewhere = compiled_output(other, compiled, NO_AUTOCAST, DEFAULT_CONFIG, StatementSite((4, 4), (1, 5)))
    assert elsewhere is not first and elsewhere != first
    assert elsewhere == CompiledOutput(other, compiled, NO_AUTOCAST, DEFAULT_CONFIG, StatementSite((4, 4), (1, 5)))
    dropped = weakref.ref(elsewhere)
    del elsewhere
    gc.collect()
    assert dropped() is None  # the table does not keep it alive (a long editor session)


def test_a_kept_hash_stays_out_of_pickles():
    """Worker processes send values back pickled, and string hashes differ between processes: a
    value's kept hash is computed again where it arrives."""
    value = ClassVal(Path("m.py"), "Net")
    hash(value)
    assert "_hash" in value.__dict__
    sent = copy.copy(value)  # the protocol pickling uses (``__getstate__``)
    assert "_hash" not in sent.__dict__
    assert sent == value and hash(sent) == hash(value)


def test_derived_data_is_the_same_through_collections_and_arguments():
    site = Location.point("a.py", 3)
    output = CompiledOutput(site, Compiled(None, "inductor", site, "torch.compile"), None, None, site)
    dual, graded = Data(dual=True), Data(frozenset([output]), requires_grad=True, exact=frozenset([site]))
    nested = Collection(frozenset([Collection(frozenset([dual, ConstVal(1)])), graded]))
    flat = Data(frozenset([output]), True, False, True)
    assert derived([nested]) == derived([dual, graded]) == flat
    assert derived([nested]) is derived([nested])  # kept on the collection
    assert derived([graded]) == Data(frozenset([output]), requires_grad=True)  # no longer the exact output
    many = frozenset([dual, nested, *(ConstVal(i) for i in range(10))])
    assert argument_data(((None, many), ("weight", frozenset([graded])))) == derived([*many, graded]) == flat
    assert argument_data(()) == derived([]) == Data()
    # Large sets have their data remembered by identity: the same answer, and an equal set built
    # apart is derived afresh (not compared with the remembered one value by value).
    large = frozenset([dual, nested, *(ConstVal(i) for i in range(30))])
    first = argument_data(((None, large),))
    assert first == derived(large) == flat
    assert argument_data(((None, large),)) is first
    rebuilt = frozenset(list(large))
    assert rebuilt is not large and argument_data(((None, rebuilt),)) == first
    assert argument_data(((None, large), ("weight", frozenset([graded])), ("bias", frozenset()))) == flat


def test_the_ordering_text_of_values_that_share_their_parts_stays_short():
    """Values share their parts (a wrapper holds a collection that holds the wrapper's module);
    written out wherever they occur, the texts that order callees doubled with each level: one of
    composer's test files died out of memory (12 GB) building them."""
    site = Location.point("trainer.py", 10)
    value: object = Instance(ClassVal(Path("model.py"), "Net"))
    texts = set()
    for level in range(18):
        value = Wrapper(frozenset([value, Collection(frozenset([value]))]), f"Wrapper{level}", site)
        texts.add(stable_text(value))
    assert len(stable_text(value)) <= 10_000  # 44 MB before
    assert len(texts) == 18  # still one text per value
    rebuilt: object = Instance(ClassVal(Path("model.py"), "Net"))
    for level in range(18):
        rebuilt = Wrapper(frozenset([rebuilt, Collection(frozenset([rebuilt]))]), f"Wrapper{level}", site)
    assert stable_text(rebuilt) == stable_text(value)  # the same text for an equal value built again


#: A trainer state whose model is wrapped by DDP and FSDP, maybe, twice over: the wrappers it holds
#: wrap each other and the model (composer's State keeps every wrapping of its model).
WRAPPED_STATE = (
    FORWARD_AD + "import sys\n\nfrom torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
    "from torch.nn.parallel import DistributedDataParallel as DDP\n\n\n"
    "class Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.scale = 2.0\n        self.head = torch.nn.Linear(4, 4)\n\n"
    "    def forward(self, x):\n        return self.head(x) * self.scale\n\n\n"
    "class State:\n    def __init__(self, model):\n        self.model = model\n\n"
    "    def wrap(self, ddp, fsdp):\n        if ddp:\n            self.model = DDP(self.model)\n"
    "        if fsdp:\n            self.model = FSDP(self.model)\n\n\n"
    "def inspect(state):\n    return state.model.scale, list(state.model.children())\n\n\n"
    "state = State(Net())\nflag = len(sys.argv) > 1\nstate.wrap(flag, flag)\nstate.wrap(not flag, flag)\n"
    "inspect(state)\n" + STILL_REPORTED
)


def _per_outermost(monkeypatch, cls: type, outer: str, inner: str, counted) -> list[int]:
    """For each outermost call of ``cls.outer``, how many calls of ``cls.inner`` it made whose
    arguments ``counted`` accepts."""
    counts: list[int] = []
    depth = [0]
    original_outer, original_inner = getattr(cls, outer), getattr(cls, inner)

    def counting_outer(self, *arguments):
        if depth[0] == 0:
            counts.append(0)
        depth[0] += 1
        try:
            return original_outer(self, *arguments)
        finally:
            depth[0] -= 1

    def counting_inner(self, *arguments):
        if depth[0] and counted(*arguments):
            counts[-1] += 1
        return original_inner(self, *arguments)

    monkeypatch.setattr(cls, outer, counting_outer)
    monkeypatch.setattr(cls, inner, counting_inner)
    return counts


def test_an_attribute_through_wrappers_of_wrappers_is_looked_up_once_on_the_model(tmp_path, monkeypatch):
    """Each path through wrappers that hold each other looked the attribute up again: 15 times per
    attribute in composer's tests/models/test_hf_model.py (43 s, now 10 s), 6 here."""
    harvesting = [0]  # the first lookup walks the class's methods, which read ``self.scale`` too
    original_harvest = Interpreter.harvest_instance_attributes

    def harvest(self, klass, instance_cls):
        harvesting[0] += 1
        try:
            return original_harvest(self, klass, instance_cls)
        finally:
            harvesting[0] -= 1

    monkeypatch.setattr(Interpreter, "harvest_instance_attributes", harvest)
    lookups = _per_outermost(
        monkeypatch,
        Interpreter,
        "attribute",
        "attribute_of",
        lambda base, name: name == "scale" and isinstance(base, Instance) and not harvesting[0],
    )
    _check(Case(WRAPPED_STATE), tmp_path)
    assert lookups and max(lookups) == 1


def test_the_children_of_wrappers_of_wrappers_are_read_once_per_module(tmp_path, monkeypatch):
    reads = _per_outermost(monkeypatch, Reach, "submodules", "module_values_of", lambda klass: klass.qualname == "Net")
    _check(Case(WRAPPED_STATE), tmp_path)
    assert reads and max(reads) == 1


def test_what_wrappers_forward_stops_at_what_each_answers_itself():
    site = Location.point("trainer.py", 10)
    model = Instance(ClassVal(Path("model.py"), "Net"))
    ddp = Wrapper(frozenset([model]), "DistributedDataParallel", site)
    frozen = Wrapper(frozenset([ddp, model]), "frozen", site, frozen=True)
    compiled = Compiled(frozen, "inductor", site, "torch.compile")
    outer = Wrapper(frozenset([frozen, ddp, compiled]), "FullyShardedDataParallel", site)
    assert outer.attribute_holders("config") == {model, compiled}  # compiled modules answer themselves
    assert outer.attribute_holders("module") == {outer}  # answered by the wrapper: what it wraps
    assert frozen.attribute_holders("module") == {ddp, model}  # a frozen model's ``module`` is its model's
    assert outer.attribute_holders("forward") == outer.attribute_holders("__call__") == {frozen, model, compiled}
    assert held_modules(outer) == held_modules(compiled) == {model}
    assert held_modules(Compiled(None, "inductor", site, "torch.compile")) == {
        Compiled(None, "inductor", site, "torch.compile")
    }
    assert held_modules(model) == {model}


def test_callees_are_called_in_the_order_of_their_stable_text_small_sets_and_large():
    """A call's callees run in one order in every process; a large set's order is remembered by the
    set's identity, so an equal set built apart is ordered on its own, never given another's order."""
    small = frozenset(ClassVal(Path(f"m{i}.py"), "Model") for i in (3, 1, 2))
    assert list(in_stable_order(small)) == sorted(small, key=stable_text)
    large = frozenset(ClassVal(Path(f"m{i}.py"), "Model") for i in range(40, 0, -1))
    ordered = in_stable_order(large)
    assert list(ordered) == sorted(large, key=stable_text)
    assert in_stable_order(large) is ordered  # remembered
    rebuilt = frozenset(set(large))
    assert rebuilt == large and rebuilt is not large
    assert in_stable_order(rebuilt) is not ordered and list(in_stable_order(rebuilt)) == list(ordered)
    single = frozenset([ClassVal(Path("m.py"), "Model")])
    assert in_stable_order(single) is single


def test_normalize_merges_the_data_into_one_and_keeps_every_other_value_as_it_is():
    site = Location.point("train.py", 3)
    output = CompiledOutput(site, Compiled(None, "inductor", site, "torch.compile"), None, None, site)
    model = Instance(ClassVal(Path("model.py"), "Net"))
    dual, exact = Data(dual=True), Data(origins=frozenset([output]), exact=frozenset([site]))
    others = [External("torch.nn"), model, Collection(frozenset([model]))]
    merged = normalize({*others, dual, exact})
    assert merged == {*others, Data(origins=frozenset([output]), dual=True, exact=frozenset([site]))}
    assert {id(v) for v in merged} >= {id(v) for v in others}  # the same objects, not copies
    assert normalize(frozenset([*others, dual])) == {*others, dual}
    assert normalize([]) == frozenset()


def test_an_attribute_of_an_external_value_is_one_value_however_often_it_is_asked():
    names = ExternalNames(MATCHED_NAMES)
    first = names.attribute_value("torch.nn", "Linear")
    assert first == {External(names.attribute("torch.nn", "Linear"))} == {External("torch.nn.Linear")}
    assert names.attribute_value("torch.nn", "Linear") is first
    assert names.attribute_value("torch.nn", "Conv2d") == {External("torch.nn.Conv2d")}


class _Heap:
    """What ``Reach._kept`` asks of the interpreter: the heap cells' versions and their changes."""

    def __init__(self) -> None:
        self.heap_changes = 0
        self.versions: dict[object, int] = {}
        self.compared = 0
        self.depended: list[object] = []

    def change(self, cell: object) -> None:
        self.versions[cell] = self.versions.get(cell, 0) + 1
        self.heap_changes += 1

    def read(self, cell: object, reads: dict[object, int]) -> None:
        reads.setdefault(cell, self.versions.get(cell, 0))

    def still_valid(self, reads: dict[object, int]) -> bool:
        self.compared += 1
        return all(self.versions.get(cell, 0) == version for cell, version in reads.items())

    def depend_on_reads(self, reads) -> None:
        self.depended.extend(cell for cell, _ in reads)


def test_kept_children_are_compared_only_after_a_cell_changed_and_computed_again_when_one_they_read_did():
    heap = _Heap()
    reach = Reach(heap)  # type: ignore[arg-type]
    store: dict = {}
    computed = []

    def compute(reads):
        computed.append(1)
        heap.read(("modules", "Net"), reads)
        return frozenset([len(computed)])

    assert reach._kept(store, "net", compute)[0] == {1}
    assert reach._kept(store, "net", compute)[0] == {1} and heap.compared == 0  # nothing changed since
    assert heap.depended == [("modules", "Net")]  # the walk in progress depends on what it read
    heap.change(("modules", "Other"))
    assert reach._kept(store, "net", compute)[0] == {1} and heap.compared == 1  # compared: still holds
    assert reach._kept(store, "net", compute)[0] == {1} and heap.compared == 1
    heap.change(("modules", "Net"))
    assert reach._kept(store, "net", compute)[0] == {2}  # what it read changed: computed again

    def compute_while_storing(reads):  # a harvest run by the computation stores what it read
        heap.read(("modules", "Net"), reads)
        heap.change(("modules", "Net"))
        return frozenset(["stale"])

    assert reach._kept(store, "model", compute_while_storing)[0] == {"stale"}
    assert reach._kept(store, "model", compute)[0] == {3}  # the cell changed after it was read


def test_children_read_again_after_a_module_is_stored_see_it(tmp_path):
    """The module-valued attributes of a class are kept until one of them is stored again."""
    code = (
        FORWARD_AD + "class Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.head = torch.nn.Linear(4, 4)\n\n\n"
        "net = Net()\nbefore = list(net.children())\nnet.extra = torch.compile(torch.nn.Linear(4, 4))\n"
        "with fwAD.dual_level():\n    x = fwAD.make_dual(torch.randn(4), torch.randn(4))\n"
        "    for child in net.children():\n        child(x)  # expect: CAL001\n"
    )
    _check(Case(code), tmp_path)


#: Six layers of helpers, each calling the next twice with different arguments: the compiled call
#: at the bottom is reached only by walking all of them.
LAYERED = (
    FORWARD_AD
    + "".join(
        f"def layer{i}(x, flag):\n    layer{i + 1}(x, True)\n    return layer{i + 1}(x, False)\n\n\n" for i in range(6)
    )
    + (
        "compiled = torch.compile(torch.nn.Linear(4, 4))\n\n\n"
        "def layer6(x, flag):\n    return compiled(x)\n\n\n"
        "with fwAD.dual_level():\n    early = torch.compile(torch.nn.Linear(4, 4))\n"
        "    early(fwAD.make_dual(torch.randn(4), torch.randn(4)))  # expect: CAL001\n"
        "    layer0(fwAD.make_dual(torch.randn(4), torch.randn(4)), None)  # expect: CAL001\n"
    )
)


def test_a_root_that_spends_its_function_walks_says_its_analysis_is_incomplete(tmp_path, monkeypatch, capsys):
    """A root stops walking functions at ``max-function-walks`` and reports CAL900 there; what it
    reached before is still reported (composer's tests/trainer/test_checkpoint.py took 8 minutes
    and 41,000 walks: at the default 20,000, 86 s)."""
    write_case(Case(LAYERED), tmp_path)
    complete = Analyzer(Config(), use_cache=False, jobs=1).check([str(tmp_path)])
    assert reported(complete.findings) == expected_in(tmp_path / "case.py")
    stopped = Analyzer(Config(max_function_walks=3), use_cache=False, jobs=1).check([str(tmp_path)])
    codes = {(f.location.line, f.code): f.full_message for f in stopped.findings}
    early_line = (
        LAYERED.splitlines().index("    early(fwAD.make_dual(torch.randn(4), torch.randn(4)))  # expect: CAL001") + 1
    )
    assert (early_line, "CAL001") in codes
    assert (early_line + 1, "CAL001") not in codes  # past the walks it may take
    assert [m for (_, code), m in codes.items() if code == "CAL900"] == [
        "analysis incomplete: stopped after 3 function walks (`max-function-walks` in the configuration)."
        " analysis incomplete: stopped after 3 function walks (`max-function-walks` in the configuration);"
        " the calls left were not followed"
    ]
    assert not any(f.code == "CAL900" for f in complete.findings)
    monkeypatch.chdir(tmp_path)  # the command line sets the bound too, over the configuration's
    assert main(["check", ".", "--no-cache", "--max-function-walks", "3"]) == 1
    assert "CAL900 analysis incomplete: stopped after 3 function walks" in capsys.readouterr().out


def test_equal_closures_built_by_two_walks_are_one_object(tmp_path, monkeypatch):
    """Closures hold functions with closures of their own; comparing equal ones built apart (a memo
    lookup of a call with a nested function) compared every level once per path: 0.27 s for one
    lookup in Megatron-LM's tests. The enclosing function is walked twice here (outside and inside
    autocast), and its nested function's closure is built once."""
    code = (
        FORWARD_AD + "def make(scale):\n    def inner(y):\n        def innermost(z):\n"
        "            return z * scale\n\n        return innermost(y)\n\n    return inner\n\n\n"
        "plain = make(2.0)\nwith torch.autocast('cpu', dtype=torch.bfloat16):\n    mixed = make(2.0)\n" + STILL_REPORTED
    )
    closures: dict[str, list] = {}
    original = Interpreter.define_function

    def recording(self, statement, frame):
        values = original(self, statement, frame)
        for value in values:
            if isinstance(value, FunctionVal) and value.closure:
                closures.setdefault(value.qualname, []).append(value.closure)
        return values

    monkeypatch.setattr(Interpreter, "define_function", recording)
    _check(Case(code), tmp_path)
    built = closures["make.<locals>.inner"]
    assert len(built) >= 2 and all(closure is built[0] for closure in built)
