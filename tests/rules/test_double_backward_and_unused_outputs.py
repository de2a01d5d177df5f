"""CAL004 and CAL005 beyond their rule cases: spellings, precision near-misses, the cache, the facts.

Each case is a small project; lines that must be reported carry ``# expect: CODE`` and nothing
else may be reported.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from compile_ad_lint import Config
from compile_ad_lint.api import Analyzer, RootResult
from compile_ad_lint.cache import codec
from compile_ad_lint.pipeline.workspace import Workspace
from compile_ad_lint.rules import Case
from compile_ad_lint.testing import expected_in, reported, run_case, write_files

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
FACTS = ROOT / "facts" / "double_backward_and_unused_outputs.py"

HEADS = """import torch
from torch import nn


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 2)
        self.aux_head = nn.Linear(4, 2)

    def forward(self, h):
        return self.head(h), self.aux_head(h)


model = torch.compile(TwoHeads())
"""

CASES = {
    # -- CAL004 -------------------------------------------------------------------------------
    "cal004-positional-create-graph": Case(
        "import torch\n\nf = torch.compile(torch.sin)\n"
        "g = torch.autograd.grad(f(x).sum(), [x], None, None, True)  # expect: CAL004\n"
        "torch.autograd.backward(f(x).sum(), None, None, True)  # expect: CAL004\n"
        "f(x).sum().backward(None, None, True)  # expect: CAL004\n"
    ),
    "cal004-keyword-false-and-kwargs": Case(
        "import torch\n\nf = torch.compile(torch.sin)\n"
        "g = torch.autograd.grad(f(x).sum(), [x], create_graph=False)\n"
        "h = torch.autograd.grad(f(x).sum(), [x], **options)\n"
        "f(x).sum().backward(retain_graph=True)\n"
    ),
    "cal004-across-modules": Case(
        "import torch\nfrom nets import critic\n\n"
        "def penalty(x):\n    (g,) = torch.autograd.grad(critic(x).sum(), x, create_graph=True)  # expect: CAL004\n    return g.norm()\n",
        files=(("nets.py", "import torch\n\ncritic = torch.compile(torch.nn.Linear(4, 1), mode='max-autotune')\n"),),
    ),
    "cal004-functional-through-a-helper": Case(
        "import torch\nfrom torch.autograd import functional\n\nnet = torch.compile(torch.nn.Linear(4, 1))\n\n"
        "def loss(w):\n    return net(w).sum()\n\n"
        "def curvature(w, v):\n    return functional.hvp(loss, w, v)  # expect: CAL004\n"
    ),
    "cal004-functional-create-graph-flag": Case(
        "import torch\n\nf = torch.compile(torch.sin)\n\n"
        "def jac(x, differentiable):\n    return torch.autograd.functional.jacobian(f, x, create_graph=differentiable)  # expect: CAL004\n"
    ),
    "cal004-eager-safe-spellings": Case(
        "import torch\n\nf = torch.compile(torch.sin, backend='eager')\n"
        "hv = torch.autograd.functional.hvp(f, x, v)\n"
        "(g,) = torch.autograd.grad(f(x).sum(), x, create_graph=True)\n"
        "j = torch.autograd.functional.jacobian(f, x, strategy='forward-mode', vectorize=True)\n"
    ),
    "cal004-cudagraphs": Case(
        "import torch\n\nf = torch.compile(torch.sin, backend='cudagraphs')\n"
        "(g,) = torch.autograd.grad(f(x).sum(), x, create_graph=True)  # expect: CAL004\n",
        note="facts: on CPU cudagraphs is skipped and the AOTAutograd graph's second backward raises",
    ),
    "cal004-disable-around-compiled": Case(
        "import torch\n\nf = torch.compile(torch.sin)\nwrapped = torch.compiler.disable(lambda x: f(x))\n"
        "(g,) = torch.autograd.grad(wrapped(x).sum(), x, create_graph=True)  # expect: CAL004\n",
        note="torch 2.13: a compiled callable inside a disable'd function still compiles",
    ),
    "cal004-penalty-in-a-helper-function": Case(
        "import torch\n\ndef penalty(critic, x):\n    x = x.requires_grad_(True)\n"
        "    (g,) = torch.autograd.grad(critic(x).sum(), x, create_graph=True)\n    return g.square().mean()\n\n"
        "def saliency(critic, x):\n    x = x.requires_grad_(True)\n"
        "    (g,) = torch.autograd.grad(critic(x).sum(), x)\n    return g.abs().mean().detach()\n\n"
        "@torch.compile\ndef update(critic, x):\n    loss = critic(x).mean() + penalty(critic, x)  # expect: CAL004\n"
        "    loss.backward()\n\n"
        "@torch.compile\ndef inspect(critic, x):\n    loss = critic(x).mean() + saliency(critic, x)  # ok: first-order only\n"
        "    loss.backward()\n\n"
        "def train(critic, loader):\n    for x in loader:\n        update(critic, x)\n        inspect(critic, x)\n",
    ),
    "cal004-penalty-in-a-method-of-the-trainer": Case(
        "import torch\n\nclass Trainer:\n    def __init__(self, critic):\n        self.critic = critic\n"
        "        self.step = torch.compile(self.update)\n        self.score = torch.compile(self.evaluate)\n\n"
        "    def penalty(self, x):\n        x = x.requires_grad_(True)\n"
        "        (g,) = torch.autograd.grad(self.critic(x).sum(), x, create_graph=True)\n        return g.square().mean()\n\n"
        "    def update(self, x):\n        loss = self.critic(x).mean() + self.penalty(x)  # expect: CAL004\n"
        "        loss.backward()\n\n"
        "    def evaluate(self, x):\n        return self.critic(x).mean() + self.penalty(x)  # ok: no backward here\n",
        note="a bound method compiled in the constructor, calling another method on self; a compiled one that "
        "takes the penalty without a backward",
    ),
    "cal004-a-callee-differentiating-twice-itself": Case(
        "import torch\n\ndef critic_step(critic, x):\n    x = x.requires_grad_(True)\n"
        "    (g,) = torch.autograd.grad(critic(x).sum(), x, create_graph=True)\n    g.square().mean().backward()\n\n"
        "@torch.compile\ndef update(critic, x):\n    critic_step(critic, x)  # expect: CAL004\n\n"
        "@torch.compile(backend='eager')\ndef eager_update(critic, x):\n    critic_step(critic, x)  # ok: the eager backend\n\n"
        "def train(critic, loader):\n    for x in loader:\n        update(critic, x)\n        eager_update(critic, x)\n",
    ),
    "cal004-callee-near-misses": Case(
        "import torch\n\nUSE_PENALTY = False\n\n"
        "def penalty(critic, x):\n    (g,) = torch.autograd.grad(critic(x).sum(), x, create_graph=True)\n    return g.square().mean()\n\n"
        "def deeper(critic, x):\n    return deepest(critic, x)\n\n"
        "def deepest(critic, x):\n    return middle(critic, x)\n\n"
        "def middle(critic, x):\n    return penalty(critic, x)\n\n"
        "def recursive(critic, x, n):\n    return recursive(critic, x, n - 1) if n else critic(x).sum()\n\n"
        "@torch.compile\ndef after_only(critic, x):\n    critic(x).sum().backward()\n"
        "    return penalty(critic, x)  # ok: the backward came before it\n\n"
        "@torch.compile\ndef too_deep(critic, x):\n    loss = deeper(critic, x)  # ok: the penalty is four calls down\n"
        "    loss.backward()\n\n"
        "@torch.compile\ndef loops(critic, x):\n    recursive(critic, x, 3).backward()  # ok: recursion, no penalty\n\n"
        "@torch.compile\ndef switched_off(critic, x):\n    loss = critic(x).mean()\n    if USE_PENALTY:\n"
        "        loss = loss + penalty(critic, x)  # ok: a constant flag rules the arm out\n    loss.backward()\n\n"
        "def train(critic, loader):\n    for x in loader:\n        after_only(critic, x)\n        too_deep(critic, x)\n"
        "        loops(critic, x)\n        switched_off(critic, x)\n",
        note="the backward before the penalty; a penalty four calls down; recursion; a constant flag off",
    ),
    "cal004-switch-in-the-loss-module-named": Case(
        "import torch\nfrom torch import nn\n\nclass Loss(nn.Module):\n    def __init__(self, critic, gp):\n"
        "        super().__init__()\n        self.critic = critic\n        self.gp = gp\n\n"
        "    def forward(self, x):\n        loss = self.critic(x).mean()\n        if self.gp:\n"
        "            (g,) = torch.autograd.grad(loss, x, create_graph=True)\n            loss = loss + g.square().mean()\n"
        "        return loss\n\n"
        "def main(args, critic, x):\n    loss_module = Loss(critic, args.gp)\n\n"
        "    def update(x):\n        loss = loss_module(x)  # expect: CAL004\n        loss.backward()\n\n"
        "    torch.compile(update)(x)\n",
    ),
    "cal004-compiled-function-nothing-here-calls": Case(
        "import torch\n\n@torch.compile\ndef critic_step(critic, x):\n    x = x.requires_grad_(True)\n"
        "    (g,) = torch.autograd.grad(critic(x).sum(), x, create_graph=True)  # expect: CAL004\n"
        "    (critic(x).mean() + g.square().mean()).backward()\n\n"
        "@torch.no_grad()\ndef probe(critic, x):\n"
        "    (g,) = torch.autograd.grad(critic(x).sum(), x, create_graph=True)  # ok: a decorator that compiles nothing\n"
        "    g.square().mean().backward()\n\n"
        "@torch.compile(backend='eager')\ndef eager_step(critic, x):\n"
        "    (g,) = torch.autograd.grad(critic(x).sum(), x, create_graph=True)  # ok: the eager backend\n"
        "    g.square().mean().backward()\n",
        note="a module of compiled steps that the scripts importing it call: the double backward is in the "
        "compiled body, whoever calls it",
    ),
    "cal004-compiled-method-nothing-here-calls": Case(
        "import torch\n\nclass Trainer:\n    def __init__(self, critic):\n        self.critic = critic\n\n"
        "    @torch.compile\n    def step(self, x):\n        x = x.requires_grad_(True)\n"
        "        (g,) = torch.autograd.grad(self.critic(x).sum(), x, create_graph=True)  # expect: CAL004\n"
        "        g.square().mean().backward()\n\n"
        "    @torch.compiler.disable\n    def eager_step(self, x):\n"
        "        (g,) = torch.autograd.grad(self.critic(x).sum(), x, create_graph=True)  # ok: not compiled\n"
        "        g.square().mean().backward()\n",
    ),
    # -- CAL005 -------------------------------------------------------------------------------
    "cal005-positive": Case(HEADS + "main, aux = model(x)\nmain.sum().backward()  # expect: CAL005\n"),
    "cal005-stored-on-self": Case(
        HEADS
        + "class Trainer:\n    def step(self, x):\n        main, aux = model(x)\n        self.last_aux = aux\n        main.sum().backward()\n"
    ),
    "cal005-passed-to-unknown-function": Case(
        HEADS + "import wandb\n\nmain, aux = model(x)\nwandb.log({'aux': aux})\nmain.sum().backward()\n"
    ),
    "cal005-detached-logging-still-reported": Case(
        HEADS + "main, aux = model(x)\nprint(aux.detach().mean().item())\nmain.sum().backward()  # expect: CAL005\n"
    ),
    "cal005-grad-reset": Case(
        HEADS
        + "main, aux = model(x)\nmain.sum().backward()\nfor p in model.aux_head.parameters():\n    p.grad = None\n"
    ),
    "cal005-aux-head-used-elsewhere": Case(
        HEADS + "main, aux = model(x)\n(main.sum() + model.aux_head(z).sum()).backward()\n"
    ),
    "cal005-used-output-calls-a-method": Case(
        "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.head = nn.Linear(4, 2)\n        self.aux_head = nn.Linear(4, 2)\n\n"
        "    def main(self, h):\n        return self.head(h) + self.aux_head(h)\n\n"
        "    def forward(self, h):\n        return self.main(h), self.aux_head(h)\n\n\n"
        "model = torch.compile(M())\nmain, aux = model(x)\nmain.sum().backward()\n"
    ),
    "cal005-star-unpacking-of-three": Case(
        "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.a = nn.Linear(4, 2)\n        self.b = nn.Linear(4, 2)\n        self.c = nn.Linear(4, 2)\n\n"
        "    def forward(self, h):\n        return self.a(h), self.b(h), self.c(h)\n\n\n"
        "model = torch.compile(M())\nfirst, *rest = model(x)\n(first.sum() + rest[0].sum() + rest[1].sum()).backward()\n"
    ),
    "cal005-whole-result-indexed": Case(
        HEADS + "out = model(x)\nout[0].sum().backward()  # expect: CAL005\n",
        note="a literal index picks its output (issue 47): output 1 is unused",
    ),
    "cal005-every-output-indexed": Case(
        HEADS + "out = model(x)\n(out[0].sum() + out[1].sum()).backward()\n", note="both outputs indexed and used"
    ),
    "cal005-whole-result-iterated": Case(
        HEADS + "out = model(x)\nsum(o.sum() for o in out).backward()\n", note="iterating uses every output"
    ),
    "cal005-unknown-index": Case(
        HEADS + "out = model(x)\nout[k].sum().backward()\n", note="an index not known statically may be any output"
    ),
    "cal005-parameterless-module": Case(
        "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.head = nn.Linear(4, 2)\n        self.act = nn.GELU()\n\n"
        "    def forward(self, h):\n        return self.head(h), self.act(h)\n\n\n"
        "model = torch.compile(M())\nmain, side = model(x)\nmain.sum().backward()\n",
        note="the unused output's module has no parameters",
    ),
    "cal005-across-modules": Case(
        "import torch\nfrom model import build\n\nnet = build()\n\ndef step(x):\n    main, aux = net(x)\n    main.mean().backward()  # expect: CAL005\n",
        files=(
            (
                "model.py",
                HEADS.replace("model = torch.compile(TwoHeads())\n", "")
                + "\ndef build():\n    return torch.compile(TwoHeads())\n",
            ),
        ),
    ),
}


@pytest.mark.parametrize("case", [pytest.param(c, id=name) for name, c in CASES.items()])
def test_case(case, tmp_path):
    expected, found = run_case(case, tmp_path)
    assert found == expected, case.note or case.code


def test_fixtures_cover_both_rules_with_negatives():
    files = [
        *FIXTURES.glob("cal004_*.py"),
        *FIXTURES.glob("cal005_*.py"),
        *(FIXTURES / "projects" / "aux_trainer").glob("*.py"),
    ]
    codes = [code for path in files for _, _, code in expected_in(path)]
    negatives = sum(line.count("# ok:") for path in files for line in path.read_text(encoding="utf-8").splitlines())
    assert codes.count("CAL004") >= 10 and codes.count("CAL005") >= 5
    assert negatives >= len(codes)


def test_events_round_trip_through_the_cache_codec(tmp_path):
    """RootResults holding every new event type survive the data-only cache unchanged."""
    write_files(
        tmp_path, {"leaf_read.py": HEADS + "main, aux = model(x)\n(main.sum() + model.aux_head(z).sum()).backward()\n"}
    )
    workspace = Workspace(Config(), None, [FIXTURES, tmp_path], {}, {})
    kinds = set()
    paths = [
        FIXTURES / name
        for name in (
            "cal004_second_order.py",
            "cal004_compiled_update.py",
            "cal005_aux_heads.py",
            "cal005_grad_reset.py",
            "cal005_functional_and_fixes.py",
        )
    ]
    for path in [*paths, tmp_path / "leaf_read.py"]:
        result = workspace.analyze(path, frozenset())
        kinds |= {type(event).__name__ for event in result.events}
        assert codec.loads(codec.dumps(result), RootResult) == result
    assert {
        "FunctionalThroughCompiled",
        "CompiledResult",
        "OutputsEscape",
        "LeafRead",
        "GradReset",
        "BackwardThroughCompiled",
        "SecondOrderInCompiled",
    } <= kinds


def test_warm_cache_gives_the_same_findings(tmp_path):
    sources = {
        p.name: p.read_text(encoding="utf-8") for p in [*FIXTURES.glob("cal004_*.py"), *FIXTURES.glob("cal005_*.py")]
    }
    write_files(tmp_path, sources)
    analyzer = Analyzer(Config(), use_cache=True, jobs=1, cache_root=tmp_path)
    cold = analyzer.check([str(tmp_path)])
    warm = analyzer.check([str(tmp_path)])
    assert reported(cold.findings) == reported(warm.findings)
    assert {f.code for f in cold.findings} == {"CAL004", "CAL005"}
    assert warm.stats.parsed == 0


@pytest.mark.slow
def test_runtime_facts_hold_on_the_installed_torch():
    """Three of the facts script's cases (each compiles once): the premises of both rules."""
    pytest.importorskip("torch")
    cases = ["grad_create_graph_inductor", "func_hessian", "unused_output_inductor"]
    done = subprocess.run(
        [sys.executable, str(FACTS), "--check", "--jobs", "2", *cases], capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stdout + done.stderr


# -- confirm mode: verdict logic (no torch) and one real run (slow) ---------------------------------

from compile_ad_lint import Verdict  # noqa: E402
from compile_ad_lint.confirm import compare  # noqa: E402

DOUBLE = {
    "type": "RuntimeError",
    "message": "torch.compile with aot_autograd does not currently support double backward",
    "frames": [],
}


def _load(values):
    return lambda entry: values[entry["offset"]]


def _tensor(offset, shape=(3,)):
    return {"offset": offset, "count": 3, "numel": 3, "dtype": "float32", "shape": list(shape)}


def test_cal004_later_backward_through_created_gradients_confirms():
    site = compare.Site("/p/m.py", (10, 10))
    grad = {"kind": "grad", "stack": [["/p/m.py", 10]], "tensors": [], "keys": [], "create_graph": True}
    penalty = {"kind": "backward-error", "stack": [["/p/m.py", 14]], "raised": DOUBLE, "create_graph": False}
    eager = {"status": "ok", "records": [grad]}
    result = compare.verdict_cal004(
        eager, _load({}), {"status": "ok", "records": [grad, penalty]}, _load({}), site, "cpu"
    )
    assert result.verdict is Verdict.CONFIRMED and "m.py:14" in result.detail


def test_cal004_inside_a_compiled_function_confirms_on_the_compiled_runs_error_only():
    """Both backwards run inside the compiled function: the compiled run's double-backward error is
    the verdict; eager raising it too, or another error, is not."""
    ok = {"status": "ok", "records": []}
    failed = {"status": "exception", "exception": DOUBLE, "records": []}
    other = {"status": "exception", "exception": {"type": "ValueError", "message": "bad shape", "frames": []}}
    assert compare.verdict_cal004_inside(ok, failed).verdict is Verdict.CONFIRMED
    assert compare.verdict_cal004_inside(failed, failed).verdict is Verdict.NOT_REPRODUCED
    assert compare.verdict_cal004_inside(ok, ok).verdict is Verdict.NOT_REPRODUCED
    assert compare.verdict_cal004_inside(ok, other).verdict is Verdict.ERROR


def test_cal004_another_create_graph_call_in_between_owns_the_error():
    site = compare.Site("/p/m.py", (10, 10))
    grad = {"kind": "grad", "stack": [["/p/m.py", 10]], "tensors": [], "keys": [], "create_graph": True}
    other = {"kind": "grad", "stack": [["/p/m.py", 30]], "tensors": [], "keys": [], "create_graph": True}
    penalty = {"kind": "backward-error", "stack": [["/p/m.py", 31]], "raised": DOUBLE, "create_graph": False}
    result = compare.verdict_cal004(
        {"status": "ok", "records": [grad]},
        _load({}),
        {"status": "ok", "records": [grad, other, penalty]},
        _load({}),
        site,
        "cpu",
    )
    assert result.verdict is Verdict.NOT_REPRODUCED and "nothing differentiated" in result.detail


def test_cal004_all_zero_hessian_confirms_without_an_error():
    site = compare.Site("/p/m.py", (5, 5))
    record = lambda offset: {
        "kind": "functional",
        "name": "hessian",
        "stack": [["/p/m.py", 5]],
        "raised": None,
        "tensors": [_tensor(offset)],
    }
    values = {0: [1.0, 2.0, 3.0], 1: [0.0, 0.0, 0.0]}
    result = compare.verdict_cal004(
        {"status": "ok", "records": [record(0)]},
        _load(values),
        {"status": "ok", "records": [record(1)]},
        _load(values),
        site,
        "cpu",
    )
    assert result.verdict is Verdict.CONFIRMED and "all zeros" in result.detail


def test_cal005_zeros_compiled_none_eager_confirms_and_other_leaves_do_not():
    site = compare.Site("/p/m.py", (8, 8))
    eager = {
        "status": "ok",
        "records": [{"kind": "backward", "stack": [["/p/m.py", 8]], "tensors": [_tensor(0)], "keys": [0]}],
    }
    compiled = {
        "status": "ok",
        "records": [
            {"kind": "backward", "stack": [["/p/m.py", 8]], "tensors": [_tensor(0), _tensor(1)], "keys": [0, 1]}
        ],
    }
    values = {0: [1.0, 2.0, 3.0], 1: [0.0, 0.0, 0.0]}
    result = compare.verdict_cal005(eager, _load(values), compiled, _load(values), site, "self.aux_head")
    assert result.verdict is Verdict.CONFIRMED and "parameter #1" in result.detail and "self.aux_head" in result.detail
    same = compare.verdict_cal005(eager, _load(values), eager, _load(values), site)
    assert same.verdict is Verdict.NOT_REPRODUCED


@pytest.mark.slow
def test_confirm_runs_both_rules_on_real_code(tmp_path):
    """One project, one eager and one compiled run: a gradient penalty and an unused auxiliary head."""
    pytest.importorskip("torch")
    from compile_ad_lint.confirm import ConfirmOptions, confirm_findings

    source = HEADS + (
        "critic = torch.compile(nn.Linear(4, 1))\n\n\n"
        "def penalty(x):\n"
        "    x = x.requires_grad_()\n"
        "    (g,) = torch.autograd.grad(critic(x).sum(), x, create_graph=True)  # expect: CAL004\n"
        "    g.square().sum().backward()\n\n\n"
        "def aux_step(x):\n"
        "    main, aux = model(x)\n"
        "    main.sum().backward()  # expect: CAL005\n\n\n"
        "if __name__ == '__main__':\n"
        "    aux_step(torch.randn(2, 4))\n"
        "    try:\n"
        "        penalty(torch.randn(2, 4))\n"
        "    except RuntimeError as error:\n"
        "        print(error)\n"
    )
    write_files(tmp_path, {"train.py": source})
    report = Analyzer(Config(), use_cache=False, jobs=1).check([str(tmp_path)])
    assert {f.code for f in report.findings} == {"CAL004", "CAL005"}
    confirmed = confirm_findings(
        report.findings, ConfirmOptions(devices=["cpu"], project_root=tmp_path, use_cache=False, jobs=2)
    )
    verdicts = {f.code: dict(f.confirm)["cpu"] for f in confirmed}
    assert verdicts["CAL004"].verdict is Verdict.CONFIRMED, verdicts["CAL004"].detail
    assert verdicts["CAL005"].verdict is Verdict.CONFIRMED, verdicts["CAL005"].detail
