"""The framework table (``knowledge/frameworks.py``): every row cites the framework source it was read
from, and has a case here. The frameworks are not installed; they are known by qualified name."""

from __future__ import annotations

import re

import pytest

from compile_ad_lint import Config
from compile_ad_lint.api import Analyzer
from compile_ad_lint.knowledge import frameworks as fw
from compile_ad_lint.rules import Case
from compile_ad_lint.testing import run_case

NET = (
    "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.l = nn.Linear(4, 4)\n\n    def forward(self, x):\n        return self.l(x).sum()\n\n\n"
)


#: A source file of the framework: under its ``src/``, or, for a repository laid out without one, the
#: repository named first (``mosaicml/composer composer/trainer/trainer.py``).
_CITATION = re.compile(r"src/[\w/]+\.py|^[\w.-]+/[\w.-]+ [\w.-]+(/[\w.-]+)*\.py")


def _check(code: str, tmp_path) -> None:
    expected, reported = run_case(Case(code), tmp_path)
    assert reported == expected


@pytest.mark.parametrize(
    "row", [*fw.FRAMEWORK_CLASSES, *fw.FRAMEWORK_METHODS], ids=lambda r: f"{r.kind}.{getattr(r, 'method', '')}"
)
def test_every_row_cites_its_source(row):
    assert _CITATION.search(row.source), row.source


@pytest.mark.parametrize("name", sorted(fw.MODULE_BASES))
def test_every_module_base_cites_its_source(name):
    assert _CITATION.search(fw.MODULE_BASES[name]) and ": `class " in fw.MODULE_BASES[name], fw.MODULE_BASES[name]


def test_every_effect_has_a_row():
    assert {m.effect for m in fw.FRAMEWORK_METHODS} == set(fw.FrameworkEffect)


# -- accelerate ----------------------------------------------------------------------------------------

ACCELERATE = NET + "from accelerate import Accelerator\nfrom accelerate.utils import TorchDynamoPlugin\n\n\n"


@pytest.mark.parametrize("name", sorted(fw.CLASS_BY_NAME["accelerate.Accelerator"].names))
def test_accelerator_class_names(name, tmp_path):
    module, cls = name.rsplit(".", 1)
    code = (
        NET + f"from {module} import {cls}\n\n\ndef train(loader):\n    accelerator = {cls}(mixed_precision='bf16')\n"
    )
    code += "    model = accelerator.prepare(torch.compile(Net()))\n    for x in loader:\n        accelerator.backward(model(x))  # expect: CAL002\n"
    _check(code, tmp_path)


@pytest.mark.parametrize(
    ("precision", "marker"),
    [
        ("'bf16'", "  # expect: CAL002"),
        ("'fp16'", "  # expect: CAL002"),
        ("'no'", "  # ok"),
        ("args.mp", "  # expect: CAL002"),
    ],
)
def test_accelerator_precision_and_prepare(precision, marker, tmp_path):
    code = (
        ACCELERATE
        + f"def train(loader, args):\n    accelerator = Accelerator(mixed_precision={precision})\n    model = torch.compile(Net())\n"
    )
    code += f"    model, loader = accelerator.prepare(model, loader)\n    for x in loader:\n        accelerator.backward(model(x)){marker}\n"
    _check(code, tmp_path)


def test_accelerator_precision_from_the_environment(tmp_path):
    code = (
        ACCELERATE
        + "def train(loader):\n    accelerator = Accelerator()\n    model = accelerator.prepare(torch.compile(Net()))\n"
    )
    code += "    for x in loader:\n        accelerator.backward(model(x))  # expect: CAL002\n"
    _check(code, tmp_path)


def test_accelerator_autocast(tmp_path):
    code = (
        ACCELERATE
        + "model = torch.compile(Net())\n\n\ndef train(loader):\n    accelerator = Accelerator(mixed_precision='fp16')\n    for x in loader:\n"
    )
    code += "        with accelerator.autocast():\n            loss = model(x)\n        accelerator.backward(loss)  # expect: CAL002\n"
    code += "        with accelerator.autocast():\n            loss = model(x)\n            accelerator.backward(loss)  # ok: same autocast\n"
    _check(code, tmp_path)


@pytest.mark.parametrize(
    "setting", ["dynamo_backend='inductor'", "dynamo_plugin=TorchDynamoPlugin(backend='inductor')"]
)
def test_accelerator_compiles_after_its_autocast(setting, tmp_path):
    code = (
        ACCELERATE
        + f"def train(loader):\n    accelerator = Accelerator(mixed_precision='bf16', {setting})\n    model = accelerator.prepare_model(Net())\n"
    )
    code += "    for x in loader:\n        accelerator.backward(model(x))  # ok: autocast inside accelerate's compiled graph\n"
    _check(code, tmp_path)


@pytest.mark.parametrize("method", ["prepare", "prepare_model"])
def test_a_module_compiled_in_place_gets_accelerates_autocast_inside_its_graph(method, tmp_path):
    """``prepare_model`` replaces ``model.forward``, which a module compiled in place calls from its
    compiled ``_call_impl`` (facts/backward_autocast.py: same as eager); ``torch.compile(model)``'s
    call stays inside the autocast (differs), as does a module compiled in place under Fabric."""
    code = ACCELERATE + "def train(loader):\n    accelerator = Accelerator(mixed_precision='bf16')\n    model = Net()\n"
    code += f"    model.compile()\n    model = accelerator.{method}(model)\n    other = accelerator.{method}(torch.compile(Net()))\n"
    code += "    for x in loader:\n        accelerator.backward(model(x))  # ok: autocast entered inside the compiled graph\n"
    code += "        accelerator.backward(other(x))  # expect: CAL002\n"
    _check(code, tmp_path)


def test_a_module_compiled_in_place_after_prepare(tmp_path):
    code = ACCELERATE + "def train(loader):\n    accelerator = Accelerator(mixed_precision='bf16')\n"
    code += "    model = accelerator.prepare(Net())\n    model.compile()\n"
    code += "    for x in loader:\n        accelerator.backward(model(x))  # ok: the compiled _call_impl calls the autocast forward\n"
    _check(code, tmp_path)


@pytest.mark.parametrize(
    ("regional", "marker"), [("True", "  # expect: CAL002"), ("False", "  # ok: whole-model compile")]
)
def test_accelerator_regional_compilation_runs_its_autocast_around_the_compiled_blocks(regional, marker, tmp_path):
    """``use_regional_compilation=True``: ``compile_regions`` compiles the children and keeps the
    autocast forward eager around them, so the compiled regions are entered under autocast."""
    code = (
        ACCELERATE + "def train(loader):\n    plugin = TorchDynamoPlugin(backend='inductor', "
        f"use_regional_compilation={regional})\n"
        "    accelerator = Accelerator(mixed_precision='bf16', dynamo_plugin=plugin)\n    model = accelerator.prepare(Net())\n"
    )
    code += f"    for x in loader:\n        accelerator.backward(model(x)){marker}\n"
    _check(code, tmp_path)


def test_accelerator_compile_is_a_compiled_callable_for_forward_ad(tmp_path):
    code = (
        ACCELERATE
        + "import torch.autograd.forward_ad as fwAD\n\n\ndef jvp(x, t):\n    accelerator = Accelerator(dynamo_backend='inductor')\n"
    )
    code += "    model = accelerator.prepare(Net())\n    with fwAD.dual_level():\n        return model(fwAD.make_dual(x, t))  # expect: CAL001\n"
    _check(code, tmp_path)


def test_accelerator_unwrap_and_accumulate(tmp_path):
    code = (
        ACCELERATE
        + "def train(loader):\n    accelerator = Accelerator(mixed_precision='bf16')\n    model = accelerator.prepare(torch.compile(Net()))\n"
    )
    code += "    for x in loader:\n        with accelerator.accumulate(model):\n            loss = accelerator.unwrap_model(model)(x)\n"
    code += "        accelerator.backward(loss)  # expect: CAL002\n"
    _check(code, tmp_path)


# -- Lightning ------------------------------------------------------------------------------------------

LIT = (
    "import torch\nimport lightning as L\n\n\nclass Lit(L.LightningModule):\n    def __init__(self):\n        super().__init__()\n"
    "        self.net = torch.nn.Linear(4, 4)\n\n    def training_step(self, batch, batch_idx):\n        return self.net(batch).sum()\n\n\n"
)


@pytest.mark.parametrize("name", sorted(fw.CLASS_BY_NAME["lightning.Trainer"].names))
def test_lightning_trainer_names(name, tmp_path):
    module, cls = name.rsplit(".", 1)
    base = "lightning.pytorch" if module.startswith("lightning") else "pytorch_lightning"
    code = LIT.replace("import lightning as L", f"import {base} as L\nfrom {module} import {cls} as T")
    code += "def main(dm):\n    T(precision='bf16-mixed').fit(torch.compile(Lit()), datamodule=dm)  # expect: CAL002\n"
    _check(code, tmp_path)


@pytest.mark.parametrize(
    ("precision", "marker"),
    [
        ("'16-mixed'", "  # expect: CAL002"),
        ("'bf16-mixed'", "  # expect: CAL002"),
        ("16", "  # expect: CAL002"),
        ("'bf16'", "  # expect: CAL002"),
        ("'32-true'", "  # ok"),
        ("'bf16-true'", "  # ok"),
        ("64", "  # ok"),
    ],
)
def test_lightning_precisions(precision, marker, tmp_path):
    _check(
        LIT + f"def main(dm):\n    L.Trainer(precision={precision}).fit(torch.compile(Lit()), datamodule=dm){marker}\n",
        tmp_path,
    )


def test_lightning_16_mixed_on_cpu_is_bf16(tmp_path):
    from compile_ad_lint import Config
    from compile_ad_lint.api import Analyzer
    from compile_ad_lint.testing import write_case

    write_case(
        Case(
            LIT
            + "def main(dm):\n    L.Trainer(accelerator='cpu', precision='16-mixed').fit(torch.compile(Lit()), datamodule=dm)  # expect: CAL002\n"
        ),
        tmp_path,
    )
    (finding,) = Analyzer(Config(), use_cache=False, jobs=1).check([str(tmp_path)]).findings
    assert finding.facts_dict["forward_autocast"] == "cpu/bfloat16"


def test_lightning_manual_backward_is_inside_the_step(tmp_path):
    code = LIT.replace(
        "        return self.net(batch).sum()\n",
        "        self.manual_backward(self.net(batch).sum())  # ok: inside the step's autocast\n",
    )
    code = code.replace(
        "        self.net = torch.nn.Linear(4, 4)\n",
        "        self.automatic_optimization = False\n        self.net = torch.compile(torch.nn.Linear(4, 4))\n",
    )
    _check(code + "def main(dm):\n    L.Trainer(precision='bf16-mixed').fit(Lit(), datamodule=dm)\n", tmp_path)


def test_lightning_compiled_submodule(tmp_path):
    code = LIT.replace(
        "        self.net = torch.nn.Linear(4, 4)\n", "        self.net = torch.compile(torch.nn.Linear(4, 4))\n"
    )
    _check(
        code + "def main(dm):\n    L.Trainer(precision='bf16-mixed').fit(Lit(), datamodule=dm)  # expect: CAL002\n",
        tmp_path,
    )


@pytest.mark.parametrize("hook", fw.FIT_HOOKS, ids=lambda hook: hook.method)
def test_lightning_fit_hooks_run_before_the_step(hook, tmp_path):
    """A hook ``fit`` calls compiles the module's layer: the step's backward goes through it."""
    assert re.search(r"src/[\w/]+\.py", hook.source), hook.source
    parameters = "".join(f", {name}" for name in ("stage",)[: len(hook.arguments)])
    code = LIT.replace(
        "    def training_step(",
        f"    def {hook.method}(self{parameters}):\n        self.net = torch.compile(self.net)\n\n    def training_step(",
    )
    marker = "  # expect: CAL002"
    _check(code + f"def main(dm):\n    L.Trainer(precision='bf16-mixed').fit(Lit(), datamodule=dm){marker}\n", tmp_path)


def test_a_method_fit_does_not_call_compiles_nothing(tmp_path):
    code = LIT.replace(
        "    def training_step(",
        "    def compile_me(self):\n        self.net = torch.compile(self.net)\n\n    def training_step(",
    )
    marker = "  # ok: nothing calls compile_me"
    _check(code + f"def main(dm):\n    L.Trainer(precision='bf16-mixed').fit(Lit(), datamodule=dm){marker}\n", tmp_path)


FABRIC = NET + "from lightning.fabric import Fabric\n\n\n"


@pytest.mark.parametrize("name", sorted(fw.CLASS_BY_NAME["lightning.Fabric"].names))
def test_fabric_names(name, tmp_path):
    module, cls = name.rsplit(".", 1)
    code = NET + f"from {module} import {cls}\n\n\ndef run(loader):\n    fabric = {cls}(precision='bf16-mixed')\n"
    code += "    model = fabric.setup(torch.compile(Net()))\n    for x in loader:\n        fabric.backward(model(x))  # expect: CAL002\n"
    _check(code, tmp_path)


def test_fabric_setup_with_optimizers_and_setup_module(tmp_path):
    code = FABRIC + "def run(loader):\n    fabric = Fabric(precision='16-mixed')\n    model = torch.compile(Net())\n"
    code += "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    model, opt = fabric.setup(model, opt)\n    other = fabric.setup_module(torch.compile(Net()))\n"
    code += "    for x in loader:\n        fabric.backward(model(x))  # expect: CAL002\n        fabric.backward(other(x))  # expect: CAL002\n"
    code += "        with fabric.autocast():\n            loss = model(x)\n            fabric.backward(loss)  # ok: inside fabric.autocast()\n"
    _check(code, tmp_path)


def test_fabric_enters_autocast_around_a_module_compiled_in_place(tmp_path):
    code = (
        FABRIC
        + "def run(loader):\n    fabric = Fabric(precision='bf16-mixed')\n    model = Net()\n    model.compile()\n"
    )
    code += (
        "    model = fabric.setup(model)\n    for x in loader:\n        fabric.backward(model(x))  # expect: CAL002\n"
    )
    _check(code, tmp_path)


def test_fabric_full_precision(tmp_path):
    code = (
        FABRIC
        + "def run(loader):\n    fabric = Fabric(precision='32-true')\n    model = fabric.setup(torch.compile(Net()))\n"
    )
    code += "    for x in loader:\n        fabric.backward(model(x))  # ok: no autocast\n"
    _check(code, tmp_path)


@pytest.mark.parametrize(
    ("constructor", "variable"),
    [("Fabric(devices=2)", "LT_PRECISION"), ("Accelerator()", "ACCELERATE_MIXED_PRECISION")],
)
def test_a_precision_left_to_the_launcher_is_a_named_switch(constructor, variable, tmp_path):
    """Fabric and accelerate read the precision the launcher sets (``fabric run --precision``,
    ``accelerate launch --mixed_precision``) when the code sets none: a finding names the variable."""
    setup = "fabric.setup" if constructor.startswith("Fabric") else "fabric.prepare"
    code = NET + "from accelerate import Accelerator\nfrom lightning.fabric import Fabric\n\n\n"
    code += f"def run(loader):\n    fabric = {constructor}\n    model = {setup}(torch.compile(Net()))\n"
    code += "    for x in loader:\n        fabric.backward(model(x))  # expect: CAL002\n"
    _check(code, tmp_path)
    (finding,) = Analyzer(Config(), use_cache=False, jobs=1).check([str(tmp_path)]).findings
    assert [c.expression for c in finding.conditions] == [variable]


@pytest.mark.parametrize(
    ("constructor", "marker"),
    [
        ("Accelerator(mixed_precision='bf16')", "  # expect: CAL002"),
        ("Accelerator(mixed_precision='bf16', dynamo_plugin=TorchDynamoPlugin())", "  # expect: CAL002"),
        ("Accelerator(mixed_precision='bf16', dynamo_backend='no')", "  # ok: the code says it never compiles"),
        (
            "Accelerator(mixed_precision='bf16', dynamo_plugin=TorchDynamoPlugin(backend='no'))",
            "  # ok: the code says it never compiles",
        ),
    ],
)
def test_a_dynamo_backend_left_to_the_launcher_is_a_named_switch(constructor, marker, tmp_path):
    """``accelerate launch --dynamo_backend`` (``ACCELERATE_DYNAMO_BACKEND``) makes ``prepare()``
    compile a model the code never compiles; with the forward under ``accelerator.autocast()`` and
    the backward outside, that is CAL002 on that launch only, and the finding names the variable."""
    code = NET + "from accelerate import Accelerator\nfrom accelerate.utils import TorchDynamoPlugin\n\n\n"
    code += f"def run(loader):\n    accelerator = {constructor}\n    model = accelerator.prepare(Net())\n"
    code += "    for x in loader:\n        with accelerator.autocast():\n            loss = model(x)\n"
    code += f"        accelerator.backward(loss){marker}\n"
    _check(code, tmp_path)
    findings = Analyzer(Config(), use_cache=False, jobs=1).check([str(tmp_path)]).findings
    assert [[c.expression for c in f.conditions] for f in findings] == (
        [["ACCELERATE_DYNAMO_BACKEND"]] if "expect" in marker else []
    )


@pytest.mark.parametrize(
    ("constructor", "conditions"),
    [
        ("Accelerator(**{'mixed_precision': 'bf16', 'dynamo_backend': 'inductor'})", []),
        ("Accelerator(**{'mixed_precision': 'bf16', 'dynamo_backend': 'no'})", None),
        ("Accelerator(mixed_precision='bf16', **{'dynamo_backend': 'inductor'})", []),
        ("Accelerator(mixed_precision='bf16', dynamo_plugin=TorchDynamoPlugin(**{'backend': 'inductor'}))", []),
        ("Accelerator(mixed_precision='bf16', **kwargs)", ["ACCELERATE_DYNAMO_BACKEND"]),
    ],
)
def test_a_dynamo_backend_in_a_literal_dict_is_read(constructor, conditions, tmp_path):
    """``Accelerator(**{...})``: a literal dict's backend is the code's, not the launcher's (bghira/
    SimpleTuner builds its accelerate keywords in dicts); a mapping that is not a literal leaves it
    to the launcher, as before."""
    code = NET + "from accelerate import Accelerator\nfrom accelerate.utils import TorchDynamoPlugin\n\n\n"
    code += f"def run(loader, kwargs):\n    accelerator = {constructor}\n    model = accelerator.prepare(Net())\n"
    marker = "  # ok: the code says it never compiles" if conditions is None else "  # expect: CAL002"
    code += "    for x in loader:\n        with accelerator.autocast():\n            loss = model(x)\n"
    code += f"        accelerator.backward(loss){marker}\n"
    _check(code, tmp_path)
    findings = Analyzer(Config(), use_cache=False, jobs=1).check([str(tmp_path)]).findings
    assert [[c.expression for c in f.conditions] for f in findings] == ([] if conditions is None else [conditions])


@pytest.mark.parametrize(
    ("setup", "conditions", "backend"),
    [
        # kohya-ss/sd-scripts' train_util.prepare_accelerator: "NO" unless --torch_compile.
        (
            "    backend = 'NO'\n    if args.torch_compile:\n        backend = args.dynamo_backend\n",
            ["dynamo_backend != 'no'"],
            "a dynamo backend the code does not fix",
        ),
        ("    backend = args.dynamo_backend\n", [], "a dynamo backend the code does not fix"),
        ("    backend = 'inductor' if args.fast else 'aot_eager'\n", [], "a dynamo backend the code does not fix"),
    ],
)
def test_a_dynamo_backend_the_code_computes_is_named_as_such(setup, conditions, backend, tmp_path):
    """``Accelerator(dynamo_backend=backend)`` with a backend the code computes: the launcher does
    not decide it (no ``ACCELERATE_DYNAMO_BACKEND`` condition, no "from the environment"), and where
    it may be "no", the finding holds only when it is not, and says so."""
    code = NET + "from accelerate import Accelerator\n\n\n"
    code += f"def run(loader, args):\n{setup}    accelerator = Accelerator(mixed_precision='bf16', dynamo_backend=backend)\n"
    code += "    model = accelerator.prepare(Net())\n"
    code += "    for x in loader:\n        with accelerator.autocast():\n            loss = model(x)\n"
    code += "        accelerator.backward(loss)  # expect: CAL002\n"
    _check(code, tmp_path)
    (finding,) = Analyzer(Config(), use_cache=False, jobs=1).check([str(tmp_path)]).findings
    assert [c.expression for c in finding.conditions] == conditions
    compiled = [r.message for r in finding.related if r.message.startswith("compiled here")]
    assert compiled and all(backend in message for message in compiled), compiled
    assert not any("environment" in r.message for r in finding.related)


@pytest.mark.parametrize(
    ("kwargs", "marker"),
    [
        ("dict(devices=2)", "  # expect: CAL002"),
        ("{'precision': 'bf16-mixed'}", "  # expect: CAL002"),
        ("{'precision': '32-true'}", "  # ok: a literal full precision"),
    ],
)
def test_fabric_precision_through_kwargs(kwargs, marker, tmp_path):
    code = FABRIC + f"def run(loader):\n    kwargs = {kwargs}\n    fabric = Fabric(**kwargs)\n"
    code += f"    model = fabric.setup(torch.compile(Net()))\n    for x in loader:\n        fabric.backward(model(x)){marker}\n"
    _check(code, tmp_path)


# -- Hugging Face ---------------------------------------------------------------------------------------

HF = NET.replace(
    "    def forward(self, x):\n        return self.l(x).sum()\n",
    "    def forward(self, **inputs):\n        return self.l(inputs['x']).sum()\n",
)
HF += "from transformers import Trainer, TrainingArguments\n\n\n"


@pytest.mark.parametrize(
    ("arguments", "model", "marker"),
    [
        ("bf16=True, torch_compile=True", "Net()", "  # ok: compiled inside accelerate"),
        ("bf16=True", "torch.compile(Net())", "  # expect: CAL002"),
        ("fp16=True", "torch.compile(Net())", "  # expect: CAL002"),
        ("bf16=args.bf16", "torch.compile(Net())", "  # expect: CAL002"),
        ("", "torch.compile(Net())", "  # ok: no mixed precision"),
        ("bf16=False", "torch.compile(Net())", "  # ok: no mixed precision"),
    ],
)
def test_hf_trainer(arguments, model, marker, tmp_path):
    code = HF + f"def main(ds, args):\n    targs = TrainingArguments(output_dir='out', {arguments})\n"
    code += f"    trainer = Trainer(model={model}, args=targs, train_dataset=ds)\n    trainer.train(){marker}\n"
    _check(code, tmp_path)


@pytest.mark.parametrize("name", sorted(fw.CLASS_BY_NAME["transformers.Trainer"].names))
def test_hf_trainer_names(name, tmp_path):
    module, cls = name.rsplit(".", 1)
    code = (
        HF
        + f"from {module} import {cls} as T\n\n\ndef main(ds):\n    args = TrainingArguments(output_dir='out', bf16=True)\n"
    )
    code += "    T(torch.compile(Net()), args, train_dataset=ds).train()  # expect: CAL002\n"
    _check(code, tmp_path)


# -- composer ------------------------------------------------------------------------------------------

COMPOSER = (
    "import torch\nfrom torch import nn\nfrom composer import Trainer\nfrom composer.models import ComposerModel\n\n\n"
    "class Net(ComposerModel):\n    def __init__(self):\n        super().__init__()\n        self.l = nn.Linear(4, 4)\n\n"
    "    def forward(self, batch):\n        return self.l(batch)\n\n    def loss(self, outputs, batch):\n"
    "        return outputs.sum()\n\n\n"
)


@pytest.mark.parametrize(
    ("arguments", "model", "marker"),
    [
        ("precision='amp_bf16', compile_config={}", "Net()", "  # expect: CAL002"),
        ("precision='amp_fp16', compile_config={'mode': 'max-autotune'}", "Net()", "  # expect: CAL002"),
        ("precision='amp_bf16', compile_config={'backend': 'eager'}", "Net()", "  # ok: eager compiles no backward"),
        ("precision='amp_bf16', compile_config=cfg.compile_config", "Net()", "  # expect: CAL002"),
        ("precision='amp_fp16'", "torch.compile(Net())", "  # expect: CAL002"),
        ("precision='amp_bf16'", "Net()", "  # ok: not compiled"),
        ("precision='amp_bf16', compile_config=None", "Net()", "  # ok: not compiled"),
        ("precision='fp32', compile_config={}", "Net()", "  # ok: no autocast"),
        ("compile_config={}", "Net()", "  # ok: no precision given (fp32 on the CPU, amp_fp16 on a GPU)"),
    ],
)
def test_composer_trainer(arguments, model, marker, tmp_path):
    """composer compiles ``model.forward`` in place when ``compile_config`` is not None and runs the
    model inside ``get_precision_context``, its backward outside: the graph is traced under the
    autocast (unlike accelerate's, whose autocast is inside the graph)."""
    code = (
        COMPOSER
        + f"def main(loader, cfg):\n    trainer = Trainer(model={model}, train_dataloader=loader, {arguments})\n"
    )
    code += f"    trainer.fit(){marker}\n"
    _check(code, tmp_path)


def test_composer_names_the_compile_switch(tmp_path):
    code = COMPOSER + "import yaml\n\n\ndef main(loader):\n    cfg = yaml.safe_load(open('train.yaml'))\n"
    code += (
        "    Trainer(model=Net(), precision='amp_bf16', compile_config=cfg['compile_config']).fit()  # expect: CAL002\n"
    )
    (tmp_path / "train.py").write_text(code)
    report = Analyzer(Config(root=tmp_path), jobs=1, use_cache=False).check([str(tmp_path)])
    (finding,) = report.findings
    assert [c.expression for c in finding.conditions] == ["compile_config is not None"]


@pytest.mark.parametrize(
    ("model", "arguments", "marker"),
    [
        ("ComposerClassifier(Inner(), num_classes=10)", "compile_config={}", "  # expect: CAL002"),
        ("HuggingFaceModel(hf_model, tokenizer=None)", "compile_config={}", "  # expect: CAL002"),
        ("ComposerClassifier(Inner(), num_classes=10)", "compile_config=None", "  # ok: not compiled"),
    ],
)
def test_composer_trainer_on_a_library_model(model, arguments, marker, tmp_path):
    """composer's own model classes built directly (its documented way to train a plain module or a
    Hugging Face model) are modules the Trainer compiles and runs under its precision."""
    code = (
        "import torch\nfrom torch import nn\nfrom composer import Trainer\n"
        "from composer.models import ComposerClassifier, HuggingFaceModel\n\n\n"
        "class Inner(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.l = nn.Linear(4, 10)\n\n"
        "    def forward(self, x):\n        return self.l(x)\n\n\n"
        f"def main(loader, hf_model):\n    trainer = Trainer(model={model}, train_dataloader=loader, "
        f"precision='amp_bf16', {arguments})\n    trainer.fit(){marker}\n"
    )
    _check(code, tmp_path)


@pytest.mark.parametrize("name", sorted(fw.CLASS_BY_NAME["composer.Trainer"].names))
def test_composer_trainer_names(name, tmp_path):
    module, cls = name.rsplit(".", 1)
    code = COMPOSER + f"from {module} import {cls} as T\n\n\ndef main(loader):\n"
    code += "    T(model=Net(), precision='amp_bf16', compile_config={}).fit()  # expect: CAL002\n"
    _check(code, tmp_path)


@pytest.mark.parametrize("dotted", [False, True], ids=["imported", "dotted"])
@pytest.mark.parametrize("name", sorted(fw.MODULE_BASES))
def test_a_class_on_a_library_module_base_is_a_module(name, dotted, tmp_path):
    """accelerate wraps what ``prepare`` gets in its autocast when it is a module: a project class
    built on ``PreTrainedModel``, ``ModelMixin`` or ``ComposerModel`` is one, imported by name or
    spelled through its package (``class Net(composer.models.ComposerModel)``)."""
    module, cls = name.rsplit(".", 1)
    imported = f"import {module.split('.')[0]}" if dotted else f"from {module} import {cls}"
    base = name if dotted else cls
    code = (
        f"import torch\nfrom torch import nn\nfrom accelerate import Accelerator\n{imported}\n\n\n"
        f"class Net({base}):\n    def __init__(self):\n        super().__init__()\n        self.l = nn.LayerNorm(4)\n\n"
        "    def forward(self, x):\n        return self.l(x).sum()\n\n\n"
        "def train(loader):\n    accelerator = Accelerator(mixed_precision='bf16', dynamo_backend='inductor')\n"
        "    model = accelerator.prepare(torch.compile(Net()))\n    for x in loader:\n"
        "        accelerator.backward(model(x))  # expect: CAL002\n"
    )
    _check(code, tmp_path)


# -- a framework's own sources in the checked tree ---------------------------------------------------------


@pytest.mark.parametrize("package", sorted(fw.FRAMEWORK_PACKAGES))
def test_framework_packages_are_external_even_when_their_sources_are_checked(package):
    """A clone of accelerate or Lightning (or a vendored copy) is checked with its classes known by
    the rows, as in a user's project, instead of walking their sources from every script."""
    from compile_ad_lint.knowledge.torch_api import is_external_root

    assert is_external_root(package) and is_external_root(f"{package}.sub.module")


def test_a_local_copy_of_accelerate_is_known_by_its_rows(tmp_path):
    """The local ``accelerate/`` here does nothing a real one does: the finding comes from the rows."""
    (tmp_path / "pyproject.toml").write_text("[tool.compile-ad-lint]\n")
    package = tmp_path / "accelerate"
    package.mkdir()
    (package / "__init__.py").write_text(
        "class Accelerator:\n    def __init__(self, **kwargs):\n        pass\n\n"
        "    def prepare(self, *models):\n        return None\n\n    def backward(self, loss):\n        pass\n"
    )
    (tmp_path / "train.py").write_text(
        NET
        + "from accelerate import Accelerator\n\n\n"
        + "def main(x):\n    accelerator = Accelerator(mixed_precision='bf16')\n"
        + "    model = accelerator.prepare(torch.compile(Net()))\n"
        + "    loss = model(x)\n    accelerator.backward(loss)\n"
    )
    from compile_ad_lint import load_config
    from compile_ad_lint.api import Analyzer

    report = Analyzer(load_config(tmp_path), use_cache=False, jobs=1).check([str(tmp_path)])
    assert [(f.code, f.location.line) for f in report.findings] == [("CAL002", 21)]
