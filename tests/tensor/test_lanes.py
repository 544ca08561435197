"""Note [Backward lanes]: each lane against its formula, on both sides of every guard.

The node-level test records one call, then runs the lane and the formula on the same
saved call and incoming gradient (grad mode off, as in backward): a lane either
declines (None) or returns exactly what the formula returns: the same dtypes, shapes
and strides, the same values bit for bit, the incoming gradient itself where the
formula returns it, views where the formula returns views (of a fresh product).  The
inputs cover the guards' both sides: float32/float64 and the dtypes lanes leave alone
(half precision, complex), matrices and other ranks, transposed operands, every subset
of inputs requiring grad, biases that broadcast and ones that do not.  The end-to-end
test trains the step users write with and without lanes and compares the ``.grad``s
(values, layouts, and whether AccumulateGrad stole them), and the guard tests check
that create_graph, autocast, the fast-path switch and keyword calls take the formula.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
from backends.common import fastpaths
from tensor.autograd import OpNode, _lanes
from tensor.optable import shape as _shape

_DTYPES = ["float32", "float64", "float16", "bfloat16", "complex64"]


def _tensor(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, layout: str) -> Any:
    """A tensor of ``shape``: contiguous, the transpose of a contiguous matrix, or a
    slice with a step (neither)."""
    data = rng.standard_normal(shape) * 2
    if layout == "T" and len(shape) == 2:
        t = tt.tensor(np.ascontiguousarray(data.T), dtype=getattr(tt, dtype)).t()
    elif layout == "step" and len(shape) >= 1:
        wide = rng.standard_normal((*shape[:-1], shape[-1] * 2))
        t = tt.tensor(wide, dtype=getattr(tt, dtype))[..., ::2]
    else:
        t = tt.tensor(data, dtype=getattr(tt, dtype))
    return t


def _leafy(t: Any, wanted: bool) -> Any:
    """``t`` requiring grad when ``wanted``: a leaf, or the same view of a leaf base."""
    if not wanted:
        return t
    if t._base is None:
        return t.detach().requires_grad_()
    base = t._base.detach().requires_grad_()
    if base.shape == t.shape[::-1] and t.ndim == 2:  # layout "T"
        return base.t()
    return base[..., ::2]  # layout "step"


def _same(lane: Any, formula: Any, g: Any, where: str) -> None:
    assert (lane is None) == (formula is None), where
    if formula is None:
        return
    assert (formula is g) == (lane is g), f"{where}: the incoming gradient itself or not"
    assert type(lane) is type(formula), where
    assert lane.dtype is formula.dtype, where
    assert lane.shape == formula.shape, where
    assert lane.stride() == formula.stride(), f"{where}: {lane.stride()} != {formula.stride()}"
    assert (lane._base is None) == (formula._base is None), f"{where}: view or not"
    a, b = lane._array, formula._array
    assert a.tobytes() == b.tobytes(), f"{where}: values differ"
    assert not lane.requires_grad and lane.grad_fn is None, where
    if formula._base is not None and formula._base is not g:
        base_l, base_f = lane._base, formula._base
        assert base_l.stride() == base_f.stride(), where
        assert base_l._array.tobytes() == base_f._array.tobytes(), where
        assert lane._version_counter is base_l._version_counter, where


def _check_node(out: Any, g: Any, inputs: tuple[Any, ...] = ()) -> bool:
    """Run the lane and the formula of ``out``'s node; True when the lane took the call.
    ``inputs``: the call's tensor arguments in order; where one does not require grad the
    lane may give None (the engine passes nothing there) for the formula's gradient."""
    node = out.grad_fn
    assert isinstance(node, OpNode)
    lane = getattr(node.formula, "lane", None)
    assert lane is not None, node.name()
    with tt.no_grad():
        args = node._args
        assert args is not None  # a positional call
        got = lane(g, args, node.out)
        want = node.formula(g, node.bound, node.out)
    if got is None:
        return False
    assert len(got) == len(want), node.name()
    for i, (a, b) in enumerate(zip(got, want, strict=True)):
        if a is None and b is not None and i < len(inputs):
            assert not inputs[i].requires_grad, f"{node.name()} input {i}: no gradient"
            continue
        _same(a, b, g, f"{node.name()} input {i}")
    return True


_SHAPES = st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4))


@settings(max_examples=150, deadline=None)
@given(
    dims=_SHAPES,
    dtype=st.sampled_from(_DTYPES),
    layouts=st.tuples(*[st.sampled_from(["C", "T", "step"])] * 3),
    wants=st.tuples(st.booleans(), st.booleans(), st.booleans()).filter(any),
    op=st.sampled_from(["mm", "matmul", "addmm", "linear"]),
    bias=st.sampled_from(["row", "full", "scalar", "one", "col"]),
    seed=st.integers(0, 2**16),
)
def test_products(
    dims: tuple[int, int, int],
    dtype: str,
    layouts: tuple[str, str, str],
    wants: tuple[bool, bool, bool],
    op: str,
    bias: str,
    seed: int,
) -> None:
    m, k, n = dims
    rng = np.random.default_rng(seed)
    x = _leafy(_tensor(rng, (m, k), dtype, layouts[0]), wants[0])
    w = _leafy(_tensor(rng, (k, n), dtype, layouts[1]), wants[1])
    bshape = {"row": (n,), "full": (m, n), "scalar": (), "one": (1,), "col": (m, 1)}[bias]
    b = _leafy(_tensor(rng, bshape, dtype, layouts[2]), wants[2])
    if not (x.requires_grad or w.requires_grad or (op in ("addmm", "linear") and b.requires_grad)):
        return
    if op == "mm":
        out = tt.mm(x, w)
    elif op == "matmul":
        out = x @ w
    elif op == "addmm":
        out = tt.addmm(b, x, w)
    else:  # F.linear: weight [out, in], addmm(b, x, w.t())
        wt = _leafy(_tensor(rng, (n, k), dtype, layouts[1]), wants[1])
        out = tt.nn.functional.linear(x, wt, b)
    g = _tensor(rng, tuple(out.shape), dtype, "C")
    took = _check_node(
        out, g, (b, x, w) if op == "addmm" else (x, w) if op in ("mm", "matmul") else ()
    )
    plain = dtype in ("float32", "float64")
    if plain and op in ("mm", "matmul") and layouts[2] == "C":
        assert took, "a float product of matrices takes its lane"


@settings(max_examples=150, deadline=None)
@given(
    shapes=st.sampled_from(
        [
            ((3, 4), (3, 4)),
            ((3, 4), (4,)),
            ((4,), (3, 4)),
            ((3, 4), (1, 4)),
            ((3, 1), (3, 4)),
            ((2, 3, 4), (4,)),
            ((2, 3, 4), (3, 4)),
            ((), (3,)),
            ((5,), ()),
        ]
    ),  # fmt: skip
    dtype=st.sampled_from(_DTYPES),
    wants=st.tuples(st.booleans(), st.booleans()).filter(any),
    layout=st.sampled_from(["C", "T", "step"]),
    op=st.sampled_from(["add", "sub", "mul"]),
    seed=st.integers(0, 2**16),
)
def test_binary(
    shapes: tuple[tuple[int, ...], tuple[int, ...]],
    dtype: str,
    wants: tuple[bool, bool],
    layout: str,
    op: str,
    seed: int,
) -> None:
    rng = np.random.default_rng(seed)
    x = _leafy(_tensor(rng, shapes[0], dtype, layout), wants[0])
    y = _leafy(_tensor(rng, shapes[1], dtype, "C"), wants[1])
    out = {"add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y}[op]()
    g = _tensor(rng, tuple(out.shape), dtype, layout)
    took = _check_node(out, g, (x, y))
    if dtype in ("float32", "float64") and shapes in (((3, 4), (3, 4)), ((3, 4), (4,))):
        assert took


@settings(max_examples=40, deadline=None)
@given(
    shape=st.sampled_from([(3, 4), (5,), ()]),
    dtype=st.sampled_from(_DTYPES),
    layout=st.sampled_from(["C", "T", "step"]),
    seed=st.integers(0, 2**16),
)
def test_neg(shape: tuple[int, ...], dtype: str, layout: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = _leafy(_tensor(rng, shape, dtype, "C"), True)
    out = -x
    g = _tensor(rng, tuple(out.shape), dtype, layout)
    took = _check_node(out, g, (x,))
    assert took == (dtype in ("float32", "float64"))


@settings(max_examples=100, deadline=None)
@given(
    shape=st.sampled_from([(3, 4), (5,), (), (2, 3, 4), (1, 1)]),
    dtype=st.sampled_from(_DTYPES[:4]),
    layouts=st.tuples(st.sampled_from(["C", "T", "step"]), st.sampled_from(["C", "T", "step"])),
    special=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_relu(
    shape: tuple[int, ...], dtype: str, layouts: tuple[str, str], special: bool, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    x = _leafy(_tensor(rng, shape, dtype, layouts[0]), True)
    if special and x.numel():  # zeros, -0.0, NaN and infinities in the input and gradient
        with tt.no_grad():
            flat = x.reshape(-1)
            flat[0] = 0.0
            if x.numel() > 1:
                flat[-1] = float("nan")
    out = tt.relu(x)
    g = _tensor(rng, tuple(out.shape), dtype, layouts[1])
    if special and g.numel():
        with tt.no_grad():
            g.reshape(-1)[0] = float("inf")
    took = _check_node(out, g)
    if dtype in ("float32", "float64") and layouts == ("C", "C"):
        assert took


@settings(max_examples=100, deadline=None)
@given(
    shape=st.sampled_from([(3, 4), (5,), (), (2, 3, 4), (1, 1)]),
    dtype=st.sampled_from(_DTYPES[:4]),
    layouts=st.tuples(st.sampled_from(["C", "T", "step"]), st.sampled_from(["C", "T", "step"])),
    special=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_gelu(
    shape: tuple[int, ...], dtype: str, layouts: tuple[str, str], special: bool, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    x = _leafy(_tensor(rng, shape, dtype, layouts[0]), True)
    if special and x.numel():  # zeros, -0.0, NaN, infinities, large and tiny values
        with tt.no_grad():
            flat = x.reshape(-1)
            values = [-0.0, float("nan"), float("inf"), -float("inf"), -40.0, 1e-40, 0.0]
            for i in range(min(x.numel(), len(values))):
                flat[i] = values[i]
    out = tt.nn.functional.gelu(x)
    g = _tensor(rng, tuple(out.shape), dtype, layouts[1])
    if special and g.numel():
        with tt.no_grad():
            g.reshape(-1)[-1] = float("inf")
    took = _check_node(out, g)
    assert took == (dtype in ("float32", "float64") and len(shape) > 0)


@settings(max_examples=150, deadline=None)
@given(
    shape=st.sampled_from([(3, 4), (5,), (), (2, 3, 4), (1, 1), (0, 3), (4, 1)]),
    dtype=st.sampled_from(_DTYPES),
    layout=st.sampled_from(["C", "T", "step"]),
    op=st.sampled_from(["sum", "mean"]),
    dim=st.sampled_from([None, 0, -1, 1, [0, -1], [], (1,), [5], "x", 2.0]),
    keepdim=st.sampled_from([None, False, True, 1]),
    seed=st.integers(0, 2**16),
)
def test_reductions(
    shape: tuple[int, ...], dtype: str, layout: str, op: str, dim: Any, keepdim: Any, seed: int
) -> None:
    """sum and mean, positional calls over every dim spelling (the lane declines what
    it does not take, and a dim the call refuses never reaches it), both keepdims."""
    rng = np.random.default_rng(seed)
    x = _leafy(_tensor(rng, shape, dtype, layout), True)
    fn = getattr(tt, op)
    args: tuple[Any, ...] = () if dim is None and keepdim is None else (dim,)
    if keepdim is not None:
        args += (keepdim,)
    try:
        out = fn(x, *args)
    except (TypeError, IndexError, RuntimeError, ValueError):
        return  # the call itself refuses the arguments
    if not out.requires_grad:
        return  # mean of integers and the like
    g = _tensor(rng, tuple(out.shape), dtype, "C")
    took = _check_node(out, g)
    # Taken: a float input with elements whose reduced dims are not all of size 1 (those
    # the formula answers with a view of ``g``, which the lane leaves to it).
    if dim is None or dim == []:
        reduced = list(range(len(shape)))
    elif type(dim) is int and -len(shape) <= dim < len(shape):
        reduced = [dim]
    else:
        reduced = []
    floats = dtype in ("float32", "float64") and 0 not in shape and keepdim in (None, False)
    if floats and any(shape[d] > 1 for d in reduced):
        assert took


@settings(max_examples=100, deadline=None)
@given(
    shape=st.sampled_from([(3, 4), (5,), (), (2, 3, 4)]),
    dtype=st.sampled_from(_DTYPES[:4]),
    exponent=st.sampled_from([2, 3, 2.0, 1, 0, -1, 0.5]),
    layouts=st.tuples(st.sampled_from(["C", "T", "step"]), st.sampled_from(["C", "T", "step"])),
    special=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_pow(
    shape: tuple[int, ...],
    dtype: str,
    exponent: Any,
    layouts: tuple[str, str],
    special: bool,
    seed: int,
) -> None:
    rng = np.random.default_rng(seed)
    x = _leafy(_tensor(rng, shape, dtype, layouts[0]), True)
    if special and x.numel():
        with tt.no_grad():
            flat = x.reshape(-1)
            for i, v in enumerate([-0.0, float("nan"), float("inf"), 3e38, -1e-40]):
                if i < x.numel():
                    flat[i] = v
    out = x**exponent
    g = _tensor(rng, tuple(out.shape), dtype, layouts[1])
    took = _check_node(out, g, (x,))
    wanted = dtype in ("float32", "float64") and len(shape) > 0 and exponent == 2
    assert took == (wanted and type(exponent) is int)


@settings(max_examples=100, deadline=None)
@given(
    shape=st.sampled_from([(3, 4), (5,), (), (2, 3, 4)]),
    dtype=st.sampled_from(_DTYPES),
    layouts=st.tuples(st.sampled_from(["C", "T", "step"]), st.sampled_from(["C", "T", "step"])),
    special=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_abs(
    shape: tuple[int, ...], dtype: str, layouts: tuple[str, str], special: bool, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    x = _leafy(_tensor(rng, shape, dtype, layouts[0]), True)
    if special and x.numel():  # sign's zeros and NaN: 0 there
        with tt.no_grad():
            flat = x.reshape(-1)
            for i, v in enumerate([-0.0, float("nan"), 0.0, -float("inf")]):
                if i < x.numel():
                    flat[i] = v
    out = x.abs()
    g = _tensor(rng, tuple(out.shape), out.dtype.name, layouts[1])
    took = _check_node(out, g)
    assert took == (dtype in ("float32", "float64") and len(shape) > 0)


@settings(max_examples=150, deadline=None)
@given(
    op=st.sampled_from(["tanh", "sigmoid", "exp"]),
    shape=st.sampled_from([(3, 4), (5,), (), (2, 3, 4), (1, 1)]),
    dtype=st.sampled_from(_DTYPES),
    layouts=st.tuples(st.sampled_from(["C", "T", "step"]), st.sampled_from(["C", "T", "step"])),
    special=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_unary_of_the_result(
    op: str, shape: tuple[int, ...], dtype: str, layouts: tuple[str, str], special: bool, seed: int
) -> None:
    """The formulas that read the output (``g * (1 - out * out)``, ``g * out * (1 - out)``,
    ``g * out``), with saturated, infinite and NaN outputs among the values."""
    rng = np.random.default_rng(seed)
    x = _leafy(_tensor(rng, shape, dtype, layouts[0]), True)
    if special and x.numel():
        with tt.no_grad():
            flat = x.reshape(-1)
            for i, v in enumerate([-0.0, float("nan"), 100.0, -100.0, float("inf"), 1e-30]):
                if i < x.numel():
                    flat[i] = v
    out = getattr(tt, op)(x)
    g = _tensor(rng, tuple(out.shape), dtype, layouts[1])
    took = _check_node(out, g)
    assert took == (dtype in ("float32", "float64") and len(shape) > 0)


@settings(max_examples=100, deadline=None)
@given(
    shape=st.sampled_from([(3, 4), (5,), (), (2, 3, 4)]),
    dtype=st.sampled_from(_DTYPES),
    layouts=st.tuples(st.sampled_from(["C", "T", "step"]), st.sampled_from(["C", "T", "step"])),
    special=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_silu(
    shape: tuple[int, ...], dtype: str, layouts: tuple[str, str], special: bool, seed: int
) -> None:
    """``g * sigmoid(x) * (1 + x * (1 - sigmoid(x)))`` with saturated, infinite and NaN
    inputs among the values (``inf * 0``: NaN in both)."""
    rng = np.random.default_rng(seed)
    x = _leafy(_tensor(rng, shape, dtype, layouts[0]), True)
    if special and x.numel():
        with tt.no_grad():
            flat = x.reshape(-1)
            for i, v in enumerate([-0.0, float("nan"), 100.0, -100.0, float("inf"), -1e-30]):
                if i < x.numel():
                    flat[i] = v
    out = tt.nn.functional.silu(x)
    g = _tensor(rng, tuple(out.shape), dtype, layouts[1])
    took = _check_node(out, g, (x,))
    assert took == (dtype in ("float32", "float64") and len(shape) > 0)
    # softplus: ``where(x * beta > threshold, g, g * sigmoid(x * beta))`` (real dtypes)
    for params in [] if dtype == "complex64" else [(), (2,), (0.5, 1.5), (1, 20), (-1.0, 0)]:
        out = tt.nn.functional.softplus(x, *params)
        took = _check_node(out, g, (x,))
        assert took == (dtype in ("float32", "float64") and len(shape) > 0)


def test_gelu_tanh_and_keyword_calls_take_the_formula(monkeypatch: pytest.MonkeyPatch) -> None:
    """``approximate`` is keyword-only: a call that passes it is recorded bound, and the
    lane (the exact case) is not tried; the tanh case's gradient is the formula's."""
    x = tt.tensor([[-1.5, 0.25], [2.0, -0.0]], requires_grad=True)
    for approximate in ("tanh", "none"):
        out = tt.nn.functional.gelu(x, approximate=approximate)
        assert out.grad_fn._args is None
        out.sum().backward()
        with fastpaths.disabled():
            y = x.detach().requires_grad_()
            tt.nn.functional.gelu(y, approximate=approximate).sum().backward()
        assert x.grad.numpy().tobytes() == y.grad.numpy().tobytes()
        x.grad = None


@settings(max_examples=60, deadline=None)
@given(
    dims=st.sampled_from([(0, 1), (1, 0), (-1, -2), (-2, 1), (0, 0), (1, 1)]),
    shape=st.sampled_from([(3, 4), (2, 3, 4), (1, 5), (4,)]),
    dtype=st.sampled_from(_DTYPES),
    layout=st.sampled_from(["C", "T", "step"]),
    spelling=st.sampled_from(["transpose", "t"]),
    seed=st.integers(0, 2**16),
)
def test_transpose(
    dims: tuple[int, int],
    shape: tuple[int, ...],
    dtype: str,
    layout: str,
    spelling: str,
    seed: int,
) -> None:
    rng = np.random.default_rng(seed)
    x = _leafy(_tensor(rng, shape, dtype, "C"), True)
    if spelling == "t":  # its own operator (TBackward0), as in PyTorch
        if len(shape) > 2:
            return
        out = x.t()
        assert out.grad_fn.name() == "TBackward0"
    else:
        if len(shape) < 2:
            return
        out = x.transpose(*dims)
    if out.grad_fn is None or type(out.grad_fn) is not OpNode:
        return
    g = _tensor(rng, tuple(out.shape), dtype, layout)
    _check_node(out, g)


@settings(max_examples=150, deadline=None)
@given(
    batch=st.integers(1, 5),
    classes=st.integers(1, 5),
    dtype=st.sampled_from(_DTYPES[:4]),
    reduction=st.sampled_from(["mean", "sum", "none"]),
    ignore=st.sampled_from([-100, 0]),
    weighted=st.booleans(),
    smoothing=st.sampled_from([0.0, 0.1, 1.0, -0.2]),
    ignored_row=st.booleans(),
    probabilities=st.sampled_from([None, "leaf", "requires grad"]),
    seed=st.integers(0, 2**16),
)
def test_cross_entropy(
    batch: int,
    classes: int,
    dtype: str,
    reduction: str,
    ignore: int,
    weighted: bool,
    smoothing: float,
    ignored_row: bool,
    probabilities: str | None,
    seed: int,
) -> None:
    # ``ignored_row``: the first target is the ignore_index, so the lane's arithmetic
    # (every target >= 0 under a negative ignore_index: no row ignored) must not run.
    # ``probabilities``: class probabilities as the target, requiring grad or not (then
    # the formula computes the target's gradient too, and the lane must decline).  A
    # negative label_smoothing smooths nothing (PyTorch's rule), in the lane as in the
    # formula.
    rng = np.random.default_rng(seed)
    x = _leafy(_tensor(rng, (batch, classes), dtype, "C"), True)
    if probabilities is None:
        targets = rng.integers(0, classes, batch)
        if ignored_row:
            targets[0] = ignore
        y = tt.tensor(targets)
    else:  # an ignore_index >= 0 is refused with probabilities, as in PyTorch
        y = tt.tensor(rng.random((batch, classes)), dtype=getattr(tt, dtype))
        y.requires_grad_(probabilities == "requires grad")
        ignore = -100
    weight = _tensor(rng, (classes,), dtype, "C").abs() if weighted else None
    out = tt.nn.functional.cross_entropy(
        x, y, weight=weight, reduction=reduction, ignore_index=ignore, label_smoothing=smoothing
    )
    g = _tensor(rng, tuple(out.shape), dtype, "C")
    took = _check_node(out, g, (x, y))
    if dtype in ("float32", "float64") and not weighted and probabilities != "requires grad":
        assert took
    if probabilities == "requires grad":
        assert not took


@pytest.mark.parametrize("smoothing", [-0.2, float("nan"), 0.0, 0.1, 1.0])
@pytest.mark.parametrize("target", ["classes", "probabilities"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cross_entropy_lane_smoothing_rule(smoothing: float, target: str, dtype: str) -> None:
    """Both sides of the lane's smoothing rule, every case taken by the lane: 0, a negative
    value and NaN smooth nothing (PyTorch's rule: the gradient is the unsmoothed one), a
    value in (0, 1] smooths; the lane gives the formula's bits."""
    rng = np.random.default_rng(3)
    x = _leafy(_tensor(rng, (5, 4), dtype, "C"), True)
    if target == "classes":
        y = tt.tensor(rng.integers(0, 4, 5))
    else:
        y = tt.tensor(rng.random((5, 4)), dtype=getattr(tt, dtype))
    F = tt.nn.functional
    g = _tensor(rng, (), dtype, "C")
    assert _check_node(F.cross_entropy(x, y, label_smoothing=smoothing), g, (x, y))
    (got,) = tt.autograd.grad(F.cross_entropy(x, y, label_smoothing=smoothing), x, g)
    (plain,) = tt.autograd.grad(F.cross_entropy(x, y), x, g)
    assert (got._array.tobytes() == plain._array.tobytes()) == (not smoothing > 0)


@settings(max_examples=200, deadline=None)
@given(
    shape=st.lists(st.integers(0, 5), min_size=1, max_size=3),
    dtype=st.sampled_from(_DTYPES),
    layout=st.sampled_from(["C", "T", "step"]),
    g_layout=st.sampled_from(["C", "T"]),
    dim=st.integers(-3, 2),
    start=st.sampled_from([None, 0, 1, -2, -9, 7]),
    end=st.sampled_from([None, 0, 3, -1, 9]),
    step=st.sampled_from([1, 1, 2, 3]),
    spelling=st.sampled_from(["slice", "narrow", "select", "index"]),
    seed=st.integers(0, 2**16),
)
def test_slice_and_select(
    shape: list[int],
    dtype: str,
    layout: str,
    g_layout: str,
    dim: int,
    start: Any,
    end: Any,
    step: int,
    spelling: str,
    seed: int,
) -> None:
    """``x[:, a:b:s]``, ``x.narrow``, ``x[i]`` and ``x.select``: zeros of the input's
    shape with ``g`` at the positions read, as the formula's scatter or where gives them;
    a slice that keeps every element gives ``g`` itself (the formula's), an empty one
    and an empty dim take the formula."""
    rng = np.random.default_rng(seed)
    x = _leafy(_tensor(rng, tuple(shape), dtype, layout), True)
    if not -x.ndim <= dim < x.ndim:
        return
    d = dim % x.ndim
    n = x.shape[d]
    lead = (slice(None),) * d
    if spelling == "slice":
        out = x[(*lead, slice(start, end, step))]
    elif spelling == "narrow":
        lo = 0 if start is None else start % (n + 1)
        out = x.narrow(dim, lo, (n - lo) // 2)
    elif not n:
        return
    elif spelling == "select":
        out = x.select(dim, (start or 0) % n - (n if seed % 2 else 0))
    else:
        out = x[(*lead, (end or 0) % n)]
    if getattr(out.grad_fn, "formula", None) not in (_shape._slice, _shape._select):
        return  # ``x[:]`` is an alias (a view node), no slice
    if out.ndim == 2 and g_layout == "T":
        g = tt.tensor(rng.standard_normal(out.shape[::-1]), dtype=getattr(tt, dtype)).t()
    else:
        g = _tensor(rng, tuple(out.shape), dtype, "C")
    took = _check_node(out, g, (x,))
    if dtype in ("float32", "float64") and (
        spelling in ("select", "index") or (out.numel() and out.shape != x.shape)
    ):
        assert took


@settings(max_examples=150, deadline=None)
@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
    dtype=st.sampled_from(_DTYPES),
    layout=st.sampled_from(["C", "T", "step"]),
    g_layout=st.sampled_from(["C", "step"]),
    dim=st.integers(-3, 2),
    log=st.booleans(),
    method=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_softmax(
    shape: list[int], dtype: str, layout: str, g_layout: str, dim: int, log: bool,
    method: bool, seed: int,
) -> None:  # fmt: skip
    if dtype == "complex64":  # softmax takes real floating dtypes only
        return
    rng = np.random.default_rng(seed)
    x = _leafy(_tensor(rng, tuple(shape), dtype, layout), True)
    if not -x.ndim <= dim < x.ndim:
        return
    F = tt.nn.functional
    if method:
        out = x.log_softmax(dim) if log else x.softmax(dim)
    else:
        out = F.log_softmax(x, dim) if log else F.softmax(x, dim)
    g = _tensor(rng, tuple(out.shape), dtype, g_layout)
    took = _check_node(out, g, (x,))
    if dtype in ("float32", "float64"):
        assert took


@settings(max_examples=150, deadline=None)
@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
    dtype=st.sampled_from(_DTYPES[:4]),
    layout=st.sampled_from(["C", "T", "step"]),
    g_layout=st.sampled_from(["C", "step"]),
    dim=st.integers(-3, 2),
    keepdim=st.sampled_from([None, False, True]),
    op=st.sampled_from(["max", "min"]),
    special=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_max_and_min_along_a_dim(
    shape: list[int], dtype: str, layout: str, g_layout: str, dim: int, keepdim: Any,
    op: str, special: bool, seed: int,
) -> None:  # fmt: skip
    """A node of two outputs (values, indices): the lane takes the list of both
    gradients (None for the indices) and gives the formula's result; through the engine,
    ``x.grad`` equals the formula's with the fast paths off."""
    rng = np.random.default_rng(seed)
    x = _leafy(_tensor(rng, tuple(shape), dtype, layout), True)
    if not -x.ndim <= dim < x.ndim:
        return
    if special:  # ties, NaN and infinities among the values
        with tt.no_grad():
            flat = x.reshape(-1)
            for i, v in enumerate([float("nan"), 1.0, 1.0, float("inf")]):
                if i < x.numel():
                    flat[i] = v
    call = (
        (lambda t: getattr(t, op)(dim))
        if keepdim is None
        else (lambda t: getattr(t, op)(dim, keepdim))
    )
    values = call(x)[0]
    g = _tensor(rng, tuple(values.shape), dtype, g_layout)
    _check_first_output(values, g, dtype in ("float32", "float64"), f"{op}.dim")
    grads = []
    for switch in (_nothing, fastpaths.disabled):
        with switch():
            leaf = x.detach().requires_grad_()
            call(leaf)[0].backward(g)
            grads.append(leaf.grad._array.tobytes())
    assert grads[0] == grads[1]


@settings(max_examples=120, deadline=None)
@given(
    k=st.sampled_from([1, 2, 3, (2, 3)]),
    stride=st.sampled_from([None, 1, 2]),
    padding=st.sampled_from([0, 1]),
    batched=st.booleans(),
    dtype=st.sampled_from(_DTYPES[:4]),
    layout=st.sampled_from(["C", "step"]),
    g_layout=st.sampled_from(["C", "step"]),
    ties=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_max_pool2d(
    k: Any, stride: Any, padding: int, batched: bool, dtype: str, layout: str,
    g_layout: str, ties: bool, seed: int,
) -> None:  # fmt: skip
    """The pool's node has two outputs (values, indices); overlapping windows (stride 1)
    pick one element several times, whose gradients add in the formula's order."""
    rng = np.random.default_rng(seed)
    shape = (2, 3, 6, 7) if batched else (3, 6, 7)
    x = _leafy(_tensor(rng, shape, dtype, layout), True)
    if ties:
        with tt.no_grad():
            x.copy_(x.round())
    kh = k if isinstance(k, int) else k[0]
    if padding * 2 > kh:
        return
    out = tt.nn.functional.max_pool2d(x, k, stride, padding)
    g = _tensor(rng, tuple(out.shape), dtype, g_layout)
    _check_first_output(out, g, dtype in ("float32", "float64"), "max_pool2d")


def _check_first_output(out: Any, g: Any, taken: bool, where: str) -> None:
    """The lane of ``out``'s node of two outputs (values, indices: the lane is handed
    both gradients, None for the indices) against its formula; ``taken``: it must not
    decline."""
    node = out.grad_fn
    with tt.no_grad():
        got = node.formula.lane([g, None], node._args, node.out)
        want = node.formula((g, None), node.bound, node.out)
    assert got is not None or not taken, where
    if got is not None:
        _same(got[0], want[0], g, where)


@settings(max_examples=150, deadline=None)
@given(
    rows=st.integers(1, 6),
    dim=st.integers(1, 4),
    index_shape=st.sampled_from([(5,), (2, 3), (4, 1), (0,)]),
    padding=st.sampled_from([None, 0, 2, -1]),
    scale=st.sampled_from([False, False, True]),
    dtype=st.sampled_from(_DTYPES[:4]),
    g_layout=st.sampled_from(["C", "step"]),
    seed=st.integers(0, 2**16),
)
def test_embedding(
    rows: int, dim: int, index_shape: tuple[int, ...], padding: Any, scale: bool, dtype: str,
    g_layout: str, seed: int,
) -> None:  # fmt: skip
    """Repeated indices add their rows in order; the padding row gets none (the formula
    adds zeroed rows there); scale_grad_by_freq takes the formula."""
    rng = np.random.default_rng(seed)
    w = _leafy(_tensor(rng, (rows, dim), dtype, "C"), True)
    idx = tt.tensor(rng.integers(0, rows, index_shape))
    if padding is not None and not -rows <= padding < rows:
        return
    out = tt.nn.functional.embedding(idx, w, padding_idx=padding, scale_grad_by_freq=scale)
    g = _tensor(rng, tuple(out.shape), dtype, g_layout)
    took = _check_node(out, g, (w,))
    assert took == (dtype in ("float32", "float64") and not scale)


class _nothing:  # noqa: N801 (a context manager, named as one)
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


# -- end to end ---------------------------------------------------------------------------------
def _step(forward: str, lanes: bool) -> list[tuple[bytes, tuple[int, ...], bool, bool]]:
    """Two training steps of the benchmark's MLP; each parameter's .grad: bytes, strides,
    whether it is the node's result itself (stolen: no copy), whether it is a view."""
    rng = np.random.default_rng(0)
    x = tt.tensor(rng.standard_normal((6, 5)), dtype=tt.float32)
    y = tt.tensor(rng.integers(0, 3, 6))
    shapes = [(4, 5), (4,), (3, 4), (3,)] if forward == "F.linear" else [(5, 4), (4,), (4, 3), (3,)]
    params = [
        tt.tensor(rng.standard_normal(s) * 0.1, dtype=tt.float32).requires_grad_() for s in shapes
    ]
    F = tt.nn.functional
    saved = {f: getattr(f, "lane", None) for f in _lanes.LANES}
    if not lanes:
        for f in saved:
            del f.lane
    try:
        result = []
        for _ in range(2):
            w1, b1, w2, b2 = params
            if forward == "F.linear":
                loss = F.cross_entropy(F.linear(tt.relu(F.linear(x, w1, b1)), w2, b2), y)
            else:
                loss = F.cross_entropy(tt.relu(x @ w1 + b1) @ w2 + b2, y)
            loss.backward()
            for p in params:
                g = p.grad
                result.append(
                    (g._array.tobytes(), g.stride(), g._array.base is None, g._base is not None)
                )
            with tt.no_grad():
                for p in params:
                    p.add_(p.grad, alpha=-0.1)
        return result
    finally:
        for f, lane in saved.items():
            if lane is not None:
                f.lane = lane


@pytest.mark.parametrize("forward", ["F.linear", "x @ w + b"])
def test_training_step_same_with_and_without_lanes(forward: str) -> None:
    assert _step(forward, lanes=True) == _step(forward, lanes=False)


# -- the guards in OpNode.apply -----------------------------------------------------------------
def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    for formula, lane in _lanes.LANES.items():

        def counted(g: Any, args: Any, out: Any, lane: Any = lane) -> Any:
            calls.append(lane.__name__)
            return lane(g, args, out)

        monkeypatch.setattr(formula, "lane", counted, raising=False)
    return calls


def _mm_backward(**kw: Any) -> Any:
    x = tt.ones(2, 3, requires_grad=True)
    w = tt.ones(3, 2, requires_grad=kw.get("create_graph", False))
    out = tt.mm(x, w)
    out.sum().backward(**kw)
    return x


def test_lanes_run_in_a_plain_backward(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    _mm_backward()
    assert calls == ["sum_lane", "mm_lane"]


def test_create_graph_takes_the_formula(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    x = _mm_backward(create_graph=True)
    assert calls == []
    assert x.grad.grad_fn is not None  # the formula recorded a graph (x's gradient reads w)


def test_fast_path_switch_takes_the_formula(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    with fastpaths.disabled():
        _mm_backward()
    assert calls == []


def test_non_default_thread_state_takes_the_formula(monkeypatch: pytest.MonkeyPatch) -> None:
    # Backward inside an autocast region: the formula's products are autocast as the
    # dispatcher would route them, so the lane must not run.
    calls = _counting(monkeypatch)
    x = tt.ones(2, 3, requires_grad=True)
    out = tt.mm(x, tt.ones(3, 2))
    with tt.autocast("cpu", dtype=tt.bfloat16):
        out.sum().backward()
    assert calls == []
    assert x.grad.dtype is tt.float32
    # Once autocast was used the key mask stays set (Note [Default key sets]); outside
    # the region this thread's sets are the defaults again and lanes run.
    _mm_backward()
    assert calls == ["sum_lane", "mm_lane"]


def test_keyword_calls_take_the_formula(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    x = tt.ones(2, 3, requires_grad=True)
    out = tt.add(x, tt.ones(2, 3), alpha=2)
    out.sum().backward()
    assert "add_lane" not in calls
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 3)))


def test_cross_entropy_lane_takes_the_kernels_arithmetic(monkeypatch: pytest.MonkeyPatch) -> None:
    # The training step's case (a negative ignore_index, no target equal to it) goes
    # from the lane to the CPU kernel's ``rows_grad`` directly; a target at the
    # ignore_index, or an ignore_index >= 0, goes through the kernel's own call.
    kernel = _lanes._CROSS_ENTROPY_BACKWARD.below(_lanes._CPU_BITS)
    direct: list[str] = []
    rows_grad = kernel.rows_grad

    def counted(*args: Any) -> Any:
        direct.append(args[3])
        return rows_grad(*args)

    monkeypatch.setattr(kernel, "rows_grad", counted)
    F = tt.nn.functional
    x = tt.tensor(np.arange(12.0).reshape(4, 3), dtype=tt.float32, requires_grad=True)
    for targets, ignore, reached in (
        ([0, 2, 1, 1], -100, True),
        ([0, -100, 1, 1], -100, False),
        ([0, 2, 1, 1], 5, False),
    ):
        direct.clear()
        F.cross_entropy(x, tt.tensor(targets), ignore_index=ignore).backward()
        assert direct == (["mean"] if reached else []), (targets, ignore)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(), (1,), (1, 1)])
def test_backward_seed_is_ones_like(shape: tuple[int, ...], dtype: str) -> None:
    # ``out.backward()``'s implicit gradient: ``seed`` makes what the dispatched
    # ``ones_like`` makes, and declines under the fast-path switch.
    out = tt.ones(*shape, dtype=getattr(tt, dtype))
    got, want = _lanes.seed(out), tt.ones_like(out)
    assert got.dtype is want.dtype and got.shape == want.shape
    assert got.stride() == want.stride() and got.device == want.device
    assert got._array.tobytes() == want._array.tobytes()
    assert got._array is not out._array and not got.requires_grad
    # Each seed is its own array (a 0-d one is a copy of a kept one): writing one leaves
    # the next as it was.
    got._array[...] = 7
    again = _lanes.seed(out)
    assert not np.shares_memory(got._array, again._array)
    assert again._array.tobytes() == want._array.tobytes()
    with fastpaths.disabled():
        assert _lanes.seed(out) is None


def test_backward_seed_dispatches_under_a_mode() -> None:
    # Under a Python mode the seed is the dispatched ones_like, as PyTorch's _make_grads
    # calls torch.ones_like: the mode sees it.
    from tensor.modes import LoggingMode

    x = tt.ones(3, requires_grad=True)
    loss = (x * x).sum()
    with LoggingMode() as log:
        loss.backward()
    assert log.lines[0].startswith("core::ones_like(float32[scalar]@cpu)")
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 2.0, np.float32))


# -- Note [Cross-entropy softmax kept for the backward] -----------------------------------------
def _ce_grad(x: np.ndarray, y: np.ndarray, order: str, keep: bool) -> list[bytes]:
    """x's gradients after the backward of ``F.cross_entropy(x, y)`` in the given order;
    ``keep=False`` empties the slot before each backward (the backward computes again)."""
    kept = _lanes._CROSS_ENTROPY_BACKWARD.below(_lanes._CPU_BITS).kept_softmax
    F = tt.nn.functional
    xt = tt.tensor(x, requires_grad=True)
    other = tt.tensor(x[::-1].copy(), requires_grad=True)
    target = tt.tensor(y)
    loss = F.cross_entropy(xt, target)
    if order == "interleaved":  # another forward replaces the slot before the backward
        F.cross_entropy(other, target)
    grads = []
    for _ in range(2 if order == "retain" else 1):
        if not keep:
            kept[0] = None
        loss.backward(retain_graph=order == "retain")
        grads.append(xt.grad._array.tobytes())
    return grads


@settings(max_examples=80, deadline=None)
@given(
    data=st.data(),
    n=st.integers(1, 6),
    c=st.integers(1, 5),
    dtype=st.sampled_from([np.float32, np.float64]),
    order=st.sampled_from(["plain", "interleaved", "retain"]),
)
def test_cross_entropy_backward_from_the_kept_softmax_is_the_recomputed_one(
    data: Any, n: int, c: int, dtype: Any, order: str
) -> None:
    # Both sides of the guard: the backward of the last fast forward's own logits takes
    # the kept pair; another array's (interleaved), a second backward (retain), and rows
    # far below the batch's largest logit (the forward's per-row path keeps nothing)
    # compute again.  Bitwise the same gradients either way.
    value = st.one_of(st.floats(-30, 30), st.sampled_from([-1e4, 0.0, 1e-30]))
    x = np.array(data.draw(st.lists(value, min_size=n * c, max_size=n * c)), dtype).reshape(n, c)
    y = np.array(data.draw(st.lists(st.integers(0, c - 1), min_size=n, max_size=n)), np.int64)
    assert _ce_grad(x, y, order, keep=True) == _ce_grad(x, y, order, keep=False)


def test_the_kept_softmax_is_taken_by_its_own_backward_only() -> None:
    kept = _lanes._CROSS_ENTROPY_BACKWARD.below(_lanes._CPU_BITS).kept_softmax
    F = tt.nn.functional
    x = tt.tensor(np.arange(12.0, dtype=np.float32).reshape(4, 3), requires_grad=True)
    loss = F.cross_entropy(x, tt.tensor([0, 2, 1, 1]))
    assert kept[0] is not None and kept[0][0] is x._array
    loss.backward()
    assert kept[0] is None  # taken: nothing of it outlives the backward
    big = tt.zeros(2, (1 << 16) // 2 + 1)  # more logits than the slot keeps
    F.cross_entropy(big, tt.tensor([0, 1]))
    assert kept[0] is None
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss = F.cross_entropy(x, tt.tensor([0, 2, 1, 1]))
        with tt.no_grad():
            x.mul_(2)
        loss.backward()


# -- Note [Gelu's erf kept for the backward] (backends/cpu/elementwise.py) --------------------
def _erf_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    """The shapes the gelu lane computes erf for itself (not taken from the forward)."""
    calls: list[tuple[int, ...]] = []
    real = _lanes._cpu_erf

    def counted(a: Any) -> Any:
        calls.append(a.shape)
        return real(a)

    monkeypatch.setattr(_lanes, "_cpu_erf", counted)
    return calls


def _formula_grads(*xs: Any) -> list[bytes]:
    """Each input's gelu gradient through the formula (the fast paths off: no lane)."""
    grads = []
    with fastpaths.disabled():
        for x in xs:
            y = x.detach().requires_grad_()
            tt.nn.functional.gelu(y).backward(tt.ones_like(y) * 0.5)
            grads.append(y.grad.numpy().tobytes())
    return grads


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gelu_backward_takes_the_forwards_erf(monkeypatch: pytest.MonkeyPatch, dtype: str) -> None:
    from backends.cpu import elementwise as cpu_elementwise

    calls = _erf_calls(monkeypatch)
    rng = np.random.default_rng(0)
    x = tt.tensor(rng.standard_normal((8, 16)) * 3, dtype=getattr(tt, dtype), requires_grad=True)
    out = tt.nn.functional.gelu(x)
    assert cpu_elementwise._kept_gelu_erf[0][0] is x._array
    out.backward(tt.ones_like(out) * 0.5)
    assert calls == []  # taken from the forward
    assert cpu_elementwise._kept_gelu_erf[0] is None  # and the slot emptied
    assert [x.grad.numpy().tobytes()] == _formula_grads(x)


def test_gelu_backward_of_another_forward_computes_its_erf(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two graphs interleaved: the slot holds the second forward's erf, so the first
    backward computes its own; a retained graph's second backward computes again."""
    calls = _erf_calls(monkeypatch)
    rng = np.random.default_rng(1)
    x1, x2 = (tt.tensor(rng.standard_normal((4, 5)), requires_grad=True) for _ in range(2))
    out1 = tt.nn.functional.gelu(x1)
    out2 = tt.nn.functional.gelu(x2)
    out1.backward(tt.ones_like(out1) * 0.5)
    assert calls == [(4, 5)]
    out2.backward(tt.ones_like(out2) * 0.5, retain_graph=True)
    assert calls == [(4, 5)]  # x2's was kept
    first = x2.grad.numpy().copy()
    x2.grad = None
    out2.backward(tt.ones_like(out2) * 0.5)
    assert calls == [(4, 5), (4, 5)]
    assert x2.grad.numpy().tobytes() == first.tobytes()
    assert [x1.grad.numpy().tobytes(), first.tobytes()] == _formula_grads(x1, x2)


def test_gelu_input_changed_in_place_is_refused() -> None:
    x = tt.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
    h = x * 1
    out = tt.nn.functional.gelu(h)
    with tt.no_grad():
        h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_what_the_gelu_forward_does_not_keep(monkeypatch: pytest.MonkeyPatch) -> None:
    from backends.cpu import elementwise as cpu_elementwise

    cpu_elementwise._kept_gelu_erf[0] = None
    tt.nn.functional.gelu(tt.tensor([0.5, -1.0], dtype=tt.float16))  # a widened copy's erf
    assert cpu_elementwise._kept_gelu_erf[0] is None
    tt.nn.functional.gelu(tt.tensor(0.5))  # 0-d
    assert cpu_elementwise._kept_gelu_erf[0] is None
    monkeypatch.setattr(cpu_elementwise, "_KEPT_GELU_SIZE", 4)
    tt.nn.functional.gelu(tt.ones(5))  # past the size kept
    assert cpu_elementwise._kept_gelu_erf[0] is None
    x = tt.ones(4)
    tt.nn.functional.gelu(x)
    assert cpu_elementwise._kept_gelu_erf[0][0] is x._array


# -- layer_norm: the lane, and Note [Layer norm's statistics kept for the backward] ----------
@settings(max_examples=150, deadline=None)
@given(
    shape=st.sampled_from([(3, 4), (2, 3, 4), (5,), (4, 1), (2, 1, 3)]),
    k=st.sampled_from([1, 2]),
    dtype=st.sampled_from(_DTYPES[:4]),
    layout=st.sampled_from(["C", "T", "step"]),
    affine=st.sampled_from(["both", "weight", "bias", "none"]),
    wants=st.tuples(st.booleans(), st.booleans(), st.booleans()).filter(any),
    eps=st.sampled_from([1e-5, 0.5]),
    kept=st.booleans(),
    special=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_layer_norm(
    shape: tuple[int, ...],
    k: int,
    dtype: str,
    layout: str,
    affine: str,
    wants: tuple[bool, bool, bool],
    eps: float,
    kept: bool,
    special: bool,
    seed: int,
) -> None:
    """The lane against the formula, with the forward's statistics taken from the slot
    or computed again (``kept``), for every subset of inputs requiring grad."""
    from backends.cpu import nn as cpu_nn

    if k > len(shape):
        return
    rng = np.random.default_rng(seed)
    norm = list(shape[len(shape) - k :])
    x = _leafy(_tensor(rng, shape, dtype, layout), wants[0])
    if special and x.numel() > 1:
        with tt.no_grad():
            flat = x.reshape(-1) if x.is_contiguous() else None
            if flat is not None:
                flat[0] = 1e30
    w = b = None
    if affine in ("both", "weight"):
        w = tt.tensor(rng.standard_normal(norm), dtype=getattr(tt, dtype)).requires_grad_(wants[1])
    if affine in ("both", "bias"):
        b = tt.tensor(rng.standard_normal(norm), dtype=getattr(tt, dtype)).requires_grad_(wants[2])
    out = tt.nn.functional.layer_norm(x, norm, w, b, eps)
    if not out.requires_grad:
        return
    if not kept:
        cpu_nn._kept_norm[0] = None
    g = _tensor(rng, tuple(out.shape), dtype, "C")
    took = _check_node(out, g, (x, w, b))
    assert took == (dtype in ("float32", "float64"))


def test_layer_norm_statistics_are_kept_for_an_affine_layer_only() -> None:
    from backends.cpu import nn as cpu_nn

    x = tt.tensor([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]], requires_grad=True)
    w, b = tt.ones(3, requires_grad=True), tt.zeros(3, requires_grad=True)
    cpu_nn._kept_norm[0] = None
    out = tt.nn.functional.layer_norm(x, [3])  # the output is xhat itself: not kept
    assert cpu_nn._kept_norm[0] is None
    out = tt.nn.functional.layer_norm(x, [3], w, b)
    assert cpu_nn._kept_norm[0][0] is x._array
    assert cpu_nn.take_layer_norm(x._array, 3 - 2, 1e-5) is not None  # one dim, eps 1e-5
    assert cpu_nn._kept_norm[0] is None  # taken once
    out = tt.nn.functional.layer_norm(x, [3], w, b, 1e-3)
    assert cpu_nn.take_layer_norm(x._array, 1, 1e-5) is None  # another eps
    assert cpu_nn.take_layer_norm(x.detach()._array.copy(), 1, 1e-3) is None  # another array
    cpu_nn._kept_norm[0] = None
    tt.nn.functional.layer_norm(tt.ones(2, 3, dtype=tt.float16), [3], w.half(), b.half())
    assert cpu_nn._kept_norm[0] is None  # a widened copy: not kept
    out.sum().backward()


def test_layer_norm_backward_with_and_without_the_kept_statistics() -> None:
    """A training step's gradients are the same bits whether the backward took the
    forward's statistics, computed them again, or ran the formula."""
    from backends.cpu import nn as cpu_nn

    rng = np.random.default_rng(5)
    data = rng.standard_normal((6, 8)).astype(np.float32)
    grads = []
    for mode in ("kept", "computed", "formula"):
        x = tt.tensor(data, requires_grad=True)
        w = tt.tensor(np.linspace(0.5, 2, 8, dtype=np.float32), requires_grad=True)
        b = tt.zeros(8, requires_grad=True)
        out = tt.nn.functional.layer_norm(x, [8], w, b)
        loss = (out * out).sum()
        if mode == "computed":
            cpu_nn._kept_norm[0] = None
        if mode == "formula":
            with fastpaths.disabled():
                loss.backward()
        else:
            loss.backward()
        grads.append([t.grad.numpy().tobytes() for t in (x, w, b)])
    assert grads[0] == grads[1] == grads[2]
