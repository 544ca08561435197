"""Note [Add with alpha fast path] (``backends/common/elementwise.py``): ``x.add(y,
alpha=a)`` and ``x.sub(y, alpha=a)`` of two float32/float64 arrays of one shape take the
general path's own steps (a new array holding ``x``, BLAS axpy of ``y`` into it) without
its dtype resolution: the same outcome as the general path on both sides of the guard
(every dtype pair, Python bool/int/float/complex alphas with 0, -0.0, 1, NaN and
infinities, equal and broadcast shapes, transposed, sliced and expanded operands,
0-d and empty tensors), and PyTorch's values, and torch.optim.SGD's weight decay
spelled as it spells it."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
from tests.backends.fastpath_support import (
    ALL_DTYPES,
    numbers,
    same_both_ways,
    tensors,
    to_torch,
    torch,
)

FEW = settings(deadline=None, max_examples=100)
ALPHAS = numbers("bifc") | st.sampled_from([-0.01, 1e-4, -1, 1.0, 0, -0.0, 0.0, 2])
SHAPES = [(3,), (2, 3), (0,), (), (1, 3), (2, 1), (300,)]


@FEW
@given(
    x=tensors(dtypes=ALL_DTYPES, shapes=SHAPES),
    y=tensors(dtypes=ALL_DTYPES, shapes=SHAPES),
    op=st.sampled_from(["add", "sub"]),
    alpha=ALPHAS,
)
def test_both_sides_of_the_guard(x, y, op, alpha):
    out = same_both_ways(lambda a, b: getattr(a, op)(b, alpha=alpha), x, y)
    guarded = x.dtype in (tt.float32, tt.float64) and y.dtype is x.dtype
    if guarded and x.shape == y.shape and out.error is None:
        assert out.value.is_contiguous()  # a new row-major array, as the general path's


@FEW
@given(
    x=tensors(dtypes=(tt.float32, tt.float64), shapes=[(3,), (2, 3), (300,)]),
    data=st.data(),
    op=st.sampled_from(["add", "sub"]),
    alpha=st.sampled_from([-0.01, 1e-4, 3, -2]) | st.floats(-10, 10, width=32),
)
def test_the_guarded_side_matches_torch(x, data, op, alpha):
    """One dtype and one shape (the guarded side), with transposed and sliced operands:
    PyTorch's fused multiply-add rounds once, as axpy does, so bit for bit where the
    values stay far from overflow."""
    y = data.draw(tensors(dtypes=(x.dtype,), shapes=[tuple(x.shape)]))
    call = lambda a, b: getattr(a, op)(b, alpha=alpha)  # noqa: E731
    ours = same_both_ways(call, x, y)
    if torch is None or ours.error is not None or alpha == 0:
        return
    xs, ys = x.numpy(), y.numpy()
    if not (np.isfinite(xs).all() and np.isfinite(ys).all()):
        return
    if (np.abs(xs) > 1e3).any() or (np.abs(ys) > 1e3).any():
        return
    theirs = call(to_torch(x), to_torch(y)).numpy()
    assert ours.value.numpy().tobytes() == theirs.tobytes()


def test_weight_decay_as_torch_optim_spells_it():
    """SGD's ``d_p = d_p.add(p, alpha=weight_decay)`` under no_grad on a parameter that
    requires grad: a new tensor (neither operand changed), no graph, PyTorch's values."""
    rng = np.random.default_rng(3)
    g_np, p_np = (rng.standard_normal((64, 64)).astype(np.float32) for _ in range(2))
    g, p = tt.tensor(g_np), tt.tensor(p_np).requires_grad_()
    with tt.no_grad():
        d = g.add(p, alpha=1e-4)
    assert d is not g and not d.requires_grad and d.grad_fn is None
    assert g.numpy().tobytes() == g_np.tobytes() and p.detach().numpy().tobytes() == p_np.tobytes()
    want = g_np + np.float32(1e-4) * p_np  # within rounding of the fused value
    np.testing.assert_allclose(d.numpy(), want, rtol=1e-6)
    if torch is not None:
        with torch.no_grad():
            theirs = torch.from_numpy(g_np).add(torch.from_numpy(p_np), alpha=1e-4)
        assert d.numpy().tobytes() == theirs.numpy().tobytes()


def test_recorded_add_with_alpha_keeps_its_gradient():
    """Under grad mode the call records AddBackward0 with alpha: the gradient of ``y`` is
    ``alpha * g`` whichever path computed the value."""
    x = tt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = tt.tensor([0.5, -1.0, 4.0], requires_grad=True)
    out = x.sub(y, alpha=0.25)
    assert out.grad_fn.name() == "SubBackward0"
    out.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]
    assert y.grad.tolist() == [-0.25, -0.25, -0.25]
