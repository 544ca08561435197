"""Note [Linear by gemm]: ``x @ w.T + b`` (F.linear's addmm) computed by BLAS gemm
straight into a row-major result, the bias taken in the product's pass (products
without a bias keep NumPy's, and their bits).  ``gemm``'s guard on both sides of each
bound, the fast path against the general path bit for bit across it, and NumPy's
product (PyTorch's: tests/backends/test_small_batch_linear.py, whose shapes take
either way).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
import tensor.nn.functional as F
from backends.common import fastpaths
from backends.cpu._blas import gemm
from tests.backends.fastpath_support import assert_same

_SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40])


def _close(ours: np.ndarray, direct: np.ndarray, k: int) -> None:
    """Equal up to the order of the sum (bias first, the K blocks, NumPy's gemv)."""
    eps = np.finfo(direct.dtype).eps
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(ours, direct, rtol=8 * eps * k, atol=32 * eps * np.sqrt(k))


def test_guard() -> None:
    """Each condition of ``gemm``'s guard, taken and refused; what it computes when
    taken is NumPy's product (and sum), row-major."""
    rng = np.random.default_rng(0)

    def arrays(m: int, k: int, n: int, dtype: type = np.float32) -> tuple[np.ndarray, ...]:
        x = rng.standard_normal((m, k)).astype(dtype)
        w = rng.standard_normal((n, k)).astype(dtype)
        return x, w, rng.standard_normal(n).astype(dtype)

    for m, k, n, taken in [
        (3, 1023, 5, True),
        (3, 1024, 5, False),  # K of 1024 and more: NumPy's (gemm measured slower)
        (1, 4, 5, True),  # one row
        (3, 1, 5, False),  # K = 1: w.T is C-contiguous too
        (3, 4, 1, False),  # N = 1: likewise
        (0, 4, 5, False),
        (3, 0, 5, False),
    ]:
        x, w, b = arrays(m, k, n)
        out = gemm(x, w.T, b)
        assert (out is not None) is taken, (m, k, n)
        if taken:
            assert out.flags.c_contiguous and out.shape == (m, n)
            assert out.base is None  # its own memory, as NumPy's result: not a view
            _close(out, x @ w.T + b, k)
    x, w, b = arrays(4, 8, 6)
    assert gemm(np.asfortranarray(x), w.T, b) is None  # x not row-major
    assert gemm(x, np.ascontiguousarray(w.T), b) is None  # weight not transposed
    assert gemm(x, w.T, b.astype(np.float64)) is None  # the bias of another dtype
    assert gemm(x, w.T.astype(np.float64), b) is None
    assert gemm(x[:, :4], w[:, :4].T, b) is None  # a strided x
    assert gemm(x, w.T, b[None, None]) is None  # three dimensions: PyTorch refuses them
    assert gemm(x, w.T, b[:5]) is None  # does not broadcast
    for dtype in (np.float16, np.int64, np.complex64):
        assert gemm(*arrays(4, 8, 6, dtype)[:1], w.T.astype(dtype), b.astype(dtype)) is None
    assert gemm(x, w.T, None) is None  # no bias: NumPy's product (or the turn) is as fast
    x64, w64, b64 = arrays(4, 8, 6, np.float64)
    _close(gemm(x64, w64.T, b64), x64 @ w64.T + b64, 8)
    for bias in (b, rng.standard_normal((4, 6)), rng.standard_normal((4, 1)), np.float32(2)):
        bias = np.asarray(bias, np.float32)
        _close(gemm(x, w.T, bias), x @ w.T + bias, 8)


@st.composite
def linear_args(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """x [M, K], w [N, K], a bias and its kind; M, K, N on both sides of gemm's bounds
    and of the turn's (Note [Small batches against a row-major weight])."""
    m = draw(st.sampled_from([1, 2, 5, 17, 64, 65]))
    k = draw(st.sampled_from([1, 2, 255, 256, 385, 1023, 1024]))
    n = draw(st.sampled_from([1, 2, 63, 64, 130, 512]))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.standard_normal((m, k)).astype(dtype)
    w = rng.standard_normal((n, k)).astype(dtype)
    if draw(st.booleans()):
        x.flat[rng.integers(0, x.size, 2)] = rng.choice(_SPECIAL, 2)
    kind = draw(st.sampled_from(["[N]", "[M, N]", "[1, N]", "[M, 1]", "[]"]))
    shape = {"[N]": (n,), "[M, N]": (m, n), "[1, N]": (1, n), "[M, 1]": (m, 1), "[]": ()}[kind]
    return x, w, rng.standard_normal(shape).astype(dtype), kind


@settings(max_examples=120, deadline=None)
@given(args=linear_args())
def test_fast_and_general_paths_agree(args: tuple[np.ndarray, np.ndarray, np.ndarray, str]) -> None:
    x_np, w_np, b_np, kind = args
    x, w, b = tt.tensor(x_np), tt.tensor(w_np), tt.tensor(b_np)

    def calls() -> list[tt.Tensor]:
        out = [tt.addmm(b, x, w.t()), F.linear(x, w), x @ w.T, tt.mm(x, w.t())]
        return [*out, F.linear(x, w, b)] if kind == "[N]" else out

    fast = calls()
    with fastpaths.disabled():
        general = calls()
    with np.errstate(all="ignore"):
        direct = [x_np @ w_np.T + b_np, *([x_np @ w_np.T] * 3), x_np @ w_np.T + b_np]
    for f, g, d in zip(fast, general, direct, strict=False):
        assert_same(f, g)
        assert f.is_contiguous()
        _close(f.numpy(), d, x_np.shape[1])


def test_scaled_addmm_takes_the_product_alone() -> None:
    """addmm with an alpha or beta other than 1 (the general path only) scales gemm's
    product and the bias apart, as before."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 300)).astype(np.float32)
    w = rng.standard_normal((7, 300)).astype(np.float32)
    b = rng.standard_normal(7).astype(np.float32)
    for beta, alpha in ((1, 2.0), (0.5, 1), (0, 1)):
        out = tt.addmm(tt.tensor(b), tt.tensor(x), tt.tensor(w).t(), beta=beta, alpha=alpha)
        _close(out.numpy(), beta * b + alpha * (x @ w.T), 300)
    nan_bias = np.full(7, np.nan, np.float32)
    out = tt.addmm(tt.tensor(nan_bias), tt.tensor(x), tt.tensor(w).t(), beta=0)
    assert not np.isnan(out.numpy()).any()  # beta 0 ignores self, NaNs included
