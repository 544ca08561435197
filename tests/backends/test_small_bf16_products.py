"""Note [Small bfloat16 products]: matmul and mm of bfloat16 matrices of at most
``_SMALL_BF16`` multiply-adds go through ml_dtypes' ``dot``.  Each element must be the
float32 sum of the exact products, in order, rounded once to bfloat16 (what the widened
BLAS product computes for the larger ones), on every path: the general kernel, its
fast path, and autocast's fused product from float32, on both sides of the bound.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
from backends.common import fastpaths
from backends.common.linalg import _SMALL_BF16
from tests.backends.fastpath_support import assert_same, torch

_BF16 = np.dtype(ml_dtypes.bfloat16)
_SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3e38, 1e-40], np.float32)


def _sum_in_order(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The float32 sum over k of ``a[:, k] * b[k, :]`` (exact: bfloat16 factors), one
    rounding a step, then rounded to bfloat16: the reference, written step by step."""
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    with np.errstate(all="ignore"):
        for k in range(a.shape[1]):
            acc = acc + a32[:, k : k + 1] * b32[k : k + 1, :]
    return acc.astype(_BF16)


def _widened(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Note [Products of widened copies]: float32 copies, BLAS, one rounding."""
    with np.errstate(all="ignore"):
        return np.dot(a.astype(np.float32), b.astype(np.float32)).astype(_BF16)


@st.composite
def matrices(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    """Two float32 matrices that multiply, their multiply-adds on both sides of the
    bound (a 0 dimension included), some elements special (signed zeros, infinities,
    NaN, overflowing products, subnormals), the data at a drawn scale."""
    m, k, n = draw(st.integers(0, 12)), draw(st.integers(0, 40)), draw(st.integers(0, 12))
    if draw(st.booleans()):  # near the bound
        k = max(1, _SMALL_BF16 // max(m * n, 1) + draw(st.integers(-2, 2)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = draw(st.sampled_from([1.0, 1e-3, 1e3, 1e20]))
    a = (rng.standard_normal((m, k)) * scale).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    if draw(st.booleans()) and a.size:
        a.flat[rng.integers(0, a.size, 2)] = rng.choice(_SPECIAL, 2)
    return a, b


def _products(a: Any, b: Any) -> list[Any]:
    return [tt.mm(a, b), tt.matmul(a, b), a @ b]


@settings(max_examples=200, deadline=None)
@given(pair=matrices(), transposed=st.booleans())
def test_bf16_products_both_ways(pair: tuple[np.ndarray, np.ndarray], transposed: bool) -> None:
    a_np, b_np = (x.astype(_BF16) for x in pair)
    a, b = tt.tensor(a_np.astype(np.float32)).bfloat16(), tt.tensor(b_np.astype(np.float32))
    b = b.bfloat16()
    if transposed:  # other strides: the loop takes any
        a = a.t().contiguous().t()
    small = a_np.shape[0] * a_np.shape[1] * b_np.shape[1] <= _SMALL_BF16
    expected = _sum_in_order(a_np, b_np) if small else _widened(a_np, b_np)
    with fastpaths.disabled():
        general = _products(a, b)
    for fast, slow in zip(_products(a, b), general, strict=True):
        assert fast.dtype is tt.bfloat16
        assert_same(fast, slow)
        np.testing.assert_array_equal(
            fast.numpy().view(np.uint16), expected.view(np.uint16), err_msg=f"small={small}"
        )


@settings(max_examples=150, deadline=None)
@given(pair=matrices())
def test_autocast_products_both_ways(pair: tuple[np.ndarray, np.ndarray]) -> None:
    a32, b32 = pair
    a, b = tt.tensor(a32), tt.tensor(b32)
    with tt.autocast("cpu"):
        fast = _products(a, b)
        with fastpaths.disabled():
            general = _products(a, b)
    small = a32.shape[0] * a32.shape[1] * b32.shape[1] <= _SMALL_BF16
    a_np, b_np = a32.astype(_BF16), b32.astype(_BF16)
    expected = _sum_in_order(a_np, b_np) if small else _widened(a_np, b_np)
    for f, g in zip(fast, general, strict=True):
        assert_same(f, g)
        np.testing.assert_array_equal(f.numpy().view(np.uint16), expected.view(np.uint16))


def test_bound_is_where_the_loop_stops_paying() -> None:
    """The bound the Note measured: 8x16x8 is inside (ml_dtypes' loop, the sum in
    order), 8x16x9 outside (the widened BLAS product)."""
    assert 8 * 16 * 8 <= _SMALL_BF16 < 8 * 16 * 9
    rng = np.random.default_rng(0)
    for n, reference in ((8, _sum_in_order), (9, _widened)):
        a_np = rng.standard_normal((8, 16)).astype(_BF16)
        b_np = rng.standard_normal((16, n)).astype(_BF16)
        a, b = tt.tensor(a_np.astype(np.float32)), tt.tensor(b_np.astype(np.float32))
        out = tt.mm(a.bfloat16(), b.bfloat16())
        np.testing.assert_array_equal(
            out.numpy().view(np.uint16), reference(a_np, b_np).view(np.uint16)
        )


def test_small_products_against_pytorch() -> None:
    if torch is None:
        import pytest

        pytest.skip("PyTorch is not installed: nothing to compare with")
    rng = np.random.default_rng(1)
    for m, k, n in ((1, 1, 1), (4, 4, 4), (8, 8, 8), (3, 100, 2), (8, 16, 8)):
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        ours = tt.mm(tt.tensor(a).bfloat16(), tt.tensor(b).bfloat16())
        theirs = torch.mm(torch.tensor(a).bfloat16(), torch.tensor(b).bfloat16())
        np.testing.assert_allclose(
            ours.float().numpy(), theirs.float().numpy(), rtol=1e-2, atol=1e-2 * np.sqrt(k)
        )
