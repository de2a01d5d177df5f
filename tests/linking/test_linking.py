"""Name resolution and reachability across functions and modules.

Each case is a small project; lines that must be reported carry ``# expect: CODE`` and nothing
else may be reported. Negatives (no marker) are as important as positives here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compile_ad_lint import Config
from compile_ad_lint.rules import Case
from compile_ad_lint.testing import run_case

FWAD = "import torch\nimport torch.autograd.forward_ad as fwAD\n"

POSITIVE = {
    "reexport-through-package-init": Case(
        FWAD
        + "from mypkg import compiled_step\n\nwith fwAD.dual_level():\n    compiled_step(fwAD.make_dual(x, t))  # expect: CAL001\n",
        files=(
            ("mypkg/__init__.py", "from .ops import compiled_step\n"),
            ("mypkg/ops.py", "import torch\n\ncompiled_step = torch.compile(lambda x: x * 2)\n"),
        ),
    ),
    "relative-import-chain": Case(
        FWAD + "from pkg.api import run\n\nwith fwAD.dual_level():\n    run(fwAD.make_dual(x, t))  # expect: CAL001\n",
        files=(
            ("pkg/__init__.py", ""),
            ("pkg/api.py", "from .impl import inner\n\ndef run(x):\n    return inner(x) + 1\n"),
            ("pkg/impl.py", "from . import kernels\n\ndef inner(x):\n    return kernels.fast(x)\n"),
            ("pkg/kernels.py", "import torch\n\n@torch.compile\ndef fast(x):\n    return x.sin()\n"),
        ),
    ),
    "import-a-b-as-c": Case(
        FWAD
        + "import lib.nets as nets\n\nwith fwAD.dual_level():\n    nets.NET(fwAD.make_dual(x, t))  # expect: CAL001\n",
        files=(("lib/__init__.py", ""), ("lib/nets.py", "import torch\n\nNET = torch.compile(torch.nn.Tanh())\n")),
    ),
    "script-sibling-import": Case(
        FWAD
        + "from model import build\n\nm = build()\nwith fwAD.dual_level():\n    m(fwAD.make_dual(x, t))  # expect: CAL001\n",
        files=(("model.py", "import torch\n\ndef build():\n    return torch.compile(torch.nn.Linear(2, 2))\n"),),
    ),
    "closure-from-factory": Case(
        FWAD
        + "def make_step(f):\n    compiled = torch.compile(f)\n    def step(x):\n        return compiled(x)\n    return step\n\n"
        + "step = make_step(torch.sin)\nwith fwAD.dual_level():\n    step(fwAD.make_dual(x, t))  # expect: CAL001\n"
    ),
    "alias-by-assignment": Case(
        FWAD
        + "jit = torch.compile\nf = jit(torch.cos)\nwith fwAD.dual_level():\n    f(fwAD.make_dual(x, t))  # expect: CAL001\n"
    ),
    "dynamo-optimize": Case(
        FWAD
        + 'f = torch._dynamo.optimize("inductor")(torch.cos)\nwith fwAD.dual_level():\n    f(fwAD.make_dual(x, t))  # expect: CAL001\n'
    ),
    "partial-compile": Case(
        FWAD
        + "import functools\n\nfast = functools.partial(torch.compile, mode='reduce-overhead')\n\n@fast\ndef g(x):\n    return x * x\n\n"
        + "with fwAD.dual_level():\n    g(fwAD.make_dual(x, t))  # expect: CAL001\n"
    ),
    "unknown-backend-is-unsafe": Case(
        FWAD
        + "f = torch.compile(torch.cos, backend=BACKEND)\nwith fwAD.dual_level():\n    f(fwAD.make_dual(x, t))  # expect: CAL001\n"
    ),
    "dual-level-in-variable-multi-item-with": Case(
        FWAD
        + "f = torch.compile(torch.cos)\nlevel = fwAD.dual_level()\nwith torch.no_grad(), level:\n    f(fwAD.make_dual(x, t))  # expect: CAL001\n"
    ),
    "compiled-created-inside-region": Case(
        FWAD
        + "with fwAD.dual_level():\n    f = torch.compile(torch.cos)\n    f(fwAD.make_dual(x, t))  # expect: CAL001\n"
    ),
    "parameter-bound-by-caller-in-other-module": Case(
        "import torch\nfrom checks import jvp_of\n\nif __name__ == '__main__':\n    jvp_of(torch.compile(torch.nn.GELU()), torch.ones(2))\n",
        files=(
            (
                "checks.py",
                "import torch.autograd.forward_ad as fwAD\n\ndef jvp_of(model, x):\n    with fwAD.dual_level():\n"
                "        return model(fwAD.make_dual(x, x))  # expect: CAL001\n",
            ),
        ),
    ),
    "method-chain-through-self": Case(
        FWAD
        + "class Wrapper(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.core = torch.compile(torch.nn.Linear(2, 2))\n"
        + "    def forward(self, x):\n        return self.helper(x)\n    def helper(self, x):\n        return self.core(x)\n\n"
        + "w = Wrapper()\nwith fwAD.dual_level():\n    w(fwAD.make_dual(x, t))  # expect: CAL001\n"
    ),
    "backward-autocast-from-caller": Case(
        "import torch\n\nmodel = torch.compile(net)\n\ndef forward_loss(x):\n    return model(x).mean()\n\n"
        + "def train(x):\n    with torch.autocast('cuda'):\n        loss = forward_loss(x)\n    loss.backward()  # expect: CAL002\n"
    ),
    "backward-tuple-unpacking": Case(
        "import torch\n\nmodel = torch.compile(net)\nwith torch.amp.autocast('cuda', dtype=torch.bfloat16):\n    logits, loss = model(x, y)\n"
        + "loss.backward()  # expect: CAL002\n"
    ),
    "backward-inside-autocast-with-no-autocast-forward": Case(
        "import torch\n\nmodel = torch.compile(net)\nout = model(x)\nwith torch.autocast('cpu'):\n    out.sum().backward()  # expect: CAL002\n"
    ),
    "enabled-false-island-in-backward": Case(
        "import torch\n\nmodel = torch.compile(net)\nwith torch.autocast('cuda'):\n    loss = model(x).sum()\n"
        + "    with torch.autocast('cuda', enabled=False):\n        loss.backward()  # expect: CAL002\n"
    ),
    "maybe-autocast-variable": Case(
        "import torch\nfrom contextlib import nullcontext\n\nmodel = torch.compile(net)\n"
        + "ctx = nullcontext() if device == 'cpu' else torch.amp.autocast(device_type='cuda', dtype=torch.bfloat16)\n"
        + "with ctx:\n    loss = model(x).mean()\nloss.backward()  # expect: CAL002\n"
    ),
    "config-patch-decorator-off-with-autocast-backward": Case(
        "import torch\nimport torch._functorch.config as fc\n\nmodel = torch.compile(net)\n\n"
        + "@fc.patch(backward_pass_autocast='off')\ndef step(x):\n    with torch.autocast('cuda'):\n        loss = model(x).mean()\n"
        + "        loss.backward()  # expect: CAL002\n"
    ),
    "list-config-wrong-dtype": Case(
        "import torch\nimport torch._functorch.config as fc\n\nmodel = torch.compile(net)\n"
        + "with fc.patch({'backward_pass_autocast': [{'device_type': 'cuda', 'dtype': torch.float16}]}):\n    out = model(x)\n"
        + "with torch.autocast('cuda', dtype=torch.bfloat16):\n    out.sum().backward()  # expect: CAL002\n"
    ),
    "autograd-grad-function": Case(
        "import torch\n\nf = torch.compile(fn)\nwith torch.autocast('cuda'):\n    y = f(x)\n"
        + "grads = torch.autograd.grad(y.sum(), [x])  # expect: CAL002\n"
    ),
    # torch 2.13: a compiled callable called from a torch.compiler.disable'd function still runs
    # compiled (tangent None; facts/double_backward_and_unused_outputs.py, disable_around_compiled_*).
    "disable-decorator-on-callee-of-compiled": Case(
        FWAD
        + "f = torch.compile(torch.sin)\n\n@torch.compiler.disable\ndef eager(x):\n    return f(x)\n\n"
        + "with fwAD.dual_level():\n    eager(fwAD.make_dual(x, t))  # expect: CAL001\n"
    ),
}

NEGATIVE = {
    "local-torch-shadows-import": Case(
        FWAD
        + "def f(x, t):\n    torch = Tools()\n    g = torch.compile(h)\n    with fwAD.dual_level():\n        return g(fwAD.make_dual(x, t))\n"
    ),
    "local-compile-function": Case(
        FWAD
        + "def compile(fn):\n    return fn\n\ng = compile(torch.sin)\nwith fwAD.dual_level():\n    g(fwAD.make_dual(x, t))\n"
    ),
    "reassigned-to-eager": Case(
        FWAD + "f = torch.compile(torch.sin)\nf = torch.sin\nwith fwAD.dual_level():\n    f(fwAD.make_dual(x, t))\n"
    ),
    "builtin-compile": Case(FWAD + "code = compile('1', '<s>', 'eval')\nwith fwAD.dual_level():\n    eval(code)\n"),
    "disable-decorator-on-plain-callee": Case(
        FWAD
        + "@torch.compiler.disable\ndef eager(x):\n    return torch.sin(x)\n\n"
        + "with fwAD.dual_level():\n    eager(fwAD.make_dual(x, t))\n"
    ),
    "eager-backend-in-other-module": Case(
        FWAD + "from ops import g\n\nwith fwAD.dual_level():\n    g(fwAD.make_dual(x, t))\n",
        files=(("ops.py", "import torch\n\ng = torch.compile(torch.sin, backend='cudagraphs')\n"),),
    ),
    "jvp-inside-region-is-fine": Case(
        FWAD + "f = torch.compile(torch.sin)\nwith fwAD.dual_level():\n    torch.func.jvp(f, (x,), (t,))\n"
    ),
    "recursion-terminates": Case(
        FWAD
        + "def a(x, n):\n    return b(x, n - 1)\n\ndef b(x, n):\n    return a(x, n)\n\nwith fwAD.dual_level():\n    a(fwAD.make_dual(x, t), 3)\n"
    ),
    "circular-imports": Case(
        FWAD + "import one\n\nwith fwAD.dual_level():\n    one.f(fwAD.make_dual(x, t))\n",
        files=(
            ("one.py", "import two\n\ndef f(x):\n    return two.g(x)\n"),
            ("two.py", "import one\n\ndef g(x):\n    return one.f(x)\n"),
        ),
    ),
    "unrelated-backward": Case(
        "import torch\n\nmodel = torch.compile(net)\nwith torch.autocast('cuda'):\n    model(x)\nloss = (w * 2).sum()\nloss.backward()\n"
    ),
    "matching-list-config": Case(
        "import torch\nimport torch._functorch.config as fc\n\nmodel = torch.compile(net)\n"
        + "fc.backward_pass_autocast = [{'device_type': 'cuda', 'dtype': torch.bfloat16}]\nout = model(x)\n"
        + "with torch.autocast('cuda', dtype=torch.bfloat16):\n    out.sum().backward()\n"
    ),
    "config-set-by-branch-is-unknown": Case(
        "import torch\nimport torch._functorch.config as fc\n\nmodel = torch.compile(net)\nif amp_off:\n    fc.backward_pass_autocast = 'off'\n"
        + "with torch.autocast('cuda'):\n    loss = model(x).mean()\nloss.backward()\n"
    ),
    "custom-backward-method": Case(
        "import torch\n\nclass Trainer:\n    def backward(self, loss):\n        pass\n\nmodel = torch.compile(net)\nwith torch.autocast('cuda'):\n"
        + "    loss = model(x).mean()\nTrainer().backward(loss)\n"
    ),
    "attribute-of-compiled-is-eager": Case(
        FWAD
        + "class Net(torch.nn.Module):\n    def generate(self, x):\n        return x\n\n"
        + "m = torch.compile(Net())\nwith fwAD.dual_level():\n    m.generate(fwAD.make_dual(x, t))\n"
    ),
}

SUPPRESSION = {
    "noqa-bare": ("  # noqa", set()),
    "noqa-code": ("  # noqa: CAL001", set()),
    "noqa-other-code": ("  # noqa: E501  # expect: CAL001", {"CAL001"}),
    "tool-ignore": ("  # compile-ad-lint: ignore[CAL001]", set()),
    # The ignore[CAL002] silences nothing there: CAL901 says so (tests/rules/test_unused_noqa.py).
    "tool-ignore-other": ("  # compile-ad-lint: ignore[CAL002]  # expect: CAL001, CAL901", {"CAL001", "CAL901"}),
}


@pytest.mark.parametrize("case", [pytest.param(c, id=name) for name, c in POSITIVE.items()])
def test_positive(case, tmp_path):
    expected, reported = run_case(case, tmp_path)
    assert expected, "a positive case needs a marker"
    assert reported == expected


@pytest.mark.parametrize("case", [pytest.param(c, id=name) for name, c in NEGATIVE.items()])
def test_negative(case, tmp_path):
    expected, reported = run_case(case, tmp_path)
    assert not expected
    assert reported == set()


@pytest.mark.parametrize(("comment", "codes"), SUPPRESSION.values(), ids=SUPPRESSION.keys())
def test_suppression_comments(comment, codes, tmp_path):
    case = Case(
        FWAD + "f = torch.compile(torch.sin)\nwith fwAD.dual_level():\n    f(fwAD.make_dual(x, t))" + comment + "\n"
    )
    expected, reported = run_case(case, tmp_path)
    assert {code for _, _, code in reported} == codes
    assert reported == expected


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_only_a_comment_on_the_findings_own_line_suppresses_it(newline, tmp_path):
    """A finding's line is looked at before its file is tokenized: text that looks like a
    suppression in a string on that line, or a comment on another line, suppresses nothing, under
    every line ending Python accepts."""
    from compile_ad_lint.api import Analyzer

    call = "with fwAD.dual_level():\n    f(fwAD.make_dual(x, t))"
    variants = {
        "comment": (call + "  # noqa: CAL001\n", 0),
        "string": (call + ', "# noqa: CAL001"\n', 1),
        "next line": (call + "\n# noqa: CAL001\n", 1),
        "line before": ("# noqa: CAL001\n" + call + "\n", 1),
    }
    for name, (tail, count) in variants.items():
        folder = tmp_path / name.replace(" ", "_")
        folder.mkdir()
        text = FWAD + "f = torch.compile(torch.sin)\n" + tail
        (folder / "case.py").write_bytes(text.replace("\n", newline).encode())
        findings = Analyzer(Config(), use_cache=False, jobs=1).check([str(folder)]).findings
        assert [f.code for f in findings if f.code == "CAL001"] == ["CAL001"] * count, name


@pytest.mark.parametrize(
    ("coding", "line_end"), [("utf-7", b"+AAo-"), ("unicode_escape", b"\\n")], ids=["utf-7", "unicode-escape"]
)
def test_a_noqa_suppresses_under_a_coding_that_spells_line_ends_otherwise(coding, line_end, tmp_path):
    """Under a coding whose bytes write a line end as other bytes, the finding's line is its text's,
    not the bytes': its noqa still suppresses it (and CAL901 does not call it unused)."""
    from compile_ad_lint.api import Analyzer

    source = (
        f"# coding: {coding}\n".encode()
        + b"import torch"
        + line_end
        + b"import torch.autograd.forward_ad as fwAD\n"
        + b"f = torch.compile(torch.sin)\nwith fwAD.dual_level():\n    f(fwAD.make_dual(x, t))  # noqa: CAL001\n"
    )
    (tmp_path / "case.py").write_bytes(source)
    assert Analyzer(Config(), use_cache=False, jobs=1).check([str(tmp_path)]).findings == ()


def test_max_call_depth_limits_reach(tmp_path):
    chain = "".join(f"def hop{i}(x):\n    return hop{i + 1}(x)\n\n" for i in range(5))
    code = FWAD + "f = torch.compile(torch.sin)\n\n" + chain + "def hop5(x):\n    return f(x)\n\n"
    code += "with fwAD.dual_level():\n    hop0(fwAD.make_dual(x, t))  # expect: CAL001\n"
    (tmp_path / "deep").mkdir()
    (tmp_path / "shallow").mkdir()
    expected, reported = run_case(Case(code), tmp_path / "deep")
    assert reported == expected
    _, shallow = run_case(Case(code), tmp_path / "shallow", Config(max_call_depth=3))
    assert shallow == set()


def test_related_locations_name_every_hop(tmp_path):
    from compile_ad_lint.api import Analyzer

    case = POSITIVE["relative-import-chain"]
    from compile_ad_lint.testing import write_case

    write_case(case, tmp_path)
    (finding,) = Analyzer(Config(), use_cache=False, jobs=1).check([str(tmp_path)]).findings
    messages = [r.message for r in finding.related]
    assert messages[0] == "forward-AD region entered here"
    assert any("inner" in m for m in messages) and any("kernels.fast" in m for m in messages)
    assert messages[-1].startswith("compiled here (@torch.compile")
    assert finding.related[-1].location.path.endswith("kernels.py")
    assert "through 2 more calls" in " ".join(finding.details)


def test_compile_wrappers_from_configuration(tmp_path):
    helper = "import torch\n\ndef maybe_compile(fn, enabled=True):\n    return fn if not enabled else fn\n"
    code = (
        FWAD
        + "from tools import maybe_compile\n\nf = maybe_compile(torch.sin)\nwith fwAD.dual_level():\n    f(fwAD.make_dual(x, t))  # expect: CAL001\n"
    )
    case = Case(code, files=(("tools.py", helper),))
    (tmp_path / "plain").mkdir()
    (tmp_path / "wrapped").mkdir()
    _, without = run_case(case, tmp_path / "plain")
    assert without == set(), "an opaque project helper is not a compiler by itself"
    expected, reported = run_case(
        case, tmp_path / "wrapped", Config(compile_wrappers=frozenset({"tools.maybe_compile"}))
    )
    assert reported == expected and expected


def test_extend_safe_backends(tmp_path):
    code = (
        FWAD
        + "f = torch.compile(torch.sin, backend='my_backend')\nwith fwAD.dual_level():\n    f(fwAD.make_dual(x, t))  # expect: CAL001\n"
    )
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    expected, reported = run_case(Case(code), tmp_path / "a")
    assert reported == expected and expected
    _, reported = run_case(Case(code), tmp_path / "b", Config(extend_safe_backends=frozenset({"my_backend"})))
    assert reported == set()


INSTALLED_MODEL = """\
import torch


def build():
    return torch.compile(torch.nn.Linear(4, 4))
"""
EXAMPLE_SCRIPT = """\
import torch

from pkg.model import build


def main():
    model = build()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(torch.randn(2, 4)).sum()
    loss.backward()
"""


@pytest.mark.parametrize("layout", ["src/", ""], ids=["src-layout", "flat-layout"])
def test_a_script_checked_alone_imports_its_projects_packages(tmp_path, monkeypatch, layout):
    """``check examples/train.py`` resolves ``pkg`` as ``check .`` does: from the project's root
    or its ``src/`` folder, where the installed project's packages are (the single file was
    analyzed alone, so the pre-commit hook's file list and the language server's open-file pass
    reported nothing where the whole project's check reports CAL002)."""
    from compile_ad_lint.api import Analyzer

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "pkg"\n')
    (tmp_path / f"{layout}pkg").mkdir(parents=True)
    (tmp_path / f"{layout}pkg" / "__init__.py").write_text("")
    (tmp_path / f"{layout}pkg" / "model.py").write_text(INSTALLED_MODEL)
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "train.py").write_text(EXAMPLE_SCRIPT)
    monkeypatch.chdir(tmp_path)

    def located(paths: list[str]) -> list[tuple]:
        report = Analyzer(Config(), use_cache=False, jobs=1).check(paths)
        return [(f.code, f.location.path, f.location.line) for f in report.findings]

    assert located(["examples/train.py"]) == [("CAL002", "examples/train.py", 10)]
    assert located(["."]) == located(["examples/train.py"])


def test_import_roots_are_package_roots_then_the_project_and_its_source_layout(tmp_path):
    """A checked file's own package root comes first; then its project's root and ``src/`` (a
    folder holding packages, not a package itself); a loose script outside any project adds none."""
    from compile_ad_lint.project import SourceFile, import_roots

    def source(path: Path) -> SourceFile:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
        return SourceFile(str(path), path.resolve())

    project = tmp_path / "project"
    (project / "src" / "pkg").mkdir(parents=True)
    (project / "pyproject.toml").write_text("")
    script = source(project / "examples" / "train.py")
    assert import_roots([script]) == [
        (project / "examples").resolve(),
        project.resolve(),
        (project / "src").resolve(),
    ]
    (project / "src" / "__init__.py").write_text("")  # src/ is a package: imported as `src.pkg`
    assert import_roots([script]) == [(project / "examples").resolve(), project.resolve()]
    loose = source(tmp_path / "loose" / "run.py")
    assert import_roots([loose]) == [(tmp_path / "loose").resolve()]
