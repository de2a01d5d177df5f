"""Runtime facts behind CAL004 (double backward through a compiled region) and CAL005 (unused
compiled outputs give their leaves zero gradients instead of None), each case in its own process.

Run: python facts/double_backward_and_unused_outputs.py [CASE ...]   (needs torch; one or two small
compiles per case, a few minutes for all of them on 2 CPU cores; ``--jobs N`` runs N cases at once)

Each case prints one line ``CASE -> outcome``. Outcomes seen on torch 2.13.0+cpu are in ``SEEN``
(the rule docstrings of CAL004/CAL005 and the README quote them); ``--check`` exits 1 when a case
disagrees with ``SEEN`` (tests/test_facts_double_backward.py runs a few cases that way).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

RAISES_DOUBLE = "raises RuntimeError: torch.compile with aot_autograd does not currently support double backward"
NOT_USED = "autograd.grad(result, inputs) raises RuntimeError: The differentiated Tensor at index 0 appears to not have been used in the graph"

#: What each case printed on torch 2.13.0+cpu (2 CPU cores, Python 3.11).
SEEN = {
    # -- CAL004: a second backward through the compiled backward ---------------------------------
    "grad_create_graph_inductor": f"first-order grad correct; grad(create_graph=True) correct; second backward {RAISES_DOUBLE}",
    "backward_create_graph_inductor": f"backward(create_graph=True) correct; second backward {RAISES_DOUBLE}",
    "grad_create_graph_aot_eager": f"first-order grad correct; grad(create_graph=True) correct; second backward {RAISES_DOUBLE}",
    # cudagraphs on CPU: cudagraphs is skipped ("skipping cudagraphs due to cpu device"), the AOTAutograd
    # graph runs; after a first-order backward the compiled backward has donated its buffers
    "grad_create_graph_cudagraphs": (
        "first-order grad correct; grad(create_graph=True) raises RuntimeError: This backward function was compiled "
        "with non-empty donated buffers which requires create_graph=False and retain_graph=False"
    ),
    "grad_create_graph_cudagraphs_fresh": f"grad(create_graph=True) correct; second backward {RAISES_DOUBLE}",
    # a module whose backward saves activations: after a first-order backward, create_graph=True itself raises
    "create_graph_after_first_order_module_inductor": (
        "first-order backward correct; grad(create_graph=True) raises RuntimeError: This backward function was compiled "
        "with non-empty donated buffers which requires create_graph=False and retain_graph=False"
    ),
    "grad_create_graph_eager_backend": "first-order grad correct; grad(create_graph=True) correct; second backward correct",
    "grad_create_graph_disable": "first-order grad correct; grad(create_graph=True) correct; second backward correct",
    "grad_create_graph_disable_around_compiled": f"first-order grad correct; grad(create_graph=True) correct; second backward {RAISES_DOUBLE}",
    # the same under forward AD (CAL001): a disable'd function calling a compiled one still drops the tangent
    "disable_around_compiled_forward_ad": "tangent None",
    # torch.autograd.functional over a compiled callable
    "functional_jvp": RAISES_DOUBLE,
    "functional_vjp": "correct",
    # the result's graph reaches the compiled backward but not the inputs: .backward() raises,
    # autograd.grad(result, inputs) finds the inputs unused (allow_unused=True would give None)
    "functional_vjp_create_graph": f"vjp correct; .backward() through its result {RAISES_DOUBLE}; {NOT_USED}",
    "functional_hvp": RAISES_DOUBLE,
    "functional_vhp": RAISES_DOUBLE,
    "functional_hessian": "all-zero Hessian, no error (eager: non-zero)",
    "functional_jacobian_create_graph": f"jacobian correct; .backward() through its result {RAISES_DOUBLE}; {NOT_USED}",
    # torch.func transforms over a compiled callable
    "func_grad": "correct",
    "func_jacrev": "correct",
    "func_jacfwd": "correct",
    "func_hessian": "correct",
    "func_jvp": "correct",
    "func_vjp": "correct",
    # call order: once a torch.func transform has run a compiled function, later calls of it run eagerly
    "func_then_functional_hessian": "after torch.func.hessian: autograd.functional.hessian correct",
    # -- CAL005: zeros instead of None ------------------------------------------------------------
    "unused_output_inductor": "eager None; compiled zeros; compiled + .grad = None after backward: None",
    "unused_output_aot_eager": "eager None; compiled zeros",
    "unused_output_eager_backend": "eager None; compiled None",
    "unused_output_dict": "eager None; compiled zeros",
    # torch.autograd.grad returns the gradients instead of accumulating .grad
    "unused_output_autograd_grad": (
        "allow_unused=True: eager None, compiled zeros; without it: eager raises RuntimeError: The differentiated "
        "Tensor at index 1 appears to not have been used in the graph, compiled zeros"
    ),
    "fix_return_only_used": "eager None; compiled None",
    "module_aux_head": "eager None; compiled zeros; AdamW(weight_decay=0.1) step moves the aux head: eager no, compiled yes",
    "module_logits_and_loss": "every parameter's grad equal to eager; none None, none all-zero",
}
CASES = tuple(SEEN)


def _close(a, b) -> bool:
    import torch

    return bool(torch.allclose(a, b, atol=1e-5, rtol=1e-4))


def _verdict(ok: bool) -> str:
    return "correct" if ok else "WRONG"


def _raised(error: BaseException) -> str:
    first = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"raises {type(error).__name__}: {first.split('. ')[0][:160]}"


def _attempt(step) -> str:
    try:
        return _verdict(step())
    except Exception as error:  # a loud failure is an outcome
        return _raised(error)


def field(x):
    return (x * x * x).sin()


def scalar_field(x):
    return (x * x * x).sin().sum()


def _double_backward(fn, x) -> str:
    """First-order grad, then grad(create_graph=True) and a second backward through it, vs eager."""
    import torch

    eager_g = torch.autograd.grad(field(x).sum(), x, create_graph=True)[0]
    eager_gg = torch.autograd.grad(eager_g.sum(), x)[0]
    first = _attempt(lambda: _close(torch.autograd.grad(fn(x).sum(), x)[0], eager_g))
    try:
        (g,) = torch.autograd.grad(fn(x).sum(), x, create_graph=True)
    except Exception as error:
        return f"first-order grad {first}; grad(create_graph=True) {_raised(error)}"
    second = _attempt(lambda: _close(torch.autograd.grad(g.sum(), x)[0], eager_gg))
    return f"first-order grad {first}; grad(create_graph=True) {_verdict(_close(g, eager_g))}; second backward {second}"


def _two_outputs(a, u, w):
    return a @ u, a @ w


def _unused_leaf_grad(fn, reset: bool = False) -> str:
    import torch

    torch.manual_seed(0)
    m = torch.randn(3, 3)
    u, w = torch.randn(3, 3, requires_grad=True), torch.randn(3, 3, requires_grad=True)
    out = fn(m, u, w)
    used = out["main"] if isinstance(out, dict) else out[0] if isinstance(out, tuple) else out
    used.sum().backward()
    if reset:
        w.grad = None  # the suggested fix: reset the leaves only the unused output depends on
    if w.grad is None:
        return "None"
    return "zeros" if bool((w.grad == 0).all()) else "nonzero"


def _heads():
    import torch

    class TwoHeads(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.trunk = torch.nn.Linear(4, 4)
            self.head = torch.nn.Linear(4, 2)
            self.aux_head = torch.nn.Linear(4, 2)

        def forward(self, x):
            h = self.trunk(x).relu()
            return self.head(h), self.aux_head(h)

    return TwoHeads


def run(case: str) -> str:  # noqa: C901 - one branch per case, on purpose
    import torch

    torch.manual_seed(0)
    x = torch.randn(4, requires_grad=True)
    xp, v = torch.randn(4), torch.randn(4)
    compiled = lambda fn, **kw: torch.compile(fn, **kw)  # noqa: E731

    if case.startswith("grad_create_graph_"):
        backend = case.removeprefix("grad_create_graph_")
        if backend == "disable":
            return _double_backward(torch.compiler.disable(field), x)
        if backend == "cudagraphs_fresh":
            cf = compiled(field, backend="cudagraphs")
            eager_g = torch.autograd.grad(field(x).sum(), x, create_graph=True)[0]
            eager_gg = torch.autograd.grad(eager_g.sum(), x)[0]
            (g,) = torch.autograd.grad(cf(x).sum(), x, create_graph=True)
            second = _attempt(lambda: _close(torch.autograd.grad(g.sum(), x)[0], eager_gg))
            return f"grad(create_graph=True) {_verdict(_close(g, eager_g))}; second backward {second}"
        if backend == "disable_around_compiled":
            inner = compiled(field)
            return _double_backward(torch.compiler.disable(lambda t: inner(t)), x)
        kwargs = {} if backend == "inductor" else {"backend": "eager" if backend == "eager_backend" else backend}
        return _double_backward(compiled(field, **kwargs), x)
    if case == "create_graph_after_first_order_module_inductor":
        net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
        cnet = compiled(net)
        batch = torch.randn(3, 4)
        eager_grads = torch.autograd.grad(net(batch).sum(), list(net.parameters()))
        first = _verdict(all(_close(a, b) for a, b in zip(torch.autograd.grad(cnet(batch).sum(), list(net.parameters())), eager_grads)))
        try:
            torch.autograd.grad(cnet(batch).sum(), list(net.parameters()), create_graph=True)
        except Exception as error:
            return f"first-order backward {first}; grad(create_graph=True) {_raised(error)}"
        return f"first-order backward {first}; grad(create_graph=True) correct"
    if case == "disable_around_compiled_forward_ad":
        import torch.autograd.forward_ad as fwAD

        inner = compiled(torch.sin)
        outer = torch.compiler.disable(lambda t: inner(t))
        with fwAD.dual_level():
            tangent = fwAD.unpack_dual(outer(fwAD.make_dual(xp, v))).tangent
        return "tangent None" if tangent is None else _verdict(_close(tangent, xp.cos() * v))
    if case == "backward_create_graph_inductor":
        cf = compiled(field)
        eager_g = torch.autograd.grad(field(x).sum(), x, create_graph=True)[0]
        eager_gg = torch.autograd.grad(eager_g.sum(), x)[0]
        cf(x).sum().backward(create_graph=True)
        g = x.grad
        first = _verdict(_close(g, eager_g))
        return f"backward(create_graph=True) {first}; second backward {_attempt(lambda: _close(torch.autograd.grad(g.sum(), x)[0], eager_gg))}"

    functional = torch.autograd.functional
    if case.startswith("functional_"):
        name = case.removeprefix("functional_")
        cf, cs = compiled(field), compiled(scalar_field)
        if name == "jvp":
            return _attempt(lambda: _close(functional.jvp(cf, xp, v)[1], functional.jvp(field, xp, v)[1]))
        if name == "vjp":
            return _attempt(lambda: _close(functional.vjp(cf, xp, v)[1], functional.vjp(field, xp, v)[1]))
        if name == "hvp":
            return _attempt(lambda: _close(functional.hvp(cs, xp, v)[1], functional.hvp(scalar_field, xp, v)[1]))
        if name == "vhp":
            return _attempt(lambda: _close(functional.vhp(cs, xp, v)[1], functional.vhp(scalar_field, xp, v)[1]))
        if name == "hessian":
            got, want = functional.hessian(cs, xp), functional.hessian(scalar_field, xp)
            if _close(got, want):
                return "correct"
            zero = lambda t: "all-zero" if bool((t == 0).all()) else "non-zero"  # noqa: E731
            return f"{zero(got)} Hessian, no error (eager: {zero(want)})"
        if name in ("vjp_create_graph", "jacobian_create_graph"):
            if name == "vjp_create_graph":
                got, want = functional.vjp(cf, x, v, create_graph=True)[1], functional.vjp(field, x, v, create_graph=True)[1]
            else:
                got, want = functional.jacobian(cf, x, create_graph=True), functional.jacobian(field, x, create_graph=True)
            label = name.removesuffix("_create_graph")
            want_g = torch.autograd.grad(want.sum(), x, retain_graph=True)[0]
            by_grad = _attempt(lambda: _close(torch.autograd.grad(got.sum(), x, retain_graph=True)[0], want_g))
            x.grad = None
            by_backward = _attempt(lambda: (got.sum().backward(), _close(x.grad, want_g))[1])
            return f"{label} {_verdict(_close(got, want))}; .backward() through its result {by_backward}; autograd.grad(result, inputs) {by_grad}"

    func = torch.func
    if case.startswith("func_"):
        name = case.removeprefix("func_")
        if name == "grad":
            return _attempt(lambda: _close(func.grad(compiled(scalar_field))(xp), func.grad(scalar_field)(xp)))
        if name == "jacrev":
            return _attempt(lambda: _close(func.jacrev(compiled(field))(xp), func.jacrev(field)(xp)))
        if name == "jacfwd":
            return _attempt(lambda: _close(func.jacfwd(compiled(field))(xp), func.jacfwd(field)(xp)))
        if name == "hessian":
            return _attempt(lambda: _close(func.hessian(compiled(scalar_field))(xp), func.hessian(scalar_field)(xp)))
        if name == "jvp":
            return _attempt(lambda: _close(func.jvp(compiled(field), (xp,), (v,))[1], func.jvp(field, (xp,), (v,))[1]))
        if name == "vjp":
            return _attempt(lambda: _close(func.vjp(compiled(field), xp)[1](v)[0], func.vjp(field, xp)[1](v)[0]))

    if case == "func_then_functional_hessian":
        cs = compiled(scalar_field)
        func.hessian(cs)(xp)
        got, want = functional.hessian(cs, xp), functional.hessian(scalar_field, xp)
        return f"after torch.func.hessian: autograd.functional.hessian {_verdict(_close(got, want))}"
    if case.startswith("unused_output_"):
        variant = case.removeprefix("unused_output_")
        eager = _unused_leaf_grad(_two_outputs)
        if variant == "dict":
            return f"eager {_unused_leaf_grad(lambda a, u, w: {'main': a @ u, 'aux': a @ w})}; compiled {_unused_leaf_grad(compiled(lambda a, u, w: {'main': a @ u, 'aux': a @ w}))}"
        if variant == "autograd_grad":
            cf = compiled(_two_outputs)
            outcomes = []
            for allow_unused in (True, False):
                row = []
                for fn in (_two_outputs, cf):
                    m = torch.randn(3, 3)
                    u, w = torch.randn(3, 3, requires_grad=True), torch.randn(3, 3, requires_grad=True)
                    try:
                        _, gw = torch.autograd.grad(fn(m, u, w)[0].sum(), (u, w), allow_unused=allow_unused)
                        row.append("None" if gw is None else "zeros" if bool((gw == 0).all()) else "nonzero")
                    except Exception as error:
                        row.append(_raised(error))
                outcomes.append(row)
            (e1, c1), (e2, c2) = outcomes
            return f"allow_unused=True: eager {e1}, compiled {c1}; without it: eager {e2}, compiled {c2}"
        if variant == "inductor":
            cf = compiled(_two_outputs)
            return f"eager {eager}; compiled {_unused_leaf_grad(cf)}; compiled + .grad = None after backward: {_unused_leaf_grad(cf, reset=True)}"
        backend = "eager" if variant == "eager_backend" else variant
        return f"eager {eager}; compiled {_unused_leaf_grad(compiled(_two_outputs, backend=backend))}"
    if case == "fix_return_only_used":
        only_used = lambda a, u, w: a @ u  # noqa: E731 - w still passed, no longer returned
        return f"eager {_unused_leaf_grad(only_used)}; compiled {_unused_leaf_grad(compiled(only_used))}"
    if case == "module_aux_head":
        results = []
        for compile_it in (False, True):
            torch.manual_seed(0)
            net = _heads()()
            model = compiled(net) if compile_it else net
            optimizer = torch.optim.AdamW(net.parameters(), lr=0.1, weight_decay=0.1)
            before = net.aux_head.weight.detach().clone()
            main, _aux = model(torch.randn(3, 4))
            main.sum().backward()
            grad = net.aux_head.weight.grad
            state = "None" if grad is None else "zeros" if bool((grad == 0).all()) else "nonzero"
            optimizer.step()
            moved = not torch.equal(before, net.aux_head.weight.detach())
            results.append((state, "yes" if moved else "no"))
        (eager_state, eager_moved), (compiled_state, compiled_moved) = results
        return (
            f"eager {eager_state}; compiled {compiled_state}; AdamW(weight_decay=0.1) step moves the aux head: "
            f"eager {eager_moved}, compiled {compiled_moved}"
        )
    if case == "module_logits_and_loss":
        torch.manual_seed(0)
        net = _heads()()
        loss_fn = lambda m, x: (lambda a, b: (a, a.square().mean() + b.square().mean()))(*m(x))  # noqa: E731
        batch = torch.randn(3, 4)
        _, loss = loss_fn(net, batch)
        loss.backward()
        eager = {name: p.grad.clone() for name, p in net.named_parameters()}
        net.zero_grad(set_to_none=True)
        _, loss = compiled(lambda x: loss_fn(net, x))(batch)
        loss.backward()
        same = all(p.grad is not None and torch.allclose(p.grad, eager[name], atol=1e-5) for name, p in net.named_parameters())
        zero = any(p.grad is not None and bool((p.grad == 0).all()) for p in net.parameters())
        none = any(p.grad is None for p in net.parameters())
        return f"every parameter's grad {'equal to' if same else 'DIFFERENT from'} eager; {'some' if none else 'none'} None, {'some' if zero else 'none'} all-zero"
    raise SystemExit(f"unknown case {case!r}; known: {', '.join(CASES)}")


def _child(case: str) -> str:
    try:
        return run(case)
    except Exception as error:
        return _raised(error)


def _spawn(case: str) -> str:
    done = subprocess.run([sys.executable, __file__, "--child", case], capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith(f"{case} -> ")]
    return lines[-1].split(" -> ", 1)[1] if lines else f"no outcome (exit {done.returncode}): {done.stderr.strip().splitlines()[-1:]}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", default=list(CASES))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--check", action="store_true", help="exit 1 when an outcome differs from SEEN")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    if args.child:
        for case in args.cases:
            print(f"{case} -> {_child(case)}", flush=True)
        return 0
    differ = 0
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for case, outcome in zip(args.cases, pool.map(_spawn, args.cases)):
            seen = SEEN.get(case)
            mark = "" if outcome == seen else f"   (SEEN on 2.13: {seen})"
            differ += outcome != seen
            print(f"{case} -> {outcome}{mark}", flush=True)
    return 1 if args.check and differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
