"""Runtime facts behind CAL004 (double backward through a compiled region) and CAL005 (unused
compiled outputs give their leaves zero gradients instead of None), each case in its own process.

Run: python facts/double_backward_and_unused_outputs.py [CASE ...] [--jobs N] [--json] [--record] [--check]
(needs torch; one or two small compiles per case, a few minutes for all of them on 2 CPU cores)

What each case gave on each recorded torch is in ``recorded/torch-<version>.json`` (the rule docs of
CAL004/CAL005 quote it); ``--check`` exits 1 when a case disagrees with the installed torch's record.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import main

#: The cases, in the order they are run and recorded.
NAMES = (
    "grad_create_graph_inductor",
    "backward_create_graph_inductor",
    "grad_create_graph_aot_eager",
    "grad_create_graph_cudagraphs",
    "grad_create_graph_cudagraphs_fresh",
    "create_graph_after_first_order_module_inductor",
    "grad_create_graph_eager_backend",
    "grad_create_graph_disable",
    "grad_create_graph_disable_around_compiled",
    "disable_around_compiled_forward_ad",
    "functional_jvp",
    "functional_vjp",
    "functional_vjp_create_graph",
    "functional_hvp",
    "functional_vhp",
    "functional_hessian",
    "functional_jacobian_create_graph",
    "func_grad",
    "func_jacrev",
    "func_jacfwd",
    "func_hessian",
    "func_jvp",
    "func_vjp",
    "func_then_functional_hessian",
    "unused_output_inductor",
    "unused_output_aot_eager",
    "unused_output_eager_backend",
    "unused_output_dict",
    "unused_output_autograd_grad",
    "fix_return_only_used",
    "module_aux_head",
    "module_logits_and_loss",
    "double_backward_inside_compiled_function",
    "backward_create_graph_inside_compiled_function",
    "grad_twice_inside_compiled_function",
    "backward_then_grad_inside_compiled_function",
    "penalty_with_critic_losses_inside_compiled_function",
    "penalty_in_loss_module_inside_compiled_function",
)


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


def _critic_class():
    """A GAN/GAIL critic: a module of its own class around a small MLP (16 -> 1)."""
    import torch

    class Critic(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))

        def forward(self, x):
            return self.net(x)

    return Critic


def _eager_then_compiled(model, step_of, inputs, **options):
    """``step_of(copy)`` run eagerly, then ``step_of(model)`` compiled, each on clones of ``inputs``:
    (the compiled run's error as an outcome or None, the eager result, the compiled result, the copy)."""
    import copy

    import torch

    reference = copy.deepcopy(model)
    eager = step_of(reference)(*(x.clone() for x in inputs))
    try:
        got = torch.compile(step_of(model), **options)(*(x.clone() for x in inputs))
    except Exception as error:
        return _raised(error), eager, None, reference
    return None, eager, got, reference


def _same_grads(model, reference) -> bool:
    return all(
        a.grad is not None and _close(a.grad, b.grad) for a, b in zip(model.parameters(), reference.parameters())
    )


def run(case: str) -> str:
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
        first = _verdict(
            all(
                _close(a, b)
                for a, b in zip(torch.autograd.grad(cnet(batch).sum(), list(net.parameters())), eager_grads)
            )
        )
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
                got, want = (
                    functional.vjp(cf, x, v, create_graph=True)[1],
                    functional.vjp(field, x, v, create_graph=True)[1],
                )
            else:
                got, want = (
                    functional.jacobian(cf, x, create_graph=True),
                    functional.jacobian(field, x, create_graph=True),
                )
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
        same = all(
            p.grad is not None and torch.allclose(p.grad, eager[name], atol=1e-5) for name, p in net.named_parameters()
        )
        zero = any(p.grad is not None and bool((p.grad == 0).all()) for p in net.parameters())
        none = any(p.grad is None for p in net.parameters())
        return f"every parameter's grad {'equal to' if same else 'DIFFERENT from'} eager; {'some' if none else 'none'} None, {'some' if zero else 'none'} all-zero"
    if case in (
        "backward_create_graph_inside_compiled_function",
        "grad_twice_inside_compiled_function",
        "backward_then_grad_inside_compiled_function",
    ):
        # The same penalty with ``backward(create_graph=True)`` then a backward of the input's
        # gradient; or a second ``autograd.grad`` (a Hessian-vector product) in the same body.
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))

        def step_of(model):
            def step(x):
                x = x.requires_grad_(True)
                out = model(x).sum()
                if case.startswith("backward_create_graph"):
                    out.backward(create_graph=True)
                    x.grad.square().sum().backward()
                    return out.detach()
                if case.startswith("backward_then_grad"):
                    out.backward(create_graph=True)
                    (hg,) = torch.autograd.grad(x.grad.square().sum(), x)
                    return hg
                (g,) = torch.autograd.grad(out, x, create_graph=True)
                (hg,) = torch.autograd.grad(g.square().sum(), x)
                return hg

            return step

        error, eager, got, reference = _eager_then_compiled(net, step_of, (torch.randn(3, 4),))
        if error:
            return error
        same = _same_grads(net, reference) if case.startswith("backward_create_graph") else _close(got, eager)
        return "equal to eager" if same else "DIFFERENT from eager"
    if case == "penalty_with_critic_losses_inside_compiled_function":
        # A WGAN-GP/GAIL critic update: the penalty's gradient and the critic's own losses in one
        # backward, a critic module of its own class, mode="reduce-overhead"
        # (fixtures/cal004_compiled_update.py).
        torch.manual_seed(0)
        critic = _critic_class()()
        expert, policy = torch.randn(5, 16), torch.randn(5, 16)

        def update_of(model):
            def update(e, p):
                mix = (0.5 * e + 0.5 * p).requires_grad_(True)
                (grads,) = torch.autograd.grad(model(mix).sum(), mix, create_graph=True)
                loss = -model(e).mean() + model(p).mean() + 10 * ((grads.norm(2, dim=1) - 1) ** 2).mean()
                loss.backward()
                return loss.detach()

            return update

        error, _, _, reference = _eager_then_compiled(critic, update_of, (expert, policy), mode="reduce-overhead")
        return (
            error
            or f"every parameter's grad {'equal to' if _same_grads(critic, reference) else 'DIFFERENT from'} eager"
        )
    if case == "penalty_in_loss_module_inside_compiled_function":
        # The penalty's ``grad(create_graph=True)`` in a loss module's ``forward`` that the compiled
        # update calls, the backward in the update (pytorch/rl's gail: ``GAILLoss.forward``).
        class PenaltyLoss(torch.nn.Module):
            def __init__(self, critic) -> None:
                super().__init__()
                self.critic = critic

            def forward(self, e, p):
                mix = (0.5 * e + 0.5 * p).requires_grad_(True)
                (grads,) = torch.autograd.grad(self.critic(mix).sum(), mix, create_graph=True)
                return -self.critic(e).mean() + self.critic(p).mean() + 10 * ((grads.norm(2, dim=1) - 1) ** 2).mean()

        torch.manual_seed(0)
        critic = _critic_class()()
        expert, policy = torch.randn(5, 16), torch.randn(5, 16)

        def loss_update_of(model):
            loss_module = PenaltyLoss(model)

            def update(e, p):
                loss = loss_module(e, p)
                loss.backward()
                return loss.detach()

            return update

        error, _, _, reference = _eager_then_compiled(critic, loss_update_of, (expert, policy))
        return (
            error
            or f"every parameter's grad {'equal to' if _same_grads(critic, reference) else 'DIFFERENT from'} eager"
        )
    if case == "double_backward_inside_compiled_function":
        # A gradient penalty computed and backpropagated inside the compiled function itself
        # (pytorch/rl's gail update under ``compile.compile``): grad(create_graph=True), then backward.
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))

        def update_of(model):
            def update(x):
                x = x.requires_grad_(True)
                out = model(x).sum()
                (g,) = torch.autograd.grad(out, x, create_graph=True)
                loss = out + (g.norm(2, dim=1) - 1).pow(2).mean()
                loss.backward()
                return loss

            return update

        error, _, _, reference = _eager_then_compiled(net, update_of, (torch.randn(3, 4),))
        return (
            error or f"every parameter's grad {'equal to' if _same_grads(net, reference) else 'DIFFERENT from'} eager"
        )
    raise SystemExit(f"unknown case {case!r}; known: {', '.join(NAMES)}")


CASES = {name: partial(run, name) for name in NAMES}

if __name__ == "__main__":
    sys.exit(main(__file__, CASES))
