"""The reduction, product and nn fast paths against the general path (Note [Fast-path
switch]) and PyTorch: Note [Tiny sums] (and the one-dim sum), Note [Product fast path],
Note [Softmax fast path] and Note [Cross-entropy fast path], each driven across both
sides of its guard by hypothesis.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

import tensor as tt
import tensor.nn.functional as F
from tests.backends.fastpath_support import (
    ALL_DTYPES,
    FLOAT_DTYPES,
    same_both_ways,
    tensors,
    torch,
)

# Sizes on both sides of _TINY_SUM (256), and of the ones-column cache.
_SUM_SHAPES = [(), (0,), (1,), (3,), (255,), (256,), (257,), (2, 3), (0, 2), (3, 1), (2, 3, 4)]
# Finite values that sum without overflow, with the special ones that cross guards.
_SUM_VALUES = st.sampled_from(
    [0.0, -0.0, 1.0, -1.5, 1e-3, float("inf"), -float("inf"), float("nan")]
)


@st.composite
def sum_tensors(draw: st.DrawFn, dtypes: Any = ALL_DTYPES, shapes: Any = _SUM_SHAPES) -> Any:
    """Tensors for sums: the shared strategy's views, but float values whose sums do not
    overflow in one order and not another (rounding order is the fast path's freedom);
    sometimes all zeros of one sign (the sign of an all-zero sum)."""
    x = draw(tensors(dtypes=dtypes, shapes=shapes, requires_grad=None))
    if x.dtype.is_floating_point:
        fill = draw(st.sampled_from(["values", "+0", "-0"]))
        target = x._base if x._base is not None else x  # a view's values are its base's
        n = target.numel()
        if fill == "values":
            vals = draw(
                st.lists(_SUM_VALUES | st.floats(-100, 100, width=16), min_size=n, max_size=n)
            )
        else:
            vals = [0.0 if fill == "+0" else -0.0] * n
        _fill(target, np.array(vals, dtype=np.float64))
    return x


def _fill(x: Any, vals: np.ndarray) -> None:
    """Write ``vals`` (flat) into ``x`` in place, in its dtype."""
    with tt.no_grad():
        x.copy_(tt.tensor(vals.reshape(tuple(x.shape))).to(x.dtype))


def _tol(x: Any) -> float:
    """The fast path's freedom: only a tiny float32/float64 vector's whole sum may round
    differently (Note [Tiny sums]); everything else must be the general path's, bit for
    bit (PyTorch is compared within its own tolerance)."""
    tiny = x.ndim == 1 and x.numel() <= 256 and x.dtype in (tt.float32, tt.float64)
    return 1e-5 if tiny else 0.0


# -- Note [Tiny sums]: x.sum(), x.mean(), the one-dim sum -------------------------------------
@settings(max_examples=150, deadline=None)
@given(x=sum_tensors())
@example(x=tt.tensor([-0.0]))
@example(x=tt.tensor([-0.0, -0.0], dtype=tt.float64))
def test_whole_sum(x: Any) -> None:
    same_both_ways(lambda a: a.sum(), x, rtol=_tol(x), torch_call=lambda a: a.sum())


@settings(max_examples=40, deadline=None)
@given(
    n=st.sampled_from([255, 256, 257, 300, 1000]),
    dtype=st.sampled_from([tt.float32, tt.float64]),
    data=st.data(),
)
def test_whole_sum_above_the_threshold_is_add_reduce(n: int, dtype: Any, data: Any) -> None:
    """Past _TINY_SUM the fast path is NumPy's pairwise sum itself: bit for bit.  Up to
    it (a BLAS product with ones), the two orders agree within their rounding, which
    scales with the sum of magnitudes, not with the sum: a sum that cancels to -143 out
    of terms summing to 2e5 in magnitude may differ in its fifth digit (a random seed
    found one)."""
    seed = data.draw(st.integers(0, 2**32 - 1))
    values = np.random.default_rng(seed).standard_normal(n) * 1e3
    x = tt.tensor(values, dtype=dtype)
    cancel = float(np.abs(values).sum()) / max(abs(float(values.sum())), 1e-30)
    same_both_ways(lambda a: a.sum(), x, rtol=1e-5 * max(1.0, cancel) if n <= 256 else 0.0)


@settings(max_examples=60, deadline=None)
@given(x=sum_tensors(dtypes=FLOAT_DTYPES))
def test_whole_mean(x: Any) -> None:
    same_both_ways(lambda a: a.mean(), x, rtol=_tol(x), torch_call=lambda a: a.mean())


@settings(max_examples=120, deadline=None)
@given(
    x=sum_tensors(),
    dim=st.sampled_from([0, 1, -1, -2, 2, 3, -4, [0], [-1], [0, 1], (1,), None]),
    keepdim=st.booleans(),
    op=st.sampled_from(["sum", "mean"]),
)
def test_sum_along(x: Any, dim: Any, keepdim: bool, op: str) -> None:
    def call(a: Any) -> Any:
        return getattr(a, op)(dim, keepdim)

    same_both_ways(call, x, rtol=_tol(x), torch_call=call)


@settings(max_examples=60, deadline=None)
@given(
    x=sum_tensors(),
    dim=st.sampled_from([None, 0, -1]),
    dtype=st.sampled_from([tt.float32, tt.float64, tt.int64, tt.float16]),
)
def test_sum_dtype_argument(x: Any, dim: Any, dtype: Any) -> None:
    # PyTorch refuses an integer dtype= on a tensor that requires grad (listed, not fixed)
    assume(not (x.requires_grad and dtype is tt.int64))
    torch_dtype = getattr(torch, str(dtype).rpartition(".")[2]) if torch is not None else None
    same_both_ways(
        lambda a: a.sum(dim, dtype=dtype) if dim is not None else a.sum(dtype=dtype),
        x,
        rtol=1e-2,
        torch_call=lambda a: (
            a.sum(dim, dtype=torch_dtype) if dim is not None else a.sum(dtype=torch_dtype)
        ),
    )


def test_all_zero_sums_are_positive_zero() -> None:
    """Note [Tiny sums]: a dot of [-0.0] gives -0.0; the sum must give +0.0 (PyTorch's)."""
    for n in (1, 2, 255, 256, 257):
        for dt in (tt.float32, tt.float64):
            out = tt.full((n,), -0.0, dtype=dt).sum()
            assert float(out) == 0.0 and not np.signbit(out.numpy()), (n, dt)


# -- Note [Product fast path] -----------------------------------------------------------------
_PRODUCT_DTYPES = (tt.float32, tt.float64, tt.float16, tt.bfloat16, tt.int64, tt.int32, tt.bool)


@st.composite
def operands(draw: st.DrawFn, ranks: tuple[int, ...] = (1, 2, 3)) -> tuple[Any, Any]:
    """Two operands, usually of one dtype and compatible shapes, sometimes not; views
    (transposed, sliced) and 0-d/empty among them."""
    dt = draw(st.sampled_from(_PRODUCT_DTYPES))
    dt2 = dt if draw(st.booleans()) else draw(st.sampled_from(_PRODUCT_DTYPES))
    m, k, n, b = (draw(st.sampled_from([0, 1, 2, 3])) for _ in range(4))
    shape_of = {
        0: [()],
        1: [(k,)],
        2: [(m, k)],
        3: [(b, m, k), (1, m, k)],
    }
    other_of = {0: [()], 1: [(k,), (k + 1,)], 2: [(k, n), (k + 1, n)], 3: [(b, k, n), (1, k, n)]}
    ra, rb = draw(st.sampled_from(ranks)), draw(st.sampled_from(ranks))
    sa, sb = draw(st.sampled_from(shape_of[ra])), draw(st.sampled_from(other_of[rb]))
    a = draw(tensors(dtypes=[dt], shapes=[sa], requires_grad=None))
    c = draw(tensors(dtypes=[dt2], shapes=[sb], requires_grad=None))
    # PyTorch skips its dtype checks on some empty operands (listed, not copied)
    assume((dt is dt2 and dt is not tt.bool) or (a.numel() and c.numel()))
    return _small(a), _small(c)


def _small(x: Any) -> Any:
    """Small integral values (exact products in every dtype; no inf * 0 left to BLAS)."""
    target = x._base if x._base is not None else x
    vals = np.arange(target.numel()) % 5 - 2
    _fill(target, (vals > 0) if x.dtype is tt.bool else vals)
    return x


@settings(max_examples=200, deadline=None)
@given(ab=operands(), op=st.sampled_from(["matmul", "mm", "bmm", "dot", "vdot", "outer"]))
def test_products(ab: tuple[Any, Any], op: str) -> None:
    def call(a: Any, b: Any) -> Any:
        return getattr(a, op)(b)

    same_both_ways(call, *ab, torch_call=call)


@settings(max_examples=60, deadline=None)
@given(ab=operands(ranks=(1, 2, 3)), bias=st.booleans())
def test_linear(ab: tuple[Any, Any], bias: bool) -> None:
    x, w = ab
    # PyTorch's 1-D weight with a bias goes through addmm, which wants a matrix (listed)
    assume(not (bias and w.ndim == 1))
    if bias and w.ndim:
        b = tt.ones(w.shape[0], dtype=w.dtype)
        same_both_ways(F.linear, x, w, b, torch_call=torch and torch.nn.functional.linear)
    else:
        same_both_ways(F.linear, x, w, torch_call=torch and torch.nn.functional.linear)


@settings(max_examples=60, deadline=None)
@given(ab=operands(ranks=(2,)), beta=st.sampled_from([0, 1, 2]), alpha=st.sampled_from([1, 3]))
def test_addmm(ab: tuple[Any, Any], beta: int, alpha: int) -> None:
    a, b = ab
    fill = float("nan") if a.dtype.is_floating_point else 1
    base = tt.full((a.shape[0], b.shape[1]), fill, dtype=a.dtype)

    def call(c: Any, a: Any, b: Any) -> Any:
        lib = tt if isinstance(a, tt.Tensor) else torch
        return lib.addmm(c, a, b, beta=beta, alpha=alpha)

    same_both_ways(call, base, a, b, torch_call=call)


@settings(max_examples=40, deadline=None)
@given(ab=operands(ranks=(2, 3)))
def test_product_backward(ab: tuple[Any, Any]) -> None:
    """The backward pass multiplies by transposed operands (mT): the grads agree too."""
    a, b = ab

    def call(a: Any, b: Any) -> Any:
        if not (a.requires_grad or b.requires_grad):
            return a @ b
        out = a @ b
        out.sum().backward()
        return out, a.grad, b.grad

    same_both_ways(call, a, b, torch_call=call)


# -- Note [Softmax fast path] -----------------------------------------------------------------
@settings(max_examples=150, deadline=None)
@given(
    x=tensors(
        dtypes=(*FLOAT_DTYPES, tt.float32, tt.float64, tt.int64),
        shapes=[(), (0,), (0, 2), (2, 0), (3,), (2, 3), (3, 1), (2, 3, 4)],
        requires_grad=None,
    ),
    dim=st.sampled_from([0, 1, -1, -2, 2, -3]),
    dtype=st.sampled_from([None, None, tt.float64, tt.float32]),
    log=st.booleans(),
)
def test_softmax(x: Any, dim: int, dtype: Any, log: bool) -> None:
    # PyTorch skips its dtype check on an empty integer tensor (listed, not copied)
    assume(x.numel() or x.dtype.is_floating_point or dtype is not None)

    def call(a: Any) -> Any:
        lib = F if isinstance(a, tt.Tensor) else torch.nn.functional
        d = dtype if lib is F or dtype is None else getattr(torch, str(dtype).rpartition(".")[2])
        return (lib.log_softmax if log else lib.softmax)(a, dim, dtype=d)

    same_both_ways(call, x, rtol=1e-5 if x.dtype not in (tt.float16, tt.bfloat16) else 1e-2,
                   torch_call=call)  # fmt: skip


# -- Note [Cross-entropy fast path] -----------------------------------------------------------
@st.composite
def ce_inputs(draw: st.DrawFn) -> tuple[Any, Any]:
    """Logits (N, C) (sometimes 1-d or 3-d), class targets with ignored rows and out of
    range ones, logits far apart (a row's exp() sums underflowing under a shared shift)."""
    dt = draw(st.sampled_from([tt.float32, tt.float64, tt.float32, tt.float16]))
    n, c = draw(st.integers(0, 5)), draw(st.integers(1, 4))
    shape = draw(st.sampled_from([(n, c), (n, c), (c,), (n, c, 2)]))
    spread = draw(st.sampled_from([1.0, 1.0, 200.0, 1e4]))
    vals = draw(
        st.lists(
            st.floats(-1, 1, width=16) | st.sampled_from([0.0, float("inf"), float("nan")]),
            min_size=int(np.prod(shape)),
            max_size=int(np.prod(shape)),
        )
    )
    x = tt.tensor((np.array(vals) * spread).reshape(shape)).to(dt)
    tshape = shape[:1] + shape[2:] if len(shape) > 1 else ()
    t = tt.tensor(
        np.array(
            draw(
                st.lists(
                    st.sampled_from([0, 1, 2, 3, -100, c]),
                    min_size=int(np.prod(tshape)),
                    max_size=int(np.prod(tshape)),
                )
            ),  # fmt: skip
            dtype=np.int64,
        ).reshape(tshape)
    )
    if draw(st.booleans()) and dt.is_floating_point:
        x = x.requires_grad_()
    return x, t


@settings(max_examples=200, deadline=None)
@given(
    xt=ce_inputs(),
    reduction=st.sampled_from(["mean", "mean", "sum", "none"]),
    ignore_index=st.sampled_from([-100, -100, 0, 3, -1]),
    weighted=st.booleans(),
    smoothing=st.sampled_from([0.0, 0.0, 0.2]),
)
def test_cross_entropy(
    xt: tuple[Any, Any], reduction: str, ignore_index: int, weighted: bool, smoothing: float
) -> None:
    x, t = xt
    classes = x.shape[1] if x.ndim > 1 else x.shape[0]
    w = np.linspace(0.5, 2.0, classes) if weighted else None

    def call(x: Any, t: Any) -> Any:
        is_tt = isinstance(x, tt.Tensor)
        lib = F if is_tt else torch.nn.functional
        ww = None if w is None else (tt.tensor(w) if is_tt else torch.tensor(w)).to(x.dtype)
        out = lib.cross_entropy(
            x, t, ww, ignore_index=ignore_index, reduction=reduction, label_smoothing=smoothing
        )
        if not x.requires_grad:
            return out
        out.sum().backward()
        return out, x.grad

    low = x.dtype in (tt.float16, tt.bfloat16)
    same_both_ways(call, x, t, rtol=1e-2 if low else 1e-5, torch_call=call)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_every_row_ignored(reduction: str) -> None:
    x = tt.randn(4, 3, requires_grad=True)
    out = F.cross_entropy(x, tt.tensor([3, 3, 3, 3]), ignore_index=3, reduction=reduction)
    if reduction == "mean":
        assert np.isnan(out.item())  # PyTorch's 0/0
    else:
        assert not out.detach().numpy().any()
    out.sum().backward()
    assert not x.grad.numpy().any()


@settings(max_examples=150, deadline=None)
@given(
    dt=st.sampled_from([tt.float32, tt.float64]),
    n=st.integers(1, 4),
    c=st.integers(1, 4),
    data=st.data(),
    ignore_index=st.sampled_from([-100, -1, 0, 1, 2]),
    grad=st.booleans(),
)
def test_cross_entropy_fast_path_guard(
    dt: Any, n: int, c: int, data: Any, ignore_index: int, grad: bool
) -> None:
    """The fast path's own inputs (2-D logits, int64 targets, a plain mean) with targets
    that equal ignore_index or are negative: only rows no target ignores take it."""
    t = tt.tensor(
        data.draw(st.lists(st.sampled_from([*range(c), -100, -1]), min_size=n, max_size=n)),
        dtype=tt.int64,
    )
    x = tt.tensor(np.linspace(-2, 3, n * c).reshape(n, c), dtype=dt)
    if grad:
        x = x.requires_grad_()

    def call(x: Any, t: Any) -> Any:
        lib = F if isinstance(x, tt.Tensor) else torch.nn.functional
        out = lib.cross_entropy(x, t, ignore_index=ignore_index)
        if not x.requires_grad:
            return out
        out.backward()
        return out, x.grad

    # The shared shift rounds differently from per-row maxima (Note [Cross-entropy fast path])
    same_both_ways(call, x, t, rtol=1e-6, torch_call=call)


# -- guards the random draws reach too rarely ---------------------------------------------------
@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3), (1, 0, 2)])
@pytest.mark.parametrize("dtype", [tt.float32, tt.float64])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_of_empty_tensors(shape: tuple[int, ...], dtype: Any, log: bool) -> None:
    """Empty inputs leave the softmax fast path (``x.size``); every dim, both ways."""
    x = tt.zeros(shape, dtype=dtype)
    fn = F.log_softmax if log else F.softmax
    for dim in range(-len(shape), len(shape)):
        same_both_ways(
            lambda a, d=dim: fn(a, d),
            x,
            torch_call=lambda a, d=dim: (
                torch.nn.functional.log_softmax if log else torch.nn.functional.softmax
            )(a, d),
        )


@pytest.mark.parametrize("dtype", [tt.float16, tt.bfloat16])
@pytest.mark.parametrize("dim", [None, 0, 1, -1])
def test_half_sums_accumulate_in_float32(dtype: Any, dim: Any) -> None:
    """Half-precision sums never take the same-dtype fast path: PyTorch accumulates them
    in float32, so partial sums that overflow or round away in half precision do not."""
    row = [6e4, 6e4, -6e4, -6e4] if dtype is tt.float16 else [256.0] + [1.0] * 8 + [-256.0]
    x = tt.tensor([row, row[::-1]], dtype=dtype)

    def call(a: Any) -> Any:
        return a.sum() if dim is None else a.sum(dim)

    out = same_both_ways(call, x, torch_call=call)
    assert out.error is None and bool((out.value == call(x.float()).to(dtype)).all())
