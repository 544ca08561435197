"""The autograd engine, grad mode, Function and register_autograd (issue 6)."""

from __future__ import annotations

import threading
import warnings
from typing import Any

import numpy as np
import pytest

import dispatch
import tensor as tt
from tensor.autograd import Function, GradcheckError, gradcheck, gradgradcheck


def leaf(values: Any, dtype: Any = tt.float64) -> tt.Tensor:
    return tt.tensor(values, dtype=dtype, requires_grad=True)


def close(t: tt.Tensor, expected: Any) -> bool:
    return bool(np.allclose(t.numpy(), np.asarray(expected), rtol=1e-6, atol=1e-9))


def test_gradients_match_torch_with_broadcasting() -> None:
    torch = pytest.importorskip("torch", reason="PyTorch not installed: differential check skipped")
    xs, ws = [0.5, 1.0, 2.0], [[1.0], [2.0]]
    x, w = leaf(xs), leaf(ws)
    y = tt.sin(x) * x + w**2 / x - tt.exp(-x) * 3
    y.backward(tt.ones_like(y))
    tx = torch.tensor(xs, dtype=torch.float64, requires_grad=True)
    tw = torch.tensor(ws, dtype=torch.float64, requires_grad=True)
    ty = torch.sin(tx) * tx + tw**2 / tx - torch.exp(-tx) * 3
    ty.backward(torch.ones_like(ty))
    assert close(x.grad, tx.grad.numpy()) and close(w.grad, tw.grad.numpy())
    assert x.grad.shape == x.shape and w.grad.shape == w.shape


def test_graph_introspection() -> None:
    x = leaf([1.0, 2.0])
    y = tt.sin(x) + x
    assert not y.is_leaf and x.is_leaf and y.requires_grad
    assert y.grad_fn.name() == "AddBackward0"
    (sin_edge, add_input), (acc, nr) = y.grad_fn.next_functions
    assert sin_edge.name() == "SinBackward0" and acc.name() == "AccumulateGrad"
    assert acc.variable is x and nr == 0
    assert "grad_fn=<AddBackward0>" in repr(y)


def test_shared_subgraph_runs_once_and_gradients_sum() -> None:
    x = leaf([1.0, 2.0, 3.0])
    shared = tt.exp(x)
    runs: list[int] = []
    shared.grad_fn.register_hook(lambda gi, go: runs.append(1))
    y = shared * 2 + shared * shared
    y.backward(tt.ones_like(y))
    assert runs == [1]
    assert close(x.grad, (2 + 2 * np.exp([1.0, 2.0, 3.0])) * np.exp([1.0, 2.0, 3.0]))


def test_deep_graph_needs_no_recursion() -> None:
    x = leaf([1.0])
    y = x
    for _ in range(100_000):
        y = y + 1.0
    y.backward(tt.ones_like(y))
    assert close(x.grad, [1.0])


def test_second_backward_through_freed_graph_raises_and_retain_graph_allows_it() -> None:
    x = leaf([1.0, 2.0])
    y = tt.exp(x) * x
    g = tt.ones_like(y)
    y.backward(g, retain_graph=True)
    y.backward(g)
    assert close(x.grad, 2 * (np.exp([1.0, 2.0]) * (np.array([1.0, 2.0]) + 1)))
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward(g)


def test_backward_needs_a_gradient_for_non_scalars_and_a_graph() -> None:
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="does not require grad"):
        tt.tensor([1.0]).backward()


def test_create_graph_gives_second_derivatives() -> None:
    x = leaf([0.5, 1.5])
    (g,) = tt.autograd.grad(tt.sin(x) * x, x, grad_outputs=tt.ones_like(x), create_graph=True)
    assert g.requires_grad
    (g2,) = tt.autograd.grad(g, x, grad_outputs=tt.ones_like(x))
    xs = np.array([0.5, 1.5])
    assert close(g2, 2 * np.cos(xs) - xs * np.sin(xs))


def test_grad_does_not_touch_dot_grad_and_checks_unused_inputs() -> None:
    x, z = leaf([1.0, 2.0]), leaf([3.0])
    (g,) = tt.autograd.grad(x * x, x, grad_outputs=tt.ones_like(x))
    assert close(g, [2.0, 4.0]) and x.grad is None
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        tt.autograd.grad(x * x, [x, z], grad_outputs=tt.ones_like(x))
    gx, gz = tt.autograd.grad(x * x, [x, z], grad_outputs=tt.ones_like(x), allow_unused=True)
    assert gz is None and close(gx, [2.0, 4.0])


def test_backward_inputs_limits_accumulation() -> None:
    x, w = leaf([1.0]), leaf([2.0])
    (x * w).backward(tt.ones_like(x), inputs=[w])
    assert x.grad is None and close(w.grad, [1.0])


def test_hooks_on_leaves_and_non_leaves_and_retain_grad() -> None:
    x = leaf([1.0, 2.0])
    handle = x.register_hook(lambda g: g * 10)
    mid = x * 3
    mid.retain_grad()
    mid.register_hook(lambda g: g + 1)
    (mid * 2).backward(tt.ones_like(x))
    assert close(mid.grad, [3.0, 3.0])  # retained after the hook ran
    assert close(x.grad, [90.0, 90.0])
    handle.remove()
    x.grad = None
    (x * 1.0).backward(tt.ones_like(x))
    assert close(x.grad, [1.0, 1.0])


def test_detach_and_leaf_rules() -> None:
    x = leaf([1.0])
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf variables"):
        y.requires_grad = False
    y.detach_()
    assert y.grad_fn is None and not y.requires_grad
    with pytest.raises(RuntimeError, match="floating point and complex dtype"):
        tt.tensor([1, 2]).requires_grad_()


def test_integer_and_bool_outputs_do_not_require_grad() -> None:
    x = leaf([1.0, -2.0])
    assert not (x > 0).requires_grad
    assert not tt.ones_like(x).requires_grad


def test_grad_mode_guards_restore_on_error_and_are_thread_local() -> None:
    x = leaf([1.0])
    with tt.no_grad():
        assert not (x * 2).requires_grad
        with tt.enable_grad():
            assert (x * 2).requires_grad
    with pytest.raises(ValueError), tt.no_grad():
        raise ValueError
    assert tt.is_grad_enabled()
    seen = {}
    with tt.no_grad():
        t = threading.Thread(target=lambda: seen.setdefault("other", tt.is_grad_enabled()))
        t.start()
        t.join()
    assert seen == {"other": True}

    @tt.no_grad()
    def double(v: tt.Tensor) -> tt.Tensor:
        return v * 2

    def gen() -> Any:
        yield tt.is_grad_enabled()
        yield tt.is_grad_enabled()

    assert not double(x).requires_grad
    assert list(tt.no_grad()(gen)()) == [False, False] and tt.is_grad_enabled()
    tt.set_grad_enabled(False)
    assert not tt.is_grad_enabled()
    tt.set_grad_enabled(True)
    with tt.set_grad_enabled(False):
        assert not tt.is_grad_enabled()
    assert tt.is_grad_enabled()


def test_inference_mode_excludes_the_autograd_keys() -> None:
    x = leaf([1.0])
    with tt.inference_mode():
        assert not tt.is_grad_enabled() and tt.is_inference_mode_enabled()
        assert dispatch.DispatchKey.AutogradCPU in dispatch.tls_local_exclude_set()
        assert not (x * 2).requires_grad
    assert dispatch.DispatchKey.AutogradCPU not in dispatch.tls_local_exclude_set()


def test_no_autograd_layer_when_nothing_requires_grad() -> None:
    plain = tt.tensor([1.0])
    text = dispatch.explain(dispatch.ops.core.sin.default, plain)
    assert "AutogradCPU (grad-only" in text and "1. CPU" in text
    text = dispatch.explain(dispatch.ops.core.sin.default, leaf([1.0]))
    assert "1. AutogradCPU" in text and "autograd_sin" in text


class Cube(Function):
    @staticmethod
    def forward(ctx: Any, x: tt.Tensor, scale: float) -> tt.Tensor:
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x * x * x * scale

    @staticmethod
    def backward(ctx: Any, grad: tt.Tensor) -> tuple[Any, ...]:
        (x,) = ctx.saved_tensors
        assert ctx.needs_input_grad == (True, False)
        return grad * 3 * x * x * ctx.scale, None


class WrongCube(Cube):
    @staticmethod
    def backward(ctx: Any, grad: tt.Tensor) -> tuple[Any, ...]:
        (x,) = ctx.saved_tensors
        return grad * 2 * x, None


class Square(Function):
    """The setup_context style."""

    @staticmethod
    def forward(x: tt.Tensor) -> tt.Tensor:
        return x * x

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx: Any, grad: tt.Tensor) -> tt.Tensor:
        (x,) = ctx.saved_tensors
        return grad * 2 * x


def test_function_both_styles_and_gradcheck() -> None:
    x = leaf([0.5, 2.0])
    y = Cube.apply(x, 2.0)
    assert y.grad_fn.name() == "CubeBackward"
    y.backward(tt.ones_like(y))
    assert close(x.grad, 6 * np.array([0.25, 4.0]))
    assert gradcheck(lambda v: Cube.apply(v, 2.0), (leaf([0.3, 0.7]),))
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradcheck(lambda v: WrongCube.apply(v, 2.0), (leaf([0.3, 0.7]),))
    assert not gradcheck(lambda v: WrongCube.apply(v, 2.0), (leaf([0.3]),), raise_exception=False)
    z = leaf([3.0])
    Square.apply(z).backward(tt.ones_like(z))
    assert close(z.grad, [6.0])


def test_gradcheck_and_gradgradcheck_on_formulas() -> None:
    x = leaf([0.3, 0.7])
    y = leaf([1.2, 0.4])
    assert gradcheck(lambda a, b: tt.atan2(a, b) * tt.hypot(a, b) + a**b, (x, y))
    assert gradcheck(
        lambda a: tt.gelu(a, approximate="tanh") if hasattr(tt, "gelu") else tt.tanh(a), (x,)
    )
    assert gradgradcheck(lambda a: tt.sigmoid(a) * a**3, (x,))
    assert gradcheck(lambda a: a.sum(), (x,)) and gradcheck(lambda a: a.mean(), (x,))


def test_register_autograd_on_a_custom_op() -> None:
    @dispatch.custom_op("test_autograd::scaled", mutates_args=())
    def scaled(x: tt.Tensor, k: float) -> tt.Tensor:
        return x * k

    def setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        ctx.k = inputs[1]

    def backward(ctx: Any, grad: tt.Tensor) -> tuple[Any, ...]:
        return grad * ctx.k, None

    try:
        x = leaf([1.0, 2.0])
        with pytest.warns(UserWarning, match="test_autograd::scaled: an autograd kernel was not"):
            scaled(x, 3.0).backward(tt.ones_like(x))
        assert x.grad is None  # the warn fallback passes no gradient on
        scaled.register_autograd(backward, setup_context=setup)
        scaled(x, 3.0).backward(tt.ones_like(x))
        assert close(x.grad, [3.0, 3.0])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert not scaled(tt.tensor([1.0]), 2.0).requires_grad
    finally:
        scaled._destroy()


def test_roots_sharing_a_node_and_grads_that_alias() -> None:
    x = leaf([1.0, 2.0, 3.0, 4.0])
    a, b = x.split(2)
    ga, gb = tt.autograd.grad([a.sum(), (b * 2).sum()], [a, b], retain_graph=True)
    assert close(ga, [1.0, 1.0]) and close(gb, [2.0, 2.0])
    gx = tt.autograd.grad([a, b], x, grad_outputs=[tt.ones(2, dtype=tt.float64)] * 2)[0]
    assert close(gx, [1.0, 1.0, 1.0, 1.0])
    p, q = leaf([1.0]), leaf([2.0])
    (p + q).sum().backward()
    p.grad.zero_()
    assert close(q.grad, [1.0])  # not the same buffer as p.grad
    r = leaf([1.0, 2.0])
    r.sum().backward()  # the sum's gradient is an expansion; .grad is its own copy
    r.grad.zero_()
    assert close(r.grad, [0.0, 0.0])


def test_leaf_gradients_are_stolen_only_when_nothing_else_holds_them() -> None:
    """Note [Stealing gradients]: a fresh gradient becomes ``.grad`` without a copy; one
    that another leaf, the caller or a view can see is copied."""
    calls: list[str] = []

    class Count(dispatch.DispatchMode):
        def __dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            calls.append(func.name)
            return func(*args, **(kwargs or {}))

    def copies(loss: tt.Tensor, *args: Any) -> int:
        calls.clear()
        with Count():
            loss.backward(*args)
        # Copies: AccumulateGrad's (clone, PyTorch's clone_obey_contract) and formulas' (_to_copy).
        return calls.count("core::clone") + calls.count("core::_to_copy")

    ones = tt.ones(2, dtype=tt.float64)
    w = leaf([[1.0, 2.0], [3.0, 4.0]])
    x = tt.tensor([[1.0, 0.5]], dtype=tt.float64)
    assert copies(x @ w, tt.ones(1, 2, dtype=tt.float64)) == 0  # mm's own result
    assert close(w.grad, [[1.0, 1.0], [0.5, 0.5]])
    p, q = leaf([1.0, 1.0]), leaf([2.0, 2.0])
    assert copies((p + q) * 2, ones) == 1  # add passes one tensor to both leaves: one copy
    p.grad.zero_()
    assert close(q.grad, [2.0, 2.0])
    r = leaf([1.0, 2.0])
    assert copies(r, ones) == 1  # the caller's gradient tensor itself
    ones.zero_()
    assert close(r.grad, [1.0, 1.0])
    s = leaf([1.0, 2.0])
    assert copies(s.sum()) == 1  # sum's formula copies its expansion; that copy is stolen
    kept: list[tt.Tensor] = []
    u = leaf([1.0, 2.0])
    u.register_hook(lambda grad: kept.append(grad))
    assert copies(u * 3, tt.ones(2, dtype=tt.float64)) == 1  # a hook kept a reference
    u.grad.zero_()
    assert close(kept[0], [3.0, 3.0])


def test_gradcheck_handles_outputs_independent_of_inputs_and_empty_inputs() -> None:
    x = leaf([0.5, 1.5])
    assert gradcheck(lambda v: (v * 2, tt.ones(2, dtype=tt.float64)), (x,))
    assert gradgradcheck(lambda v: -v, (x,))
    assert gradcheck(lambda v, e: v.sum() + e.sum(), (x, leaf([])))


def test_stolen_gradients_never_alias_anything_visible() -> None:
    """Note [Stealing gradients], as a property: on random graphs over three leaves (with
    shared subexpressions, passthrough ops, a retained intermediate and a hook that keeps
    what it sees), writing each ``.grad`` in place changes nothing else that is visible."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    ops_ = st.lists(
        st.tuples(st.sampled_from(["add", "sub", "mul", "neg", "mm", "sum_to", "keep"]),
                  st.integers(0, 9), st.integers(0, 9)),
        min_size=1, max_size=8,
    )  # fmt: skip

    @settings(max_examples=60, deadline=None)
    @given(ops_, st.booleans())
    def check(program: list[tuple[str, int, int]], retain: bool) -> None:
        leaves = [leaf(np.full((2, 2), float(i + 1))) for i in range(3)]
        kept: list[tt.Tensor] = []
        leaves[2].register_hook(lambda g: kept.append(g))
        values = list(leaves)
        for name, i, j in program:
            a, b = values[i % len(values)], values[j % len(values)]
            if name == "add":
                values.append(a + b)
            elif name == "sub":
                values.append(a - b)
            elif name == "mul":
                values.append(a * b)
            elif name == "neg":
                values.append(-a)
            elif name == "mm":
                values.append(a @ b)
            elif name == "sum_to":
                values.append(a.sum(0, keepdim=True) + b)
            else:
                values.append(a * 1.0)
        retained = values[-1] * 1.0
        if retain:
            retained.retain_grad()
        (retained + sum(values[3:], tt.zeros(2, 2, dtype=tt.float64))).sum().backward()
        visible = [t.grad for t in leaves if t.grad is not None] + kept
        if retain:
            visible.append(retained.grad)
        snapshot = [v.numpy().copy() for v in visible]
        for t in leaves:
            if t.grad is None:
                continue
            own = next(k for k, v in enumerate(visible) if v is t.grad)
            t.grad.fill_(-7.0)  # a write into one .grad ...
            for k, (v, before) in enumerate(zip(visible, snapshot, strict=True)):
                if k != own:  # ... reaches no other visible tensor
                    assert np.array_equal(v.numpy(), before), (program, k, own)
            t.grad.copy_(tt.tensor(snapshot[own]))

    check()


# Note [The engine's common loop]: backward() takes ``_run_all``, autograd.grad and
# backward(inputs=) take ``_run``; over random graphs (shared subgraphs, multi-output
# nodes, views, hooks, outputs that get no gradient) both give the same gradients, in
# the same order of hook calls.
_GRAPH_STEPS = [
    lambda x, y: x * y,
    lambda x, y: tt.sin(x) + y,
    lambda x, y: x.split(2)[0].repeat(2) * y if x.shape[0] == 4 else x - y,
    lambda x, y: tt.relu(x - 0.5) + y.exp(),
    lambda x, y: (x @ y.reshape(4, 1)).expand(4) if x.ndim == 1 else x,
    lambda x, y: x.T.T + y.sum(),
    lambda x, y: tt.max(x, 0)[0] + y if x.ndim == 1 else x,
    lambda x, y: x[1:].sum() * y + x,
]


@pytest.mark.parametrize("seed", range(40))
def test_common_engine_loop_matches_the_general_loop(seed: int) -> None:
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((3, 4))

    def run(use_grad: bool) -> tuple[list[Any], list[str]]:
        calls: list[str] = []
        leaves = [leaf(row) for row in data]
        leaves[0].register_hook(lambda g: calls.append("leaf0") or g * 2)
        values = list(leaves)
        for k in range(6):
            i, j = rng_steps[k]
            out = _GRAPH_STEPS[i](values[j % len(values)], values[(j + 1) % len(values)])
            if k == 2:
                out.register_hook(lambda g: calls.append("mid") or None)
            values.append(out)
        loss = sum(v.sum() for v in values[3:])
        if use_grad:
            grads = list(tt.autograd.grad(loss, leaves, allow_unused=True))
        else:
            loss.backward()
            grads = [t.grad for t in leaves]
        return grads, calls

    rng_steps = [(int(rng.integers(len(_GRAPH_STEPS))), int(rng.integers(9))) for _ in range(6)]
    general, general_calls = run(True)
    common, common_calls = run(False)
    assert general_calls == common_calls
    for g, c in zip(general, common, strict=True):
        assert (g is None) == (c is None)
        if g is not None:
            np.testing.assert_allclose(c.numpy(), g.numpy(), rtol=1e-12, atol=0)


def test_a_leaf_keeps_one_accumulator_without_a_cycle() -> None:
    """Note [One accumulator a leaf]: made once, the same node from graph to graph, held
    by the leaf while it holds the leaf weakly: dropping the leaf frees both by
    reference counting alone."""
    import gc
    import weakref

    x = leaf([1.0, 2.0])
    first = (x * 2).grad_fn.next_functions[0][0]
    second = (x * 3).grad_fn.next_functions[0][0]
    assert first is second and first.variable is x
    (x * 3).sum().backward()
    assert close(x.grad, [3.0, 3.0])
    gc.disable()
    try:
        gone = weakref.ref(first)
        y = (x * 2).sum()
        del first, second, x
        y.backward()  # the leaf is gone: nothing to add to, nothing raised
        del y
        assert gone() is None
    finally:
        gc.enable()


@pytest.mark.parametrize("seed", range(60))
def test_hook_order_over_random_graphs_is_pytorchs(seed: int) -> None:
    """The engine runs nodes in PyTorch's order: hooks of intermediate tensors and of
    leaves (run when their AccumulateGrad does) are called in the same sequence as
    PyTorch's, over random graphs.  Which of two accumulators ready at once runs first is
    unspecified in PyTorch (equal sequence numbers), so leaves compare as one name."""
    torch = pytest.importorskip("torch", reason="compares hook order with PyTorch")
    rng = np.random.default_rng(seed)
    program = [
        (
            str(rng.choice(["mul", "add", "sin", "twice"])),
            int(rng.integers(9)),
            int(rng.integers(9)),
        )
        for _ in range(5)
    ]

    def order(lib: Any) -> list[str]:
        seen: list[str] = []
        values = [lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True) for _ in range(3)]
        for t in values:
            t.register_hook(lambda g: seen.append("leaf"))
        for k, (op, i, j) in enumerate(program):
            x, y = values[i % len(values)], values[j % len(values)]
            v = {"mul": x * y, "add": x + y, "sin": lib.sin(x), "twice": x * 2}[op]
            v.register_hook(lambda g, k=k: seen.append(f"node {k}"))
            values.append(v)
        sum(v.sum() for v in values[3:]).backward()
        return seen

    assert order(tt) == order(torch)
