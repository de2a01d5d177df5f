"""Issue 11 ("Reach"): the shapes real training code hides compiled regions in, one case per row of
the ``torch_api`` tables they are read from, plus the path-sensitivity, registry and numeric-effect
behaviour. Lines that must be reported carry ``# expect: CODE``; nothing else may be reported.
"""

from __future__ import annotations

import pytest

from compile_ad_lint import Config
from compile_ad_lint.api import Analyzer
from compile_ad_lint.cli import main
from compile_ad_lint.knowledge import containers
from compile_ad_lint.knowledge import torch_api as api
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


#: A model whose blocks sit in an ``nn.ModuleDict`` built from ``{mapping}``, read as ``{access}``.
_PARTS = (
    NET + "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.parts = nn.ModuleDict({mapping})\n\n"
    "    def forward(self, x):\n        for block in self.{access}:\n            x = block(x)\n"
    "        return self.parts.norm(x)\n\n\n"
    "def step(x):\n    model = Model()\n    for block in model.{access}:\n        block.compile()\n"
)


@pytest.mark.parametrize(
    "mapping",
    [
        "dict(blocks=nn.ModuleList([Net(), Net()]), norm=nn.LayerNorm(4))",
        "{'blocks': nn.ModuleList([Net(), Net()]), 'norm': nn.LayerNorm(4)}",
    ],
)
@pytest.mark.parametrize("access", ["parts.blocks", "parts['blocks']"])
def test_module_dict_items_by_name_and_key(mapping, access, tmp_path):
    """nanoGPT's ``self.transformer.h`` and ``self.transformer.ln_f(x)``: an ``nn.ModuleDict``'s
    item read by attribute is what indexing gives, its blocks compiled in place through it are the
    ones the forward calls, and the output of the item called after them keeps their backward."""
    code = _PARTS.format(mapping=mapping, access=access) + AMP + "    loss.backward()  # expect: CAL002\n"
    _check(Case(code), tmp_path)


@pytest.mark.parametrize("factory", sorted(n for n, row in containers.EMPTY_CONTAINER_FACTORIES.items() if row.mapping))
def test_mapping_factory_rows(factory, tmp_path):
    module, name = factory.rsplit(".", 1)
    imports = "" if module == "builtins" else f"from {module} import {name}\n"
    code = (
        imports
        + _PARTS.format(
            mapping=f"{name}(blocks=nn.ModuleList([Net(), Net()]), norm=nn.LayerNorm(4))", access="parts.blocks"
        )
        + AMP
        + "    loss.backward()  # expect: CAL002\n"
    )
    _check(Case(code), tmp_path)


def test_module_dict_update_registers_its_modules(tmp_path):
    """allenai/OLMo's ``self.transformer.update({"blocks": nn.ModuleList(blocks)})``."""
    code = _PARTS.format(mapping="{'norm': nn.LayerNorm(4)}", access="parts.blocks").replace(
        "        self.parts = nn.ModuleDict({'norm': nn.LayerNorm(4)})\n",
        "        self.parts = nn.ModuleDict({'norm': nn.LayerNorm(4)})\n"
        "        self.parts.update({'blocks': nn.ModuleList([Net(), Net()])})\n",
    )
    _check(Case(code + AMP + "    loss.backward()  # expect: CAL002\n"), tmp_path)


def test_module_dict_methods_are_not_items(tmp_path):
    """``model.parts.children()`` and ``.train()`` are the ModuleDict's own: ``children()`` yields
    its items (the ModuleList), which holds the blocks only one level further down, and nothing
    compiled is called when the compiled call is a method's result."""
    code = (
        _PARTS.format(
            mapping="dict(blocks=nn.ModuleList([Net(), Net()]), norm=nn.LayerNorm(4))", access="parts.blocks"
        ).replace("    for block in model.parts.blocks:\n        block.compile()\n", "    model.parts.train()\n")
        + AMP
        + "    loss.backward()  # ok: nothing is compiled\n"
    )
    _check(Case(code), tmp_path)


def test_a_module_list_item_called_by_name_is_not_called(tmp_path):
    """Calling an ``nn.ModuleList`` raises: reached as an item of a ModuleDict by name, it is not
    what ``self.parts.norm(x)`` calls, and its compiled blocks are not called there."""
    code = (
        NET + "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.parts = nn.ModuleDict(dict(blocks=nn.ModuleList([torch.compile(Net())]), norm=nn.LayerNorm(4)))\n\n"
        "    def forward(self, x):\n        return self.parts.norm(x)\n\n\n"
        "def step(x):\n    model = Model()\n" + AMP + "    loss.backward()  # ok: only the LayerNorm runs\n"
    )
    _check(Case(code), tmp_path)


#: A project module that compiles itself in one of its methods (allenai/OLMo-core's
#: ``TransformerBlockBase.apply_compile``: ``self.compile(fullgraph=False)``).
_SELF_COMPILING = (
    "import torch\nfrom torch import nn\n\n"
    "class Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.l = nn.Linear(4, 4)\n"
    "{init}\n    def forward(self, x):\n        with torch.autocast('cpu', enabled=False):\n"
    "            return self.l(x.float())\n\n"
    "    def apply_compile(self):\n        self.compile(fullgraph=False)\n\n\n"
    "def step(x):\n    model = Block()\n{setup}"
)


@pytest.mark.parametrize(
    ("init", "setup"),
    [("", "    model.apply_compile()\n"), ("        self.compile()\n", "")],
    ids=["method", "constructor"],
)
def test_a_module_compiling_itself(init, setup, tmp_path):
    """``self.compile()`` in the module's own method, called, or in its constructor: its calls run
    compiled, and the region scanned for the numeric effect is its own forward."""
    code = _SELF_COMPILING.format(init=init, setup=setup) + AMP + "    loss.backward()  # expect: CAL002\n"
    _check(Case(code), tmp_path)
    report = Analyzer(Config(), use_cache=False, jobs=1).check([str(tmp_path)])
    assert [f.code for f in report.findings] == ["CAL002"]
    assert any("Numeric effect likely" in line for line in report.findings[0].details)


def test_a_self_compiling_method_never_called(tmp_path):
    code = _SELF_COMPILING.format(init="", setup="") + AMP + "    loss.backward()  # ok: apply_compile never runs\n"
    _check(Case(code), tmp_path)


@pytest.mark.parametrize("method", sorted(containers.CONTAINER_ELEMENT_METHODS - {"__getitem__", "popitem"}))
def test_container_element_method_rows(method, tmp_path):
    code = (
        NET
        + "MODELS = {}\n\n\ndef register(name, model):\n    MODELS[name] = model\n\n\nregister('net', torch.compile(Net()))\n\n\n"
    )
    code += f"def step(x, name):\n    model = MODELS.{method}(name)\n" + AMP + "    loss.backward()  # expect: CAL002\n"
    _check(Case(code), tmp_path)


@pytest.mark.parametrize("factory", sorted(containers.EMPTY_CONTAINER_FACTORIES))
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


# -- properties and decorator classes ---------------------------------------------------------------

TRAIN_STEP = (
    "    def step(self, x):\n        with torch.autocast('cpu', dtype=torch.bfloat16):\n"
    "            loss = self.model(x).sum()\n        loss.backward(){marker}\n"
)


@pytest.mark.parametrize("decorator", ["property", "functools.cached_property", "cached_property"])
def test_a_property_reads_what_its_getter_returns(decorator, tmp_path):
    code = (
        "import functools\nfrom functools import cached_property\n\n"
        + NET
        + (
            "class Trainer:\n    def __init__(self, net):\n        self._model = torch.compile(net)\n\n"
            f"    @{decorator}\n    def model(self):\n        return self._model\n\n"
        )
    )
    _check(Case(code + TRAIN_STEP.format(marker="  # expect: CAL002")), tmp_path)


def test_a_property_with_a_setter_still_reads_the_getter(tmp_path):
    code = NET + (
        "class Trainer:\n    def __init__(self, net):\n        self._model = torch.compile(net)\n\n"
        "    @property\n    def model(self):\n        return self._model\n\n"
        "    @model.setter\n    def model(self, value):\n        self._model = value\n\n"
    )
    _check(Case(code + TRAIN_STEP.format(marker="  # expect: CAL002")), tmp_path)


def test_a_property_returning_an_eager_model(tmp_path):
    code = NET + (
        "class Trainer:\n    def __init__(self, net):\n        self._compiled = torch.compile(net)\n        self._eager = net\n\n"
        "    @property\n    def model(self):\n        return self._eager\n\n"
    )
    _check(Case(code + TRAIN_STEP.format(marker="  # ok: the property returns the eager module")), tmp_path)


LAZY_CLASS = (
    "import os\nimport torch\n\n\nclass compile_wrap:\n    def __init__(self, function):\n"
    "        self.function = function\n        self._compiled = None\n\n"
    "    @property\n    def compiled(self):\n        if self._compiled is not None:\n            return self._compiled\n"
    "        self._compiled = torch.compile(self.function)\n        return self._compiled\n\n"
    "    def __call__(self, *args, **kwargs):\n        return self.compiled(*args, **kwargs)\n\n\n"
)
USES_RMS = (
    "def step(x, scale):\n    with torch.autocast('cpu', dtype=torch.bfloat16):\n"
    "        loss = rms_norm(x, scale).sum()\n    loss.backward(){marker}\n"
)


def test_a_decorator_class_with_call_stands_for_the_function(tmp_path):
    """k-diffusion's ``@flags.compile_wrap``: a class whose ``__call__`` compiles the function on
    first use; the lazily filled attribute is a cache, not a run-time switch the headline names."""
    code = LAZY_CLASS + "@compile_wrap\ndef rms_norm(x, scale):\n    return x * scale\n\n\n"
    case = Case(code + USES_RMS.format(marker="  # expect: CAL002"))
    _check(case, tmp_path)
    (finding,) = Analyzer(Config(), use_cache=False, jobs=1).check([str(tmp_path)]).findings
    assert finding.message.startswith("Tensor.backward() runs with autocast off"), finding.message


def test_a_descriptor_class_decorator_leaves_the_function(tmp_path):
    code = (
        "import torch\n\n\nclass once:\n    def __init__(self, function):\n        self.function = function\n\n"
        "    def __get__(self, instance, owner):\n        return self.function.__get__(instance, owner)\n\n"
        "    def __call__(self, *args):\n        return self.function(*args)\n\n\n"
        "@once\ndef rms_norm(x, scale):\n    return torch.compile(torch.nn.Linear(4, 4))(x) * scale\n\n\n"
    )
    _check(Case(code + USES_RMS.format(marker="  # expect: CAL002")), tmp_path)


def test_an_attribute_the_method_does_not_fill_is_still_a_switch(tmp_path):
    """``self.precompiled is None`` where the attribute holds what ``__init__`` took from its caller
    and the method testing it never stores to it: a run-time switch, named as before."""
    code = NET + (
        "class Trainer:\n    def __init__(self, args):\n        self.precompiled = args.precompiled\n\n"
        "    def step(self, x):\n        if self.precompiled is None:\n            model = torch.compile(Net())\n"
        "        else:\n            model = Net()\n        with torch.autocast('cpu', dtype=torch.bfloat16):\n"
        "            loss = model(x).sum()\n        loss.backward()  # expect: CAL002\n"
    )
    _check(Case(code), tmp_path)
    (finding,) = Analyzer(Config(), use_cache=False, jobs=1).check([str(tmp_path)]).findings
    assert "self.precompiled is None" in finding.message, finding.message


TUPLE_OR_TENSOR = NET + (
    "model = torch.compile(Net())\n\n\n"
    "def predict(x, flag):\n"
    "    with torch.autocast('cpu', dtype=torch.bfloat16):\n        pred = model(x)\n"
    "    if flag:\n        return pred, pred.detach()\n    return pred\n\n\n"
    "def step(x, flag):\n    loss = predict(x, flag).mean()\n    loss.backward()  # expect: CAL002\n\n\n"
    "def both(x, flag):\n    out = predict(x, flag)\n    out.backward()  # expect: CAL002\n\n\n"
    "def unpacked(x):\n    pred, _ = predict(x, True)\n    pred.sum().backward()  # expect: CAL002\n\n\n"
    "def eager(x, flag):\n    out = torch.nn.Linear(4, 4)(x)\n    if flag:\n        out = (out, out)\n"
    "    out.backward()  # ok: no compiled region\n"
)


def test_a_result_that_is_a_tuple_on_another_path_is_still_differentiated(tmp_path):
    """ostris/ai-toolkit's ``predict_noise``: ``return pred, cond`` on one path, ``return pred`` on the
    other; ``.backward()`` runs on the tensor (a tuple has no ``backward``)."""
    expected, found = run_case(Case(TUPLE_OR_TENSOR), tmp_path)
    assert found == expected


# -- comprehensions -----------------------------------------------------------------------------------

COMPREHENSION_LOSSES = {
    "chunked": "loss = torch.cat([nn.functional.mse_loss(c, c.detach()) for c in model(x).split(2)]).sum()",
    "generator": "loss = sum(c.sum() for c in model(x).chunk(2))",
    "dict": "loss = sum({k: v.sum() for k, v in {'out': model(x)}.items()}.values())",
    "nested": "loss = torch.stack([c.sum() for chunk in [model(x)] for c in chunk.split(2)]).sum()",
    "filtered": "loss = sum([c.sum() for c in model(x).split(2) if c.numel()])",
}


@pytest.mark.parametrize("loss", list(COMPREHENSION_LOSSES.values()), ids=list(COMPREHENSION_LOSSES))
def test_a_loss_made_in_a_comprehension_keeps_its_compiled_origin(loss, tmp_path):
    """lit-gpt's ``chunked_cross_entropy``: the loss is summed over a comprehension on the chunks of the
    compiled output; its variables are bound to the iterable's elements (they were unknown)."""
    program = (
        NET
        + "model = torch.compile(Net())\n\n\ndef step(x):\n"
        + f"    with torch.autocast('cpu', dtype=torch.bfloat16):\n        {loss}\n"
        + "    loss.backward()  # expect: CAL002\n"
    )
    _check(Case(program), tmp_path)


def test_a_comprehension_variable_does_not_leak_into_the_function(tmp_path):
    """Near miss: ``x`` after ``[... for x in batches]`` is the function's own ``x`` (Python 3 scoping),
    not the comprehension's element; the compiled output bound to ``x`` in the comprehension stays there."""
    program = (
        NET
        + "model = torch.compile(Net())\n\n\ndef step(x, batches):\n"
        + "    outputs = [model(x) for x in batches]\n"
        + "    with torch.autocast('cpu', dtype=torch.bfloat16):\n        loss = x.sum()\n"
        + "    loss.backward()  # ok: x is the parameter, no compiled output\n"
    )
    _check(Case(program), tmp_path)


def test_a_comprehension_variable_is_written_as_the_code_writes_it(tmp_path):
    """The related location of a call made through a comprehension's variable names it as written."""
    program = (
        NET
        + "class Stack(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        + "        self.blocks = nn.ModuleList([torch.compile(Net()) for _ in range(2)])\n\n"
        + "    def forward(self, x):\n        return sum(block(x) for block in self.blocks)\n\n\n"
        + "def step(x):\n    model = Stack()\n"
        + "    with torch.autocast('cpu', dtype=torch.bfloat16):\n        loss = model(x).sum()\n"
        + "    loss.backward()  # expect: CAL002\n"
    )
    path = write_case(Case(program), tmp_path)
    report = Analyzer(Config(), use_cache=False, jobs=1).check([str(path)])
    assert reported(report.findings) == expected_in(path)
    assert "block@" not in repr(report.findings)


# -- arguments: keyword-only parameters and ``*args`` ---------------------------------------------------

_PENALTY = (
    "def update(critic, x):\n    x = x.requires_grad_(True)\n"
    "    (g,) = torch.autograd.grad(critic(x).sum(), x, create_graph=True)  # expect: CAL004\n"
    "    g.square().mean().backward()\n\n"
    "def step(critic, x):\n    x = x.requires_grad_(True)\n"
    "    (g,) = torch.autograd.grad(critic(x).sum(), x, create_graph=True)  # ok: compiled with the eager backend\n"
    "    g.square().mean().backward()\n\n"
)


def test_a_positional_argument_does_not_bind_a_keyword_only_parameter(tmp_path):
    """``compile_with_warmup(update, warmup=2)`` over ``def compile_with_warmup(*args, warmup=1,
    **kw)`` (torchrl): the function goes to ``*args``, not ``warmup``, and is what is compiled;
    ``def wrap(fn, *, backend)`` likewise binds its backend by keyword only."""
    case = Case(
        "import torch\n\n"
        "def compile_with_warmup(*args, warmup: int = 1, **kwargs):\n"
        "    if len(args):\n        model = args[0]\n        args = ()\n    else:\n        model = kwargs.pop('model', None)\n"
        "    return torch.compile(model, *args, **kwargs)\n\n"
        "def wrap(fn, *, backend='inductor'):\n    return torch.compile(fn, backend=backend)\n\n"
        + _PENALTY
        + "def train(critic, loader):\n    compiled = compile_with_warmup(update, warmup=2)\n"
        "    eager = wrap(step, backend='eager')\n    for x in loader:\n        compiled(critic, x)\n        eager(critic, x)\n"
        "        critic(x).sum().backward()\n"
    )
    _check(case, tmp_path)


def test_an_item_of_star_args_is_one_of_the_extra_positional_arguments(tmp_path):
    """``args[0]`` of ``*args`` holds what the caller passed; ``args`` rebound to a tuple is indexed
    as that tuple."""
    case = Case(
        "import torch\n\n"
        "def first_compiled(*args):\n    return torch.compile(args[0])\n\n"
        "def rebound(*args):\n    args = (torch.nn.Identity(),)\n    return torch.compile(args[0])\n\n"
        + _PENALTY.replace("compiled with the eager backend", "the tuple's item is compiled, not this")
        + "def train(critic, loader):\n    compiled = first_compiled(update)\n    other = rebound(step)\n"
        "    for x in loader:\n        compiled(critic, x)\n        other(critic, x)\n        critic(x).sum().backward()\n"
    )
    _check(case, tmp_path)


def test_items_of_star_args_are_taken_by_position_and_spread_arguments_unpacked(tmp_path):
    """``TransformedEnv(*args)``-style constructors read ``args[0]`` and ``args[1]`` as different
    arguments (torchrl's ``TransformedEnv.__init__``); ``f(*pair)`` passes the pair's elements."""
    case = Case(
        "import torch\n\n"
        "def pick(*args):\n    first = args[0]\n    second = args[1] if len(args) > 1 else None\n"
        "    return torch.compile(second, backend='eager'), first\n\n"
        "def forward_all(*args):\n    return use(*args)\n\n"
        "def use(model, x):\n    return model(x)\n\n"
        "def train(net, x, loader):\n"
        "    eager, plain = pick(net, torch.nn.Identity())\n"
        "    (g,) = torch.autograd.grad(plain(x).sum(), x, create_graph=True)  # ok: args[0] is not compiled\n"
        "    pair = (torch.compile(net), x)\n"
        "    (h,) = torch.autograd.grad(forward_all(*pair).sum(), x, create_graph=True)  # expect: CAL004\n"
    )
    _check(case, tmp_path)
