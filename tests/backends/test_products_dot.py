"""Note [Products of widened copies] (backends/common/linalg.py): on two 2-D arrays that
are C- or F-contiguous, NumPy's ``dot`` computes what its ``matmul`` does, bit for bit
(the half-precision products and autocast's fused products call ``dot`` on their float32
copies; the general path calls ``matmul``).  If a NumPy release changes either, this
fails before the fast paths drift from the general one."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
from backends.common import fastpaths

_DIMS = st.sampled_from([0, 1, 2, 3, 5, 8, 16, 17, 31, 64, 65, 130])


@settings(max_examples=300, deadline=None)
@given(
    dims=st.tuples(_DIMS, _DIMS, _DIMS),
    dtype=st.sampled_from([np.float32, np.float64]),
    orders=st.tuples(st.sampled_from("CF"), st.sampled_from("CF")),
    strided_source=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_dot_is_matmul_on_contiguous_matrices(
    dims: tuple[int, int, int], dtype: Any, orders: tuple[str, str], strided_source: bool, seed: int
) -> None:
    m, k, n = dims
    rng = np.random.default_rng(seed)
    a = np.asarray(rng.standard_normal((m, k)), dtype=dtype, order=orders[0])
    b = np.asarray(rng.standard_normal((k, n)), dtype=dtype, order=orders[1])
    if strided_source:  # a copy of a strided view, as astype makes: contiguous again
        a = np.repeat(a, 2, axis=1)[:, ::2].astype(dtype)
        b = np.repeat(b, 2, axis=0)[::2].T.astype(dtype).T
    assert a.flags.c_contiguous or a.flags.f_contiguous
    assert b.flags.c_contiguous or b.flags.f_contiguous
    expected = np.matmul(a, b)
    got = np.dot(a, b)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()


def test_half_products_on_strided_operands_agree_both_ways() -> None:
    """Strided half-precision operands: their float32 copies are contiguous, so the fast
    path's ``dot`` and the general path's ``matmul`` agree."""
    rng = np.random.default_rng(0)
    for dt in (tt.bfloat16, tt.float16):
        x = tt.tensor(rng.standard_normal((9, 40)).astype(np.float32)).to(dt)[:, ::3]
        w = tt.tensor(rng.standard_normal((28, 14)).astype(np.float32)).to(dt)[::2, 1::2]
        fast = (x @ w, tt.mm(x, w))
        with fastpaths.disabled():
            general = (x @ w, tt.mm(x, w))
        for f, g in zip(fast, general, strict=True):
            assert f.dtype is g.dtype is dt
            assert f.numpy().tobytes() == g.numpy().tobytes()


_LAYOUTS = st.sampled_from(["C", "F", "rows", "cols", "transposed-rows"])


def _laid_out(a: np.ndarray, layout: str) -> np.ndarray:
    """``a``'s values in a layout: C- or F-contiguous, or strided (every other row or
    column of a larger array, or the transpose of such a view)."""
    if layout == "C":
        return np.ascontiguousarray(a)
    if layout == "F":
        return np.asfortranarray(a)
    if layout == "rows":
        return np.repeat(a, 2, axis=0)[::2]
    if layout == "cols":
        return np.repeat(a, 2, axis=1)[:, ::2]
    return np.repeat(np.ascontiguousarray(a.T), 2, axis=0)[::2].T


@settings(max_examples=200, deadline=None)
@given(
    dims=st.tuples(_DIMS, _DIMS, _DIMS),
    dtype=st.sampled_from([np.float32, np.float64]),
    layouts=st.tuples(_LAYOUTS, _LAYOUTS),
    seed=st.integers(0, 2**16),
)
def test_products_of_the_operands_themselves_agree_with_the_general_path(
    dims: tuple[int, int, int], dtype: Any, layouts: tuple[str, str], seed: int
) -> None:
    """``tt.mm(a, b)`` and ``a @ b`` of two float32 or float64 matrices, in any layout, give
    the general path's bits, which are NumPy's ``dot``'s (a strided operand: gemm on a
    contiguous copy, as PyTorch multiplies it), ``matmul``'s where an operand has one
    element."""
    m, k, n = dims
    rng = np.random.default_rng(seed)
    a = _laid_out(rng.standard_normal((m, k)).astype(dtype), layouts[0])
    b = _laid_out(rng.standard_normal((k, n)).astype(dtype), layouts[1])
    x, w = tt.from_numpy(a), tt.from_numpy(b)
    fast = (tt.mm(x, w), x @ w)
    with fastpaths.disabled():
        general = (tt.mm(x, w), x @ w)
    one = a.size == 1 or b.size == 1
    expected = (np.matmul(a, b) if one else np.dot(a, b)).tobytes()
    for f, g in zip(fast, general, strict=True):
        assert f.numpy().tobytes() == g.numpy().tobytes() == expected
        assert f.shape == g.shape == (m, n) and f.dtype is g.dtype


@settings(max_examples=150, deadline=None)
@given(
    rows=st.integers(1, 70),
    cols=st.integers(1, 256),
    dtype=st.sampled_from([np.float32, np.float64]),
    layout=_LAYOUTS,
    scale=st.sampled_from([1e-3, 1.0, 1e3]),
    seed=st.integers(0, 2**16),
)
def test_row_and_whole_sums_by_dot_are_the_products_sums(
    rows: int, cols: int, dtype: Any, layout: str, scale: float, seed: int
) -> None:
    """``backends.cpu.nn``'s row and whole sums of small float arrays (cross_entropy's):
    NumPy's ``dot`` with a ones vector on C-contiguous arrays, ``@`` otherwise; both give
    ``@``'s bits."""
    from backends.cpu.nn import _row_sum, _total

    rng = np.random.default_rng(seed)
    a = _laid_out((rng.standard_normal((rows, cols)) * scale).astype(dtype), layout)
    ones = np.ones(cols, dtype)
    assert _row_sum(a).tobytes() == (a @ ones).tobytes()
    v = a[0]
    assert np.asarray(_total(v)).tobytes() == np.asarray(v @ ones).tobytes()


def test_one_by_one_products_sum_from_positive_zero() -> None:
    """NumPy's ``dot`` of two [1, 1] matrices is a scalar product (``0 * -1`` gives
    -0.0); gemm's sum, NumPy's ``matmul`` and PyTorch's ``mm`` start from +0.0.  The
    product kernel's ``dot`` guard leaves [1, 1] operands to matmul on both paths."""
    for dtype in (np.float32, np.float64):
        for a_val, b_val in ((0.0, -0.5), (-0.0, 0.5), (-0.0, -0.0)):
            x = tt.tensor(np.array([[a_val]], dtype))
            w = tt.tensor(np.array([[b_val]], dtype))
            fast = (tt.mm(x, w), x @ w, x @ w.T)
            with fastpaths.disabled():
                general = (tt.mm(x, w), x @ w, x @ w.T)
            expected = np.matmul(np.array([[a_val]], dtype), np.array([[b_val]], dtype))
            for f, g in zip(fast, general, strict=True):
                assert f.numpy().tobytes() == g.numpy().tobytes() == expected.tobytes()


_SPECIAL = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 3e38]


def test_dot_is_matmul_on_special_values_past_one_element() -> None:
    """The other side of the one-element guard: on contiguous matrices of more than one
    element each, ``dot`` gives ``matmul``'s bits on zeros of both signs, infinities,
    NaNs and values whose products overflow float32."""
    rng = np.random.default_rng(0)
    for m, k, n in itertools.product(range(4), range(4), range(4)):
        for _ in range(20):
            a_vals = rng.choice(_SPECIAL, (m, k))
            b_vals = rng.choice(_SPECIAL, (k, n))
            for dtype in (np.float32, np.float64):
                for order_a, order_b in itertools.product("CF", "CF"):
                    a = np.asarray(a_vals, dtype=dtype, order=order_a)
                    b = np.asarray(b_vals, dtype=dtype, order=order_b)
                    if a.size == 1 or b.size == 1:
                        continue
                    with np.errstate(all="ignore"):
                        assert np.dot(a, b).tobytes() == np.matmul(a, b).tobytes(), (a, b)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize(
    ("a_vals", "b_vals"),
    [
        ([[0.0]], [[np.inf, 1.0]]),  # dot: 0 scales the row to [0, 0]; gemm: [nan, 0]
        ([[-0.0]], [[1.0, 2.0]]),
        ([[1.0], [0.0]], [[np.inf]]),
        ([[0.0]], [[-1.0]]),
        ([[np.nan]], [[0.0, -0.0, 2.0]]),
        ([[-1.0], [0.0], [2.0]], [[-0.0]]),
    ],
)
def test_one_element_operands_multiply_as_gemm(
    dtype: str, a_vals: list[list[float]], b_vals: list[list[float]]
) -> None:
    """A [1, 1] operand: NumPy's ``dot`` scales the other matrix by it (``0 * inf``
    never computed), gemm sums from +0 (NaN, as PyTorch): every path (the fast path,
    the general path, half precision's widened copies, autocast's fused product and
    linear) gives ``matmul``'s bits, and PyTorch's values where it is installed."""
    dt = getattr(tt, dtype)
    x, w = tt.tensor(a_vals, dtype=dt), tt.tensor(b_vals, dtype=dt)
    with np.errstate(all="ignore"):
        expected = np.matmul(x.float().numpy(), w.float().numpy())
    with np.errstate(all="ignore"):  # NumPy's small matmul loop flags 0 * inf
        results = [tt.mm(x, w), x @ w, tt.nn.functional.linear(x, w.T)]
        with fastpaths.disabled():
            results += [tt.mm(x, w), x @ w, tt.nn.functional.linear(x, w.T)]
        if dt in (tt.float16, tt.bfloat16):
            xf, wf = x.float(), w.float()
            with tt.autocast("cpu", dtype=dt):
                results += [tt.mm(xf, wf), tt.nn.functional.linear(xf, wf.T)]
    for r in results:
        assert r.dtype is dt
        np.testing.assert_array_equal(r.float().numpy(), expected)
    try:
        import torch
    except ImportError:
        return
    theirs = torch.mm(
        torch.tensor(a_vals, dtype=getattr(torch, dtype)),
        torch.tensor(b_vals, dtype=getattr(torch, dtype)),
    )
    np.testing.assert_array_equal(theirs.float().numpy(), expected)
