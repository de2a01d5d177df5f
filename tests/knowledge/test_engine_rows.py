"""The names the engine gives a meaning to, each a row of ``knowledge/`` with its source: every row
here has a case through the public API (``run_case``), next to a near miss, and the anchors that
decide which code is analyzed come from the rows."""

from __future__ import annotations

import re

import pytest

from compile_ad_lint.knowledge import frameworks as fw
from compile_ad_lint.knowledge import torch_api as api
from compile_ad_lint.knowledge.anchors import ANCHOR_WORDS, ANCHORS
from compile_ad_lint.knowledge.spelling import ImportAnchor
from compile_ad_lint.rules import Case
from compile_ad_lint.testing import run_case

HEAD = "import torch\nimport torch.autograd.forward_ad as fwAD\nfrom torch import nn\n\n"
NET = (
    "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.l = nn.Linear(4, 4)\n\n"
    "    def forward(self, x):\n        return self.l(x)\n\n\n"
)


def _check(code: str, tmp_path) -> None:
    expected, reported = run_case(Case(code), tmp_path)
    assert expected or "# ok" in code, "a case must expect a finding, or say what is ok"
    assert reported == expected, code


_TOWERS = (
    "class TwoTowers(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.query = nn.Linear(8, 8)\n        self.key = nn.Linear(8, 8)\n\n"
    "    def forward(self, q, k):\n        return self.query(q), self.key(k)\n\n\n"
    "towers = torch.compile(TwoTowers())\n\n\ndef step(q, k):\n    q_emb, k_emb = towers(q, k)\n"
    "    q_emb.sum().backward()  # expect: CAL005\n    p = towers.key.weight\n"
)


def _amp(setup: str, forward: str, after: str) -> str:
    """A compiled module's forward under bf16 autocast; ``after`` runs outside it."""
    return (
        HEAD
        + NET
        + f"{setup}\n\n\ndef step(x):\n    with torch.autocast('cpu', dtype=torch.bfloat16):\n"
        + f"        {forward}\n    {after}\n"
    )


def _copy(value: str, mark: str) -> str:
    """A module's parameters given ``value`` in place in a forward-AD region, then a plain call."""
    return (
        HEAD
        + NET
        + "model = torch.compile(Net())\n\n\ndef jvp(tangents):\n    with fwAD.dual_level():\n"
        + "        with torch.no_grad():\n            for name, p in model.named_parameters():\n"
        + f"                p.copy_({value})\n        return model(torch.ones(2, 4))  # {mark}\n"
    )


def _after(statement: str, mark: str) -> str:
    """A compiled module's output under bf16 autocast, ``statement`` on it, then its backward outside."""
    return (
        HEAD
        + NET
        + "model = torch.compile(Net())\n\n\ndef step(x):\n"
        + "    with torch.autocast('cpu', dtype=torch.bfloat16):\n        out = model(x)\n"
        + f"    {statement}\n    out.sum().backward()  # {mark}\n"
    )


#: row -> (the case with the finding, the near miss).
CASES = {
    "TENSOR_BACKWARD": (
        _amp("model = torch.compile(Net())", "loss = model(x).sum()", "loss.backward()  # expect: CAL002"),
        _amp("model = torch.compile(Net())", "loss = model(x).sum()", "loss.detach()  # ok: no backward"),
    ),
    "TENSOR_BACKWARD.create_graph_position": (
        HEAD
        + "model = torch.compile(torch.nn.Linear(4, 4))\n\n\ndef step(x):\n"
        + "    model(x).sum().backward(None, None, True)  # expect: CAL004\n",
        HEAD
        + "model = torch.compile(torch.nn.Linear(4, 4))\n\n\ndef step(x):\n"
        + "    model(x).sum().backward(None, True)  # ok: retain_graph, not create_graph\n",
    ),
    "CREATE_GRAPH": (
        HEAD
        + "model = torch.compile(torch.nn.Linear(4, 4))\n\n\ndef step(x, params):\n"
        + "    return torch.autograd.grad(model(x).sum(), params, create_graph=True)  # expect: CAL004\n",
        HEAD
        + "model = torch.compile(torch.nn.Linear(4, 4))\n\n\ndef step(x, params):\n"
        + "    return torch.autograd.grad(model(x).sum(), params, retain_graph=True)  # ok\n",
    ),
    "GRAD": (
        HEAD + _TOWERS + "    p.grad = torch.zeros_like(p)  # not a reset\n",
        HEAD + _TOWERS.replace("# expect: CAL005", "# ok: the reset below") + "    p.grad = None\n",
    ),
    "REQUIRES_GRAD": (
        _amp("model = torch.compile(Net())", "loss = model(x).sum()", "loss.backward()  # expect: CAL002"),
        _amp(
            "model = torch.compile(Net())\nfor p in model.parameters():\n    p.requires_grad = False",
            "loss = model(x).sum()",
            "loss.backward()  # ok: frozen, no compiled backward",
        ),
    ),
    "FORWARD": (
        _amp(
            "model = Net()\nmodel.forward = torch.compile(model.forward)",
            "loss = model(x).sum()",
            "loss.backward()  # expect: CAL002",
        ),
        _amp(
            "model = Net()\nmodel.backward_fn = torch.compile(model.forward)",
            "loss = model(x).sum()",
            "loss.backward()  # ok: the module's forward is not replaced",
        ),
    ),
    "ORIGINAL_MODULE": (
        _amp("model = torch.compile(Net())", "loss = model(x).sum()", "loss.backward()  # expect: CAL002"),
        _amp("model = torch.compile(Net())._orig_mod", "loss = model(x).sum()", "loss.backward()  # ok: eager"),
    ),
    "WRAPPED_MODULE": (
        _amp(
            "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = DDP(torch.compile(Net())).module",
            "loss = model(x).sum()",
            "loss.backward()  # expect: CAL002",
        ),
        _amp(
            "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = DDP(Net()).module",
            "loss = model(x).sum()",
            "loss.backward()  # ok: nothing compiled",
        ),
    ),
    "BACKEND_ARGUMENTS": (
        HEAD
        + "g = torch._dynamo.optimize('inductor')(torch.sin)\n\n\ndef probe(x, t):\n"
        + "    with fwAD.dual_level():\n        return g(fwAD.make_dual(x, t))  # expect: CAL001\n",
        HEAD
        + "g = torch._dynamo.optimize(backend='eager')(torch.sin)\n\n\ndef probe(x, t):\n"
        + "    with fwAD.dual_level():\n        return g(fwAD.make_dual(x, t))  # ok: eager keeps tangents\n",
    ),
    "TORCH_PACKAGE": (
        HEAD + _TOWERS.replace("    p = towers.key.weight\n", "    torch.nn.functional.relu(k_emb)\n"),
        HEAD
        + _TOWERS.replace("# expect: CAL005", "# ok: the other output escapes to a logger").replace(
            "    p = towers.key.weight\n", "    logger.log(k_emb)\n"
        ),
    ),
    "COPY_IN_PLACE": (
        _copy("fwAD.make_dual(p.detach(), tangents[name])", "expect: CAL001"),
        _copy("p.detach() * 2", "ok: plain values copied, the parameters stay plain"),
    ),
    "DETACH_IN_PLACE": (
        _after("out.detach()", "expect: CAL002"),
        _after("out.detach_()", "ok: detach_() cut out from the compiled graph"),
    ),
    "CONTAINER_STORE_METHODS": (
        _after("outs = []\n    outs.insert(0, out)\n    out = outs[0]", "expect: CAL002"),
        _after("outs = []\n    outs.insert(0, x)\n    out = outs[0]", "ok: insert stores its second argument"),
    ),
    "EXIT_STACK_ENTER": (
        _amp(
            "from contextlib import ExitStack\n\nmodel = torch.compile(Net())",
            "loss = model(x).sum()",
            "with ExitStack() as stack:\n        stack.enter_context(torch.autocast('cpu', dtype=torch.bfloat16))\n"
            "        more = model(x).sum()\n    more.backward()  # expect: CAL002",
        ),
        _amp(
            "class Recorder:\n    def enter_context(self, cm):\n        return cm\n\n\nmodel = torch.compile(Net())",
            "loss = model(x).sum()\n        loss.backward()  # ok: under the forward's autocast",
            "stack = Recorder()\n    stack.enter_context(torch.autocast('cpu', dtype=torch.bfloat16))\n"
            "    more = model(x).sum()\n    more.backward()  # ok: a project method of that name enters nothing",
        ),
    ),
    "TORCH_NN": (
        _amp(
            "class Block(nn.Linear):\n    pass\n\n\nmodel = Block(4, 4)\nmodel.compile()",
            "loss = model(x).sum()",
            "loss.backward()  # expect: CAL002",
        ),
        _amp(
            "from blocks import Base\n\n\nclass Block(Base):\n    pass\n\n\nmodel = Block(4, 4)\nmodel.compile()",
            "loss = model(x).sum()",
            "loss.backward()  # ok: not known to be a module, its .compile() is not Module.compile",
        ),
    ),
}

#: The rows and constants the cases above are for.
ROWS = {
    "TENSOR_BACKWARD": api.TENSOR_BACKWARD,
    "CREATE_GRAPH": api.CREATE_GRAPH,
    "GRAD": api.GRAD,
    "REQUIRES_GRAD": api.REQUIRES_GRAD,
    "FORWARD": api.FORWARD,
    "ORIGINAL_MODULE": api.ORIGINAL_MODULE,
    "ORIGINAL_FUNCTION": api.ORIGINAL_FUNCTION,
    "WRAPPED_MODULE": api.WRAPPED_MODULE,
    "COPY_IN_PLACE": api.COPY_IN_PLACE,
    "DETACH_IN_PLACE": api.DETACH_IN_PLACE,
    "EXIT_STACK_ENTER": api.EXIT_STACK_ENTER,
    "TORCH_PACKAGE": api.TORCH_PACKAGE,
}
#: Rows whose case is elsewhere.
ELSEWHERE = {
    # the CallUncompiled fix calls ``f.__wrapped__(...)``, run for real there
    "ORIGINAL_FUNCTION": "tests/runtime/test_fixes_runtime.py",
}


@pytest.mark.parametrize("row", sorted(CASES))
def test_rows(row, tmp_path):
    finding, near_miss = CASES[row]
    _check(finding, tmp_path / "finding")
    _check(near_miss, tmp_path / "near_miss")


def test_every_row_has_a_case_and_cites_its_source():
    assert set(ROWS) <= set(CASES) | set(ELSEWHERE)
    for row in ROWS.values():
        assert re.search(r"torch/[\w/]+\.py|Python [\w.]+\.py", row.source), row


# -- frameworks: the arguments and methods the effects read --------------------------------------------


def test_every_framework_method_that_reads_an_argument_names_it():
    """A backward, ``unwrap_model`` and ``fit`` read one argument; the row says which (its signature)."""
    reads = {fw.FrameworkEffect.BACKWARD, fw.FrameworkEffect.SAME, fw.FrameworkEffect.FIT}
    for method in fw.FRAMEWORK_METHODS:
        if method.effect in reads:
            assert method.argument is not None and method.argument[0] in method.source, method


LIGHTNING = (
    HEAD
    + "import lightning as L\n\n\nclass Module(L.LightningModule):\n    def __init__(self):\n"
    + "        super().__init__()\n        self.net = torch.compile(nn.Linear(4, 4))\n\n"
    + "    def training_step(self, batch, batch_idx):\n        return self.net(batch).sum()\n\n\n"
)


def test_lightning_runs_the_step_its_row_names(tmp_path):
    """``Trainer.fit`` runs ``training_step`` under the precision's autocast and its backward after."""
    _check(
        LIGHTNING + "def main():\n    trainer = L.Trainer(precision='bf16-mixed')\n"
        "    trainer.fit(Module())  # expect: CAL002\n",
        tmp_path / "finding",
    )
    _check(
        LIGHTNING.replace("def training_step", "def validation_step")
        + "def main():\n    trainer = L.Trainer(precision='bf16-mixed')\n"
        "    trainer.fit(Module())  # ok: no training_step to run\n",
        tmp_path / "near_miss",
    )


def test_lightning_fp16_on_the_cpu_is_bf16(tmp_path):
    """The precision row's device dtypes: '16-mixed' with ``accelerator='cpu'`` runs bf16 autocast."""
    (row,) = [(d, given, used) for d, given, used in fw.FRAMEWORK_CLASSES[2].precision.device_dtypes]  # type: ignore[union-attr]
    assert row == ("cpu", "float16", "bfloat16")
    expected, reported = run_case(
        Case(
            LIGHTNING + "def main():\n    trainer = L.Trainer(precision='16-mixed', accelerator='cpu')\n"
            "    trainer.fit(Module())  # expect: CAL002\n"
        ),
        tmp_path,
    )
    assert reported == expected


# -- anchors ----------------------------------------------------------------------------------------------


def test_every_anchor_contains_its_word():
    """Discovery skips a file without any anchor word, so each anchor's every match must hold its word:
    one of the anchor's tokens (an import anchor's module) contains it."""
    for anchor in ANCHORS:
        tokens = (anchor.module,) if isinstance(anchor, ImportAnchor) else anchor.tokens
        assert any(anchor.word in token for token in tokens), anchor
    assert set(ANCHOR_WORDS) == {anchor.word for anchor in ANCHORS}


ANCHORED = [
    "with fwAD.dual_level():",
    "scaler.scale(loss).backward()",
    "scaler.scale(loss). backward \\\n    ()",  # the gaps Python allows between two tokens
    "torch.autograd.grad(loss, params)",
    "g = grad (loss, params)",
    "torch._functorch.config.backward_pass_autocast = 'off'",
    "torch.autograd.functional.hvp(f, x, v)",
    "from torch.autograd import functional as F",
    "from torch.autograd import (\n    Function,\n    grad,\n)",
    "trainer.fit(model)",
    "args = TrainingArguments(output_dir='out', bf16=True)",
]
NOT_ANCHORED = [
    "def backward(ctx, grad_output):",  # every autograd.Function's method
    "model.train()",  # every module's mode switch
    "gradient = 1",
    "from torch.autograd import Function",
]


@pytest.mark.parametrize("text", ANCHORED)
def test_anchors_mark_what_the_rows_give_a_meaning(text, tmp_path):
    """Through discovery and the outline: a file holding the text is analyzed (its anchored block),
    one without is not read past the prefilter."""
    from compile_ad_lint.pipeline.callers import has_anchor
    from compile_ad_lint.summary.outline import ANCHOR_PATTERN

    assert has_anchor(text.encode()) and ANCHOR_PATTERN.search(text), text


@pytest.mark.parametrize("text", NOT_ANCHORED)
def test_near_misses_are_no_anchors(text):
    from compile_ad_lint.pipeline.callers import has_anchor
    from compile_ad_lint.summary.outline import ANCHOR_PATTERN

    assert not has_anchor(text.encode()) and not ANCHOR_PATTERN.search(text), text
