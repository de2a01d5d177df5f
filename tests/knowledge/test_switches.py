"""Run-time switches (``knowledge/switches.py``, ``linking/analyses/switches.py``): a branch on a value the
user sets at launch may take either arm, and a finding that holds on one arm names the condition.

Every name of every row has a case here, analyzed through the public API: a small training step
that compiles its model only ``if <switch>:`` (the code's default keeps it uncompiled or gives no
value), so the CAL002 finding must be reported and carry the switch in ``conditions`` and in its
message; next to it, the near miss where nothing can rebind the value.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from compile_ad_lint import Config
from compile_ad_lint.api import Analyzer
from compile_ad_lint.core.findings import Condition, Severity
from compile_ad_lint.knowledge import switches
from compile_ad_lint.testing import expected_in, reported, write_files

NET = """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)
"""


def _step(test: str, marker: str = "  # expect: CAL002", indent: str = "    ") -> str:
    """A training step compiling its model on ``if <test>:``: forward under autocast, backward outside."""
    return textwrap.indent(
        textwrap.dedent(f"""
        model = Net()
        if {test}:
            model = torch.compile(model)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(x).sum()
        loss.backward(){marker}
        """).strip("\n"),
        indent,
    )


def _analyze(root: Path, files: dict[str, str]):
    write_files(root, {name: textwrap.dedent(text).lstrip("\n") for name, text in files.items()})
    report = Analyzer(Config(), use_cache=False, jobs=1).check([str(root)])
    expected: set = set()
    for path in sorted(root.rglob("*.py")):
        expected |= expected_in(path)
    return report, expected


def _expression(name: str) -> tuple[str, str]:
    """``(import line, call)`` reaching the qualified ``name`` through an aliased import of its top
    module, instantiating the classes on the way (``argparse.ArgumentParser().parse_args()``)."""
    parts = name.split(".")
    expression = "alias"
    for part in parts[1:-1]:
        expression += f".{part}()" if part[:1].isupper() else f".{part}"
    return f"import {parts[0]} as alias", f"{expression}.{parts[-1]}()"


SETTINGS_CALL_NAMES = sorted(switches.SETTINGS_CALL_BY_NAME)


@pytest.mark.parametrize("name", SETTINGS_CALL_NAMES)
def test_settings_call_rows(name, tmp_path):
    imported, call = _expression(name)
    program = f"{NET}{imported}\n\n\ndef train(x):\n    settings = {call}\n{_step('settings.compile')}\n"
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    (finding,) = report.findings
    assert finding.conditions == (Condition("settings.compile", True, None),)
    assert finding.message.startswith("When `settings.compile` is set: ")


def test_settings_object_row(tmp_path):
    step = _step('alias.environ["COMPILE"]')
    program = f"{NET}import os as alias\n\n\ndef train(x):\n{step}\n"
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    assert [f.conditions for f in report.findings] == [(Condition("alias.environ['COMPILE']", True, None),)]
    assert set(switches.SETTINGS_OBJECTS) == {"os.environ"}  # one case per row: add one for a new row


def test_a_computed_value_is_followed_but_not_named(tmp_path):
    """``ddp = int(os.environ.get("RANK", -1)) != -1``: unknown data, both arms, nothing named."""
    program = f'{NET}import os\n\n\ndef train(x):\n    ddp = int(os.environ.get("RANK", -1)) != -1\n{_step("ddp")}\n'
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    assert [f.conditions for f in report.findings] == [()]


DECORATED = {
    "hydra.main": ("import hydra as alias", "@alias.main(config_path=None)"),
    "click.command": ("import click as alias", "@alias.command()"),
    "click.option": ("import click as alias", '@alias.option("--compile", is_flag=True)'),
    "click.argument": ("import click as alias", '@alias.argument("compile")'),
    "click.group": ("import click as alias", "@alias.group()"),
    "typer.Typer.command": ("import typer as alias\n\napp = alias.Typer()", "@app.command()"),
    "typer.Typer.callback": ("import typer as alias\n\napp = alias.Typer()", "@app.callback()"),
    "draccus.wrap": ("import draccus as alias", "@alias.wrap()"),
    "pyrallis.wrap": ("import pyrallis as alias", "@alias.wrap()"),
}


def test_every_settings_decorator_has_a_case():
    assert set(DECORATED) == set(switches.SETTINGS_DECORATOR_BY_NAME)


@pytest.mark.parametrize("name", sorted(DECORATED))
def test_settings_decorator_rows(name, tmp_path):
    imported, decorator = DECORATED[name]
    program = f"{NET}{imported}\n\n\n{decorator}\ndef main(cfg, x):\n{_step('cfg.compile')}\n\n\nmain()\n"
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    assert [f.conditions for f in report.findings] == [(Condition("cfg.compile", True, None),)]


def test_an_entry_points_unbound_parameter_is_a_switch(tmp_path):
    """``main(cfg, x)`` that nothing in the project calls: ``cfg`` is set by whoever calls it."""
    program = f"{NET}\n\ndef main(cfg, x):\n{_step('cfg.compile')}\n"
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    assert [f.conditions for f in report.findings] == [(Condition("cfg.compile", True, None),)]


def test_a_config_read_from_a_file_and_passed_to_the_entry_point(tmp_path):
    """V-JEPA 2's ``main(args)``: walked as an entry point (``args`` unknown) and from the launcher
    (``args`` from ``yaml.load``); both paths name the same switch."""
    program = f"""{NET}
import yaml


def main(args, x):
    compile_model = args.get("model").get("compile_model", False)
{_step("compile_model")}


if __name__ == "__main__":
    with open("config.yaml") as f:
        main(yaml.safe_load(f), torch.randn(2, 4))
"""
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    assert [f.conditions for f in report.findings] == [(Condition("compile_model", True, None),)]


CONFIG_CLASS_CASES = [
    *((name, f"@alias.{name.split('.', 1)[1]}\nclass Cfg:") for name in sorted(switches.CONFIG_CLASS_DECORATORS)),
    *((name, f"class Cfg(alias.{name.split('.', 1)[1]}):") for name in sorted(switches.CONFIG_CLASS_BASES)),
]


@pytest.mark.parametrize(("name", "head"), CONFIG_CLASS_CASES, ids=[name for name, _ in CONFIG_CLASS_CASES])
def test_config_class_rows(name, head, tmp_path):
    """A config class's field defaults to False: the compiled path runs when the user sets it."""
    program = (
        f"{NET}import {name.split('.')[0]} as alias\n\n\n{head}\n    compile: bool = False\n    mode: str = 'x'\n\n\n"
        f"def train(x):\n    cfg = Cfg()\n{_step('cfg.compile')}\n"
    )
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    (finding,) = report.findings
    assert finding.conditions == (Condition("cfg.compile", True, False),)
    assert finding.message.startswith("When `cfg.compile` is set (not the default): ")


def test_a_plain_class_attribute_is_a_constant(tmp_path):
    program = (
        f"{NET}\n\nclass Cfg:\n    compile = False\n\n\n"
        f"def train(x):\n    cfg = Cfg()\n{_step('cfg.compile', '  # ok: nothing sets a plain class attribute')}\n"
    )
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert report.findings == () and expected == set()


def test_an_inherited_config_field_is_a_switch(tmp_path):
    program = (
        f"{NET}from dataclasses import dataclass\n\n\n@dataclass\nclass Base:\n    compile: bool = False\n\n\n"
        f"@dataclass\nclass Cfg(Base):\n    lr: float = 1e-3\n\n\n"
        f"def train(x):\n    cfg = Cfg()\n{_step('cfg.compile')}\n"
    )
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected


@pytest.mark.parametrize("row", switches.GLOBAL_REBINDERS, ids=lambda row: f"{row.function}.{row.method}")
def test_global_rebinder_rows(row, tmp_path):
    call = "exec(open('configurator.py').read())" if row.method is None else f"{row.function[9:]}().update({{}})"
    program = f"{NET}\ncompile_model = False\n{call}\n\nx = torch.randn(2, 4)\n{_step('compile_model', indent='')}\n"
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    (finding,) = report.findings
    assert finding.conditions == (Condition("compile_model", True, False),)


def test_a_global_given_after_the_rebinder_is_a_constant(tmp_path):
    program = (
        f"{NET}\nexec(open('configurator.py').read())\ncompile_model = False\n\nx = torch.randn(2, 4)\n"
        f"{_step('compile_model', '  # ok: set after the configurator ran', indent='')}\n"
    )
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert report.findings == () and expected == set()


def test_a_module_constant_without_a_rebinder_decides_the_branch(tmp_path):
    """build-nanogpt's ``use_compile = False``: nothing can set it, the compiled path never runs."""
    program = (
        f"{NET}\nuse_compile = False\nx = torch.randn(2, 4)\n{_step('use_compile', '  # ok: a constant', indent='')}\n"
    )
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert report.findings == () and expected == set()


def test_both_arms_of_a_switch_are_followed_and_named(tmp_path):
    """nanoGPT's bench.py: ``profile = False`` hid the profiled loop; each loop is its own finding."""
    program = f"""{NET}
compile = True
profile = False
exec(open("configurator.py").read())

x = torch.randn(2, 4)
model = Net()
if compile:
    model = torch.compile(model)
if not profile:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x).sum()
    loss.backward()  # expect: CAL002
else:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x).sum()
    loss.backward()  # expect: CAL002
"""
    report, expected = _analyze(tmp_path, {"bench.py": program})
    assert reported(report.findings) == expected
    by_line = {f.location.line: f for f in report.findings}
    first, second = (by_line[line] for line, _ in sorted((k[1], k) for k in expected))
    assert first.conditions == (Condition("compile", True, True), Condition("profile", False, True))
    assert second.conditions == (Condition("compile", True, True), Condition("profile", True, False))
    assert first.message.startswith("When `compile` and not `profile`: ")
    assert any("`compile` is set (the default) and `profile` is not set (the default)" in d for d in first.details)


def test_a_finding_on_every_path_names_nothing(tmp_path):
    """One compile under the switch and one without: the finding holds whatever the user sets."""
    program = f"""{NET}
import argparse


def train(x):
    args = argparse.ArgumentParser().parse_args()
    model = torch.compile(Net())
    if args.fast:
        model = torch.compile(Net(), mode="max-autotune")
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x).sum()
    loss.backward()  # expect: CAL002
"""
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    assert [f.conditions for f in report.findings] == [()]


def test_a_helper_called_on_the_arm_compiles_under_its_condition(tmp_path):
    """``if args.compile: model = compile_model(model)``: the helper compiles unconditionally, what it
    returns into the arm exists on that arm only."""
    program = f"""{NET}
import argparse


def compile_model(model):
    return torch.compile(model, mode="max-autotune")


def train(x):
    args = argparse.ArgumentParser().parse_args()
    model = Net()
    if args.compile:
        model = compile_model(model)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x).sum()
    loss.backward()  # expect: CAL002
"""
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    assert [f.conditions for f in report.findings] == [(Condition("args.compile", True, None),)]


def test_what_a_helper_stores_on_an_object_on_the_arm_carries_its_condition(tmp_path):
    """``if args.compile: apply_compile(model)`` with ``model.layers[i] = torch.compile(block)``
    inside (torchtitan's shape), in another file: the blocks are compiled on that arm only, so the
    finding names the switch. The near miss, the same helper called on every path, names nothing."""
    files = {
        "parallel.py": """
            import torch


            def apply_compile(model):
                for i, block in enumerate(model.layers):
                    model.layers[i] = torch.compile(block)
            """,
        "train.py": """
            import argparse

            import torch
            from torch import nn

            from parallel import apply_compile


            class Stack(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(2)])

                def forward(self, x):
                    for layer in self.layers:
                        x = layer(x)
                    return x


            class Tower(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(2)])

                def forward(self, x):
                    for layer in self.layers:
                        x = layer(x)
                    return x


            def main(x):
                args = argparse.ArgumentParser().parse_args()
                model = Stack()
                if args.compile:
                    apply_compile(model)
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    loss = model(x).sum()
                loss.backward()  # expect: CAL002


            def always(x):
                tower = Tower()
                apply_compile(tower)
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    loss = tower(x).sum()
                loss.backward()  # expect: CAL002
            """,
    }
    report, expected = _analyze(tmp_path, files)
    assert reported(report.findings) == expected
    by_line = {f.location.line: f.conditions for f in report.findings}
    assert sorted(by_line.values(), key=len) == [(), (Condition("args.compile", True, None),)]


def test_what_a_method_stores_on_self_on_the_arm_carries_its_condition(tmp_path):
    """``if cfg.compile: self.wrapper.compile_model()`` where the wrapper's method rebinds its own
    attribute: compiled on that arm only."""
    program = f"""{NET}
import argparse


class Wrapper:
    def __init__(self):
        self.net = Net()

    def compile_model(self):
        self.net = torch.compile(self.net)


def train(x):
    args = argparse.ArgumentParser().parse_args()
    wrapper = Wrapper()
    if args.compile:
        wrapper.compile_model()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = wrapper.net(x).sum()
    loss.backward()  # expect: CAL002
"""
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    assert [f.conditions for f in report.findings] == [(Condition("args.compile", True, None),)]


def test_a_method_the_constructor_calls_on_the_arm_is_no_entry_of_its_own(tmp_path):
    """A trainer whose constructor runs ``if args.compile: self._compile_model()`` and whose own
    ``step`` runs the backward: the class holds an anchor, so its methods are entry points, but a
    method another method calls on ``self`` is walked from there only; walked as an entry of its
    own it compiled the model on every run. The near miss: ``compile_blocks``, which nothing in
    the class calls, is still an entry (a caller outside may call it): its compile counts."""
    program = f"""{NET}
import argparse


class Trainer:
    def __init__(self, args):
        self.model = Net()
        if args.compile:
            self._compile_model()

    def _compile_model(self):
        self.model = torch.compile(self.model)

    def step(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = self.model(x).sum()
        loss.backward()  # expect: CAL002


class Other:
    def __init__(self):
        self.model = Net()

    def compile_blocks(self):
        self.model = torch.compile(self.model)

    def step(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = self.model(x).sum()
        loss.backward()  # expect: CAL002


def main(x):
    args = argparse.ArgumentParser().parse_args()
    Trainer(args).step(x)
"""
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    assert sorted(f.conditions for f in report.findings) == [(), (Condition("args.compile", True, None),)]


def test_the_arm_helpers_fixture_names_each_switch():
    """``fixtures/cal002_arm_helpers.py``: each finding names the switch its marker's comment
    gives (``(when args.compile is set)``) and no other; the near misses name none."""
    fixture = Path(__file__).resolve().parents[2] / "fixtures" / "cal002_arm_helpers.py"
    report = Analyzer(Config(), use_cache=False, jobs=1).check([str(fixture)])
    lines = fixture.read_text().splitlines()
    assert reported(report.findings) == expected_in(fixture, str(fixture))
    for finding in report.findings:
        named = re.search(r"\(when (\S+) is set\)", lines[finding.location.line - 1])
        want = (Condition(named.group(1), True, None),) if named else ()
        assert finding.conditions == want, lines[finding.location.line - 1]


def test_a_switch_around_a_call_is_not_named_in_the_callee(tmp_path):
    """``if args.amp: train_amp(model, x)``: the backward inside the callee is found; the caller's
    switch is not carried into callees (their walks would split per switch: 44 % more walks on
    pytorch-image-models' train.py), so it is not named."""
    program = f"""{NET}
import argparse


def train_amp(model, x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x).sum()
    loss.backward()  # expect: CAL002


def main(x):
    args = argparse.ArgumentParser().parse_args()
    model = torch.compile(Net())
    if args.amp:
        train_amp(model, x)
"""
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    assert {f.conditions for f in report.findings} == {()}


def test_create_graph_switch_is_a_warning_that_names_it(tmp_path):
    """``create_graph=second_order``: the double backward fails only when it is true (CAL004)."""
    program = f"""{NET}

def step(x, second_order):
    model = torch.compile(Net())
    loss = model(x).sum()
    loss.backward(create_graph=second_order)  # expect: CAL004
"""
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    (finding,) = report.findings
    assert finding.severity is Severity.WARNING
    assert finding.conditions == (Condition("second_order", True, None),)
    assert finding.message.startswith("When `second_order` is set: ")
    assert "fails when it is true at run time" in " ".join(finding.details)


def test_create_graph_true_stays_an_error(tmp_path):
    program = f"{NET}\n\ndef step(x):\n    loss = torch.compile(Net())(x).sum()\n    loss.backward(create_graph=True)  # expect: CAL004\n"
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    assert [(f.severity, f.conditions) for f in report.findings] == [(Severity.ERROR, ())]


def test_conditions_in_json_and_sarif(tmp_path):
    program = f"{NET}import argparse\n\n\ndef train(x):\n    args = argparse.ArgumentParser().parse_args()\n{_step('args.compile')}\n"
    write_files(tmp_path, {"train.py": program})
    command = [sys.executable, "-m", "compile_ad_lint", "check", ".", "--no-cache", "--format"]
    document = json.loads(subprocess.run([*command, "json"], cwd=tmp_path, capture_output=True, text=True).stdout)
    (finding,) = document["findings"]
    assert finding["conditions"] == [{"expression": "args.compile", "holds": True, "default": None}]
    assert finding["message"].startswith("When `args.compile` is set: ")
    sarif = json.loads(subprocess.run([*command, "sarif"], cwd=tmp_path, capture_output=True, text=True).stdout)
    (result,) = sarif["runs"][0]["results"]
    assert result["properties"]["conditions"] == finding["conditions"]


def test_condition_wording():
    assert Condition("args.compile").describe() == "`args.compile` is set"
    assert Condition("args.compile", False, True).describe() == "`args.compile` is not set (the default)"
    assert Condition("cfg.dtype == 'bf16'", True, False).describe() == "`cfg.dtype == 'bf16'` holds (not the default)"
    assert Condition("os.getenv('X')", False).describe() == "`os.getenv('X')` does not hold"


def test_cal001_names_the_switch(tmp_path):
    program = """
import argparse

import torch
import torch.autograd.forward_ad as fwAD


def f(x):
    return x.sin()


def probe(x, t):
    args = argparse.ArgumentParser().parse_args()
    g = f
    if args.compile:
        g = torch.compile(f)
    with fwAD.dual_level():
        return g(fwAD.make_dual(x, t))  # expect: CAL001
"""
    report, expected = _analyze(tmp_path, {"probe.py": program})
    assert reported(report.findings) == expected
    assert [f.conditions for f in report.findings] == [(Condition("args.compile", True, None),)]
    assert report.findings[0].message.startswith("When `args.compile` is set: ")


BUILDING_ROWS = sorted(
    (name, row.builds) for row in switches.SETTINGS_CALLS if row.builds is not None for name in row.names
)


@pytest.mark.parametrize(("name", "builds"), BUILDING_ROWS, ids=[name for name, _ in BUILDING_ROWS])
def test_settings_calls_that_fill_a_config_class(name, builds, tmp_path):
    """``tyro.cli(TrainConfig)``: an instance of the class, so the field's default is known."""
    imported, call = _expression(name)
    keyword, _ = builds
    call = call[:-2] + f"({keyword}=Cfg)"
    program = (
        f"{NET}from dataclasses import dataclass\n{imported}\n\n\n@dataclass\nclass Cfg:\n    compile: bool = False\n\n\n"
        f"def train(x):\n    cfg = {call}\n{_step('cfg.compile')}\n"
    )
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    assert [f.conditions for f in report.findings] == [(Condition("cfg.compile", True, False),)]


FIELD_ROWS = sorted((name, row) for row in switches.FIELD_DEFAULTS for name in row.names)


@pytest.mark.parametrize(("name", "row"), FIELD_ROWS, ids=[name for name, _ in FIELD_ROWS])
def test_field_default_rows(name, row, tmp_path):
    """A nested config made by a field specifier's factory: its fields are switches with defaults."""
    module, function = name.rsplit(".", 1)
    program = (
        f"{NET}from dataclasses import dataclass\nfrom {module} import {function} as spec\n\n\n"
        f"@dataclass\nclass ModelCfg:\n    compile: bool = True\n\n\n"
        f"@dataclass\nclass Cfg:\n    model: ModelCfg = spec({row.factory}=ModelCfg)\n    lr: float = spec({row.default}=0.1)\n\n\n"
        f"def train(x):\n    cfg = Cfg()\n{_step('cfg.model.compile')}\n"
    )
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    assert [f.conditions for f in report.findings] == [(Condition("cfg.model.compile", True, True),)]


def test_a_constructor_runs_for_every_instance(tmp_path):
    """A library class's method walked as an entry point (its instance built elsewhere, through a
    call the analysis does not follow): its ``__init__`` ran, so what it compiles counts."""
    program = f"""{NET}

class Runner:
    def __init__(self, compile_model=None):
        self.model = Net()
        if compile_model:
            self.model = torch.compile(self.model)

    def step(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = self.model(x).sum()
        loss.backward()  # expect: CAL002
"""
    report, expected = _analyze(tmp_path, {"runner.py": program})
    assert reported(report.findings) == expected


def test_a_library_method_nothing_calls_compiles_nothing(tmp_path):
    library = f"""{NET}

class Runner(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.head = Net()

    def compile_head(self):
        self.head = torch.compile(self.head)

    def forward(self, x):
        return self.head(x)
"""
    script = """
import torch
from lib import Runner


def step(x):
    runner = Runner()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = runner(x).sum()
    loss.backward()  # ok: nothing calls compile_head
"""
    report, expected = _analyze(tmp_path, {"lib.py": library, "train.py": script})
    assert report.findings == () and expected == set()
    called = script.replace("    runner = Runner()\n", "    runner = Runner()\n    runner.compile_head()\n")
    called = called.replace("  # ok: nothing calls compile_head", "  # expect: CAL002")
    report, expected = _analyze(tmp_path, {"lib.py": library, "train.py": called})
    assert reported(report.findings) == expected and expected


def test_a_notebook_config_field_defaulting_to_false(tmp_path):
    """A training notebook: ``if train_cfg.compile:`` with a dataclass field defaulting to False hid
    the finding; the field is a switch, the finding names it (not the default)."""
    cells = [
        "import torch\nfrom dataclasses import dataclass\nfrom torch import nn",
        "@dataclass\nclass TrainConfig:\n    compile: bool = False\n\ntrain_cfg = TrainConfig()",
        NET.strip() + "\n\nmodel = Net()\nif train_cfg.compile:\n    model = torch.compile(model)",
        "x = torch.randn(2, 4)\nwith torch.autocast('cpu', dtype=torch.bfloat16):\n    loss = model(x).sum()\nloss.backward()",
    ]
    notebook = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "source": c, "outputs": [], "execution_count": None} for c in cells
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "train.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    report = Analyzer(Config(), use_cache=False, jobs=1).check([str(tmp_path)])
    [finding] = report.findings
    assert (finding.code, finding.location.cell, finding.location.line) == ("CAL002", 4, 4)
    assert finding.conditions == (Condition("train_cfg.compile", True, False),)


# -- what a run computes is not a launch setting ----------------------------------------------------

COMPUTED_TEST = """
def measure(args, batches):
    model = Net()
    if args.compile:
        model = torch.compile(model)
    for x in batches:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(x).sum() if x is not None else None
        if loss is not None:
            loss.backward()  # expect: CAL002
"""


def test_a_branch_on_what_a_compiled_call_computed_is_not_named_as_a_setting(tmp_path):
    """huggingface/nanoVLM's eval/measure_vram.py, walked as an entry point (its ``args`` unbound):
    ``if loss is not None:`` on the compiled model's loss read as a launch switch, and the finding
    said "When `args.compile` is set and `loss is not None` holds". The loss is what the run
    computes; the branch may take either arm, and only ``args.compile`` is a setting."""
    report, expected = _analyze(tmp_path, {"measure.py": NET + COMPUTED_TEST})
    assert reported(report.findings) == expected
    [finding] = report.findings
    assert finding.conditions == (Condition("args.compile", True, None),)


MANY_SWITCHES = """
def train(settings, batches):
    model = Net()
    if settings.compile_the_model_before_distributed_wrapping:
        model = torch.compile(model)
    for x in batches:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=settings.autocast_dtype is not None):
            loss = model(x).sum()
        if settings.use_gradient_scaler:
            loss.backward()  # expect: CAL002
"""


def test_a_headline_that_cannot_name_its_switches_counts_them(tmp_path):
    """kylevedder/DenoisingZoo's train.py: three switches named in full did not fit a headline,
    which then read as if the finding held on every run. It counts them; the details name them."""
    report, expected = _analyze(tmp_path, {"train.py": NET + MANY_SWITCHES})
    assert reported(report.findings) == expected
    [finding] = report.findings
    assert len(finding.conditions) == 3
    assert finding.message.startswith("When 3 run-time switches hold: ")
    assert finding.details[0].startswith("When `settings.autocast_dtype is not None` holds and ")


ARM_CONTEXT = """
import argparse
from contextlib import nullcontext

parser = argparse.ArgumentParser()
parser.add_argument("--precision", default="fp32")
args = parser.parse_args()


def train(x):
    model = torch.compile(Net())
    if args.precision == "bf16":
        precision_context = torch.autocast("cpu", dtype=torch.bfloat16)
    else:
        precision_context = nullcontext()
    with precision_context:
        loss = model(x).sum()
    loss.backward()  # expect: CAL002
"""


def test_an_autocast_made_on_a_switchs_arm_and_entered_after_it_names_the_arm(tmp_path):
    """NVIDIA/physicsnemo's darcy trainer makes ``precision_context`` on its ``cfg.precision`` arms
    and enters it after the branch: its CAL002 claimed the bf16 autocast on every run."""
    report, expected = _analyze(tmp_path, {"train.py": NET + ARM_CONTEXT})
    assert reported(report.findings) == expected
    [finding] = report.findings
    assert [(c.expression, c.holds) for c in finding.conditions] == [("args.precision == 'bf16'", True)]


COMPUTED_LOCALS = """
def distill(batches, num_output_frames, exit_flags, accumulation):
    model = torch.compile(Net())
    start_gradient_frame_index = max(0, num_output_frames - 21)
    current_start_frame = 0
    for index, x in enumerate(batches):
        exit_flag = index == exit_flags[0]
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(x).sum()
        if current_start_frame < start_gradient_frame_index and exit_flag:
            loss.backward()  # expect: CAL002
        current_start_frame += 1
"""


def test_a_branch_on_what_a_function_computes_from_its_parameters_is_not_a_switch(tmp_path):
    """hao-ai-lab/FastVideo's distillation pipeline, walked as an entry point: a frame counter, a
    bound computed from a parameter and a flag comparing the loop's index were named as run-time
    switches ("When `current_start_frame < start_gradient_frame_index` does not hold and
    `exit_flag` is set..."). They are computed by the run; the branch may go either way, unnamed.
    A local that reads a parameter's setting still is one (V-JEPA 2's ``compile_model``, above)."""
    report, expected = _analyze(tmp_path, {"distill.py": NET + COMPUTED_LOCALS})
    assert reported(report.findings) == expected
    [finding] = report.findings
    assert finding.conditions == ()


# -- autocast switched by a flag --------------------------------------------------------------------

AMP_FLAG = """
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--amp", default="none")
args = parser.parse_args()


def train(x, use_amp, step):
    model = torch.compile(Net())
{body}
"""


@pytest.mark.parametrize(
    ("body", "conditions"),
    [
        # The forward's autocast is on only when the flag is: so is the finding.
        (
            '    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=use_amp):\n'
            "        loss = model(x).sum()\n    loss.backward()  # expect: CAL002\n",
            [Condition("use_amp", True, None)],
        ),
        # torchao's benchmark: ``enabled=amp != "none"`` with an argparse default of "none".
        (
            '    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.amp != "none"):\n'
            "        loss = model(x).sum()\n    loss.backward()  # expect: CAL002\n",
            [Condition("args.amp != 'none'", True, None)],
        ),
        # The backward's autocast switched by a flag, the forward plain.
        (
            "    loss = model(x).sum()\n"
            '    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=step.amp):\n'
            "        loss.backward()  # expect: CAL002\n",
            [Condition("step.amp", True, None)],
        ),
        # Inside ``if use_amp:`` the flag is known on: nothing to name.
        (
            "    if use_amp:\n"
            '        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=use_amp):\n'
            "            loss = model(x).sum()\n        loss.backward()  # expect: CAL002\n",
            [Condition("use_amp", True, None)],
        ),
        # A literal: on, unconditionally.
        (
            '    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=True):\n'
            "        loss = model(x).sum()\n    loss.backward()  # expect: CAL002\n",
            [],
        ),
        # kylevedder/DenoisingZoo: on when a dtype was chosen.
        (
            '    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=step.dtype is not None):\n'
            "        loss = model(x).sum()\n    loss.backward()  # expect: CAL002\n",
            [Condition("step.dtype is not None", True, None)],
        ),
        # A flag that turns it off.
        (
            '    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=not args.no_amp):\n'
            "        loss = model(x).sum()\n    loss.backward()  # expect: CAL002\n",
            [Condition("not args.no_amp", True, None)],
        ),
        # FoundationVision/VAR: a level compared with a number.
        (
            '    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.fp16 > 0):\n'
            "        loss = model(x).sum()\n    loss.backward()  # expect: CAL002\n",
            [Condition("args.fp16 > 0", True, None)],
        ),
        # Compared with what is not a literal: not a test the message can name; on, as before.
        (
            '    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=step.dtype is not torch.float32):\n'
            "        loss = model(x).sum()\n    loss.backward()  # expect: CAL002\n",
            [],
        ),
    ],
    ids=[
        "parameter",
        "compared-setting",
        "backward-side",
        "inside-its-if",
        "literal",
        "is-not-none",
        "not-flag",
        "compared-level",
        "not-literal",
    ],
)
def test_an_autocast_switched_by_a_flag_names_it(body, conditions, tmp_path):
    """A finding that takes ``torch.autocast(..., enabled=<flag>)`` as on holds only when the flag
    is: it says so (torchao's benchmark_low_bit_adam claimed autocast on with ``--amp`` at its
    default "none")."""
    report, expected = _analyze(tmp_path, {"train.py": NET + AMP_FLAG.format(body=body)})
    assert reported(report.findings) == expected
    assert [list(f.conditions) for f in report.findings] == [conditions]


EARLY_RETURN = """
def compile_model(m, fast):
    if fast == 0:
        return m
    return torch.compile(m)


def train(args, x):
    model = compile_model(Net(), args.tfast)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model.forward(x).sum()
    loss.backward()  # expect: CAL002
"""


def test_what_follows_an_early_return_on_a_switch_holds_on_the_other_arm(tmp_path):
    """VAR's ``Args.compile_model``: ``if fast == 0: return m`` leaves the compile to the runs where
    the test does not hold (the walk goes on past a return; the statements after it carry that).
    The compiled module is called through ``forward`` (``OptimizedModule.forward`` is compiled)."""
    report, expected = _analyze(tmp_path, {"train.py": NET + EARLY_RETURN})
    assert reported(report.findings) == expected
    assert [list(f.conditions) for f in report.findings] == [[Condition("fast == 0", False, None)]]
    assert report.findings[0].message.startswith("When `fast == 0` does not hold: ")


CONDITIONAL_FORWARD = """
class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.compile(nn.Linear(4, 4))

    def forward(self, x):
        return self.fc(x)


def train(args, x):
    model = Inner()
    if args.compile:
        model = torch.compile(model)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model.forward(x).sum()
    loss.backward()  # expect: CAL002
"""


def test_forward_of_a_module_compiled_on_a_switch_runs_its_own_forward_on_the_other_arm(tmp_path):
    """Where ``args.compile`` is off, ``model.forward`` is the module's own, which calls its compiled
    layer: the finding holds on both arms and names no switch."""
    report, expected = _analyze(tmp_path, {"train.py": NET + CONDITIONAL_FORWARD})
    assert reported(report.findings) == expected
    assert [list(f.conditions) for f in report.findings] == [[]]


LOOP_CARRIED = """
def train(loader):
    model = torch.compile(Net())
    step = 0
    for x in loader:
        if step {op} 5:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = model(x).sum()
            loss.backward()  # expect: CAL002
        step += 1
"""


@pytest.mark.parametrize("op", ["==", ">", "<="])
def test_a_literal_the_loop_rebinds_does_not_decide_a_test_in_it(op, tmp_path):
    """``step = 0`` before the loop, ``step += 1`` in it: ``if step > 5:`` is taken in later
    iterations, whatever the first one's literal decides."""
    report, expected = _analyze(tmp_path, {"train.py": NET + LOOP_CARRIED.format(op=op)})
    assert reported(report.findings) == expected
    assert [list(f.conditions) for f in report.findings] == [[]]


def test_a_comparison_of_literals_decides_its_branch(tmp_path):
    """``world_size = 1`` and ``if world_size > 1:`` takes the ``else`` arm, as Python does."""
    program = NET + textwrap.dedent("""
        def train(x):
            model = Net()
            world_size = 1
            if world_size > 1:
                model = torch.compile(model)
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = model(x).sum()
            loss.backward()
    """)
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected == set()


BARE_RETURN = """
def main(args, x):
    if args.debug_dataset:
        print("dataset only")
        return
    model = Net()
    if args.compile:
        model = torch.compile(model)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x).sum()
    loss.backward()  # expect: CAL002
"""


def test_a_bare_return_on_a_switch_is_not_named(tmp_path):
    """kohya-ss/sd-scripts' ``if args.debug_dataset: ...; return`` ends a mode of the script, not a
    choice of result: the finding names the compile's switch only."""
    report, expected = _analyze(tmp_path, {"train.py": NET + BARE_RETURN})
    assert reported(report.findings) == expected
    assert [list(f.conditions) for f in report.findings] == [[Condition("args.compile", True, None)]]


@pytest.mark.parametrize("row", switches.SELF_RETURNING_METHODS, ids=lambda row: f"{row.base}.{row.method}")
def test_a_settings_method_returning_the_instance_keeps_the_class(row, tmp_path):
    """FoundationVision/VAR's ``args = Args(explicit_bool=True).parse_args(known_only=True)`` on a
    ``Tap`` subclass: the result is the ``Args`` instance, its fields switches, its methods callable.
    The method's own ``... if self.compile else m`` is a switch too, named as it is written there."""
    module, cls = row.base.rsplit(".", 1)
    program = (
        f"{NET}from {module} import {cls}\n\n\nclass Args({cls}):\n    compile: bool = False\n\n"
        "    def compile_model(self, m):\n        return torch.compile(m) if self.compile else m\n\n\n"
        f"def train(x):\n    args = Args(explicit_bool=True).{row.method}(known_only=True)\n"
        "    model = Net()\n    if args.compile:\n        model = args.compile_model(model)\n"
        '    with torch.autocast("cpu", dtype=torch.bfloat16):\n        loss = model(x).sum()\n'
        "    loss.backward()  # expect: CAL002\n"
    )
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    assert [list(f.conditions) for f in report.findings] == [
        [Condition("args.compile", True, False), Condition("self.compile", True, False)]
    ]


PASSED_ON = """
from dataclasses import dataclass

USE_COMPILE = False


@dataclass
class Cfg:
    compile: bool = {default}


def maybe_compile(model, enabled):
    if enabled:
        return torch.compile(model)
    return model


def train(x):
    cfg = Cfg()
    model = maybe_compile(Net(), {argument})
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x).sum()
    loss.backward(){marker}
"""


@pytest.mark.parametrize(("default", "condition"), [("False", False), ("True", True)])
def test_a_config_field_passed_to_a_helper_stays_a_switch(default, condition, tmp_path):
    """``maybe_compile(model, cfg.compile)``: the helper's ``if enabled:`` branches on the field the
    user sets at launch, as ``if cfg.compile:`` would; its literal default does not decide it (with
    ``False`` the compile was missed), and the finding names the field, not the parameter."""
    program = NET + PASSED_ON.format(default=default, argument="cfg.compile", marker="  # expect: CAL002")
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    (finding,) = report.findings
    assert finding.conditions == (Condition("cfg.compile", True, condition),)
    default_words = "the default" if condition else "not the default"
    assert finding.message.startswith(f"When `cfg.compile` is set ({default_words}): ")


@pytest.mark.parametrize(
    "argument",
    ["False", "USE_COMPILE"],
    ids=["a literal", "a module constant"],
)
def test_a_literal_passed_to_a_helper_decides_its_branch(argument, tmp_path):
    """Near misses: a literal, or a module constant nothing rebinds, passed on decides the helper's
    ``if``: nothing the user sets reaches it."""
    program = NET + PASSED_ON.format(default="False", argument=argument, marker="  # ok: never compiled")
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert report.findings == () and expected == set()


def test_a_value_computed_from_a_config_field_and_passed_on_is_a_switch_named_by_the_parameter(tmp_path):
    """``maybe_compile(model, not cfg.no_compile)``: the caller computes a literal from the field, which
    the user may still change; the helper's branch names its own test (no expression to name)."""
    program = NET + PASSED_ON.format(
        default="True", argument="not cfg.no_compile", marker="  # expect: CAL002"
    ).replace("compile: bool = True", "no_compile: bool = True")
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    assert [f.conditions for f in report.findings] == [(Condition("enabled", True, False),)]


def test_a_plain_class_attribute_passed_to_a_helper_decides_its_branch(tmp_path):
    program = (NET + PASSED_ON.format(default="False", argument="cfg.compile", marker="  # ok: a constant")).replace(
        "@dataclass\n", ""
    )
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert report.findings == () and expected == set()


def test_a_rebindable_global_passed_to_a_helper_stays_a_switch(tmp_path):
    """nanoGPT's configurator: ``compile = False`` rebound by ``exec(open(...).read())``, passed on."""
    program = f"""{NET}
compile = False
exec(open("configurator.py").read())


def maybe_compile(model, enabled):
    if enabled:
        return torch.compile(model)
    return model


x = torch.randn(2, 4)
model = maybe_compile(Net(), compile)
with torch.autocast("cpu", dtype=torch.bfloat16):
    loss = model(x).sum()
loss.backward()  # expect: CAL002
"""
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    assert [f.conditions for f in report.findings] == [(Condition("compile", True, False),)]


STORED_FIELD = """
from dataclasses import dataclass


@dataclass
class Cfg:
    compile: bool = False


class Trainer:
    def __init__(self, model, use_compile):
        self.model = model
        self.use_compile = use_compile

    def step(self, x):
        model = self.model
        if self.use_compile:
            model = torch.compile(model)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(x).sum()
        loss.backward()  # expect: CAL002


def main(x):
    cfg = Cfg()
    if cfg.compile:
        print("compiling")
    Trainer(Net(), use_compile=cfg.compile).step(x)
"""


def test_a_config_field_stored_by_a_constructor_stays_a_switch(tmp_path):
    """``Trainer(model, use_compile=cfg.compile)`` then ``if self.use_compile:`` in a method: the
    attribute holds the field the user sets; the finding names the attribute as the code tests it
    (its default is not told: the method is also walked with the constructor's parameter unbound)."""
    report, expected = _analyze(tmp_path, {"train.py": NET + STORED_FIELD})
    assert reported(report.findings) == expected
    assert [f.conditions for f in report.findings] == [(Condition("self.use_compile", True, None),)]


def test_the_callers_test_and_the_helpers_are_one_condition(tmp_path):
    """``if cfg.compile: model = maybe_compile(model, cfg.compile)``: the helper's ``if enabled:`` is
    the caller's switch again, so the finding names it once."""
    program = NET + PASSED_ON.format(default="False", argument="cfg.compile", marker="  # expect: CAL002").replace(
        "    model = maybe_compile(Net(), cfg.compile)\n",
        "    model = Net()\n    if cfg.compile:\n        model = maybe_compile(model, cfg.compile)\n",
    )
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    assert [f.conditions for f in report.findings] == [(Condition("cfg.compile", True, False),)]


OMITTED = """
def maybe_compile(model, {params}):
    if enabled:
        return torch.compile(model)
    return model


def train(x):
    model = maybe_compile(Net())
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x).sum()
    loss.backward(){marker}
"""


@pytest.mark.parametrize("params", ["enabled=False", "*, enabled=False", "enabled=None"])
def test_an_omitted_argument_is_its_literal_default(params, tmp_path):
    """``maybe_compile(model)`` with ``def maybe_compile(model, enabled=False)``: the call binds the
    default, so the helper never compiles (it was taken as unknown: a finding named `enabled`)."""
    program = NET + OMITTED.format(params=params, marker="  # ok: the default never compiles")
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert report.findings == () and expected == set()


def test_an_omitted_argument_defaulting_to_true_compiles_on_every_run(tmp_path):
    program = NET + OMITTED.format(params="enabled=True", marker="  # expect: CAL002")
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    assert [f.conditions for f in report.findings] == [()]


def test_an_entry_points_defaulted_parameter_is_still_a_switch(tmp_path):
    """Near miss: ``def main(x, compile=False)`` walked as an entry point has no call binding it:
    whoever calls it may pass ``compile=True``."""
    program = f"""{NET}

def main(x, compile=False):
{_step("compile")}
"""
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    assert [f.conditions for f in report.findings] == [(Condition("compile", True, None),)]


CHOSEN = """
import argparse

USE_COMPILE = False


def build(m, fast):
    return m if not fast else torch.compile(m)


def train(x):
    args = argparse.ArgumentParser().parse_args()
    model = {value}
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(x).sum()
    loss.backward(){marker}
"""


@pytest.mark.parametrize(
    ("value", "condition"),
    [
        ("torch.compile(Net()) if args.compile else Net()", Condition("args.compile", True, None)),
        ("Net() if not args.compile else torch.compile(Net())", Condition("args.compile", True, None)),
        ("build(Net(), args.fast)", Condition("fast", True, None)),
    ],
    ids=["assigned", "negated", "returned"],
)
def test_a_conditional_expression_on_a_switch_names_it(value, condition, tmp_path):
    """``model = torch.compile(model) if args.compile else model``: the option the switch takes is
    the compiled one, as with an ``if`` statement (it held on every run, naming nothing)."""
    program = NET + CHOSEN.format(value=value, marker="  # expect: CAL002")
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert reported(report.findings) == expected
    assert [f.conditions for f in report.findings] == [(condition,)]


@pytest.mark.parametrize(
    "value",
    ["torch.compile(Net()) if USE_COMPILE else Net()", "build(Net(), 0)", "Net() if True else torch.compile(Net())"],
    ids=["a module constant", "a literal passed on", "a literal test"],
)
def test_a_conditional_expression_on_a_constant_takes_its_option(value, tmp_path):
    """Near misses: a test nothing rebinds decides which option the expression is (both were taken)."""
    program = NET + CHOSEN.format(value=value, marker="  # ok: the eager option")
    report, expected = _analyze(tmp_path, {"train.py": program})
    assert report.findings == () and expected == set()


RECURSIVE = """
model = torch.compile(Net())


def run(x, depth):
{body}


def train(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = run(x, 3).sum()
    loss.backward()  # expect: CAL002
"""


@pytest.mark.parametrize(
    "body",
    [
        "    return model(x) if depth == 0 else run(x, depth - 1)",
        "    if depth == 0:\n        return model(x)\n    return run(x, depth - 1)",
    ],
    ids=["conditional expression", "if statement"],
)
def test_a_recursive_functions_test_is_not_decided_by_the_first_calls_literal(body, tmp_path):
    """``run(x, 3)`` reaches ``model(x)`` three calls deeper; the recursive call is not walked again,
    so the literal of the first call must not decide the test."""
    report, expected = _analyze(tmp_path, {"train.py": NET + RECURSIVE.format(body=body)})
    assert reported(report.findings) == expected


CHOSEN_INSIDE = """
import argparse
from contextlib import nullcontext

USE_AMP = False


def step(model, x, ctx):
    with ctx:
        loss = model(x).sum()
    loss.backward(){marker}


def train(x):
    args = argparse.ArgumentParser().parse_args()
    step(torch.compile(Net()), x, {ctx})
"""


@pytest.mark.parametrize(
    ("ctx", "marker", "conditions"),
    [
        ('torch.autocast("cpu", dtype=torch.bfloat16) if args.amp else nullcontext()', "  # expect: CAL002", "amp"),
        ('nullcontext() if not args.amp else torch.autocast("cpu", dtype=torch.bfloat16)', "  # expect: CAL002", "amp"),
        ('torch.autocast("cpu", dtype=torch.bfloat16) if USE_AMP else nullcontext()', "  # ok: a constant", None),
    ],
    ids=["switch", "negated switch", "a module constant"],
)
def test_a_conditional_expression_inside_a_call_picks_or_names_its_option(ctx, marker, conditions, tmp_path):
    """``step(model, x, autocast() if args.amp else nullcontext())``: the autocast is on only when
    ``args.amp`` is set, so the finding names it (it said the mismatch happens on every run); a
    constant test picks the eager option."""
    report, expected = _analyze(tmp_path, {"train.py": NET + CHOSEN_INSIDE.format(ctx=ctx, marker=marker)})
    assert reported(report.findings) == expected
    if conditions is None:
        assert report.findings == ()
    else:
        assert [f.conditions for f in report.findings] == [(Condition("args.amp", True, None),)]
