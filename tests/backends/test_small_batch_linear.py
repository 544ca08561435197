"""Note [Small batches against a row-major weight]: addmm, mm and matmul of ``x`` [M, K]
and a transposed row-major weight (F.linear's ``x @ w.t() + b``, ``x @ w.T``) compute
``(w @ x.T).T`` for the shapes ``_turns`` names (F.linear with a bias by the bounds
against gemm, which takes the rest: Note [Linear by gemm]).  Both sides of each of its
bounds: the fast path against the general path (which takes the same turn) bit for
bit, both against NumPy's direct product (bit for bit without a bias; with one, as gemm
rounds the sum), and against PyTorch.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
import tensor.nn.functional as F
from backends.common import fastpaths
from backends.common.linalg import _small_batch_product, _turns
from tests.backends.fastpath_support import assert_same, torch

_SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3e38, 1e-40])


@st.composite
def linear_args(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """x [M, K], w [N, K], a bias (``[N]``, ``[M, N]``, ``[1, N]`` or ``[M, 1]``) and
    its kind; M, K and N on both sides of each of ``_turns``'s bounds."""
    m = draw(st.sampled_from([1, 2, 3, 8, 31, 32, 33, 40, 64, 65]))
    n = draw(st.sampled_from([1, 10, 63, 64, 65, 127, 128, 200]))
    k = draw(st.sampled_from([0, 1, 7, 63, 64, 127, 128, 255, 256]))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.standard_normal((m, k)).astype(dtype)
    w = rng.standard_normal((n, k)).astype(dtype)
    if draw(st.booleans()) and x.size:
        x.flat[rng.integers(0, x.size, 2)] = rng.choice(_SPECIAL, 2)
    kind = draw(st.sampled_from(["[N]", "[M, N]", "[1, N]", "[M, 1]"]))
    shape = {"[N]": (n,), "[M, N]": (m, n), "[1, N]": (1, n), "[M, 1]": (m, 1)}[kind]
    bias = rng.standard_normal(shape).astype(dtype)
    return x, w, bias, kind


def _calls(x: tt.Tensor, w: tt.Tensor, b: tt.Tensor, kind: str) -> list[tt.Tensor]:
    out = [tt.addmm(b, x, w.t())]
    if kind == "[N]":
        out.append(F.linear(x, w, b))
    return out


@settings(max_examples=200, deadline=None)
@given(args=linear_args())
def test_small_batch_linear_both_ways(args: tuple[np.ndarray, np.ndarray, np.ndarray, str]) -> None:
    x_np, w_np, b_np, kind = args
    x, w, b = tt.tensor(x_np), tt.tensor(w_np), tt.tensor(b_np)
    fast = _calls(x, w, b, kind)
    with fastpaths.disabled():
        general = _calls(x, w, b, kind)
    with np.errstate(all="ignore"):
        direct = x_np @ w_np.T + b_np  # NumPy's own spelling, untouched by the turn
    for f, g in zip(fast, general, strict=True):
        assert_same(f, g)
        assert f.is_contiguous()
        assert_close_to_numpy(f.numpy(), direct, x_np.shape[1])


def assert_close_to_numpy(ours: np.ndarray, direct: np.ndarray, k: int) -> None:
    """NumPy's own product, up to the order of the sum (Note [Linear by gemm]: the bias
    summed in gemm's pass, and NumPy's matrix-vector product for one row or column).
    Compared where NumPy's is finite: where it is not (an inf or NaN input, or 3e38
    whose products and partial sums overflow), inf, -inf or NaN is the order of the
    sum's to choose (+inf and -inf partial sums meet in one order and not in another;
    the fast path against the general path, above, is bit for bit everywhere)."""
    eps = np.finfo(direct.dtype).eps
    finite = np.isfinite(direct)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(
            ours[finite], direct[finite], rtol=8 * eps * k, atol=8 * eps * np.sqrt(k) * 4
        )


@settings(max_examples=150, deadline=None)
@given(args=linear_args())
def test_small_batch_products_both_ways(
    args: tuple[np.ndarray, np.ndarray, np.ndarray, str],
) -> None:
    """The products without a bias (``F.linear(x, w)``, ``x @ w.T``, ``mm``) turn too."""
    x_np, w_np, _, _ = args
    x, w = tt.tensor(x_np), tt.tensor(w_np)

    def calls() -> list[tt.Tensor]:
        return [F.linear(x, w), x @ w.T, tt.mm(x, w.t()), tt.matmul(x, w.t())]

    fast = calls()
    with fastpaths.disabled():
        general = calls()
    with np.errstate(all="ignore"):
        direct = x_np @ w_np.T
    for f, g in zip(fast, general, strict=True):
        assert_same(f, g)
        assert f.is_contiguous()
        np.testing.assert_array_equal(f.numpy(), direct)  # no bias: no gemm, NumPy's bits


@settings(max_examples=60, deadline=None)
@given(args=linear_args(), half=st.sampled_from([tt.bfloat16, tt.float16]))
def test_half_precision_takes_no_turn_either_way(
    args: tuple[np.ndarray, np.ndarray, np.ndarray, str], half: tt.dtype
) -> None:
    """Half-precision products multiply widened copies on both paths, unturned: the
    fast path and the general one agree."""
    x_np, w_np, b_np, kind = args
    x, w, b = (tt.tensor(a.astype(np.float32)).to(half) for a in (x_np, w_np, b_np))
    fast = [*_calls(x, w, b, kind), x @ w.T]
    with fastpaths.disabled():
        general = [*_calls(x, w, b, kind), x @ w.T]
    for f, g in zip(fast, general, strict=True):
        assert_same(f, g)


def test_guard_bounds() -> None:
    """``_turns`` on both sides of each bound the Note measured, and the product turned
    only for C-contiguous ``x`` and a transposed row-major weight of one float dtype;
    its transpose is ``x @ w.T``."""
    cases = {  # (m, k, n): (turned against NumPy's product, against gemm's with a bias)
        (1, 256, 4096): (False, False),  # batch 1
        (2, 64, 1024): (True, True),
        (2, 63, 1024): (False, False),  # K below 64
        (2, 64, 1023): (False, False),  # M * N below 2048
        (16, 64, 128): (True, True),  # batches of 2-16: nothing more against gemm
        (32, 64, 128): (True, False),  # batches of 17-32: N or K >= 128;
        (32, 128, 64): (True, False),  # against gemm, K >= 256 or N >= 512
        (32, 64, 64): (False, False),
        (17, 256, 128): (True, True),
        (17, 255, 128): (True, False),
        (32, 64, 512): (True, True),
        (32, 255, 511): (True, False),
        (33, 256, 128): (True, False),  # batches of 33-64: N >= 128 and K >= 256;
        (33, 255, 128): (False, False),  # against gemm, N or K >= 512 too
        (64, 256, 127): (False, False),
        (64, 256, 256): (True, False),  # batch 64's first layer: gemm's with its bias
        (33, 256, 512): (True, True),
        (64, 512, 128): (True, True),
        (64, 511, 128): (True, False),
        (65, 1024, 1024): (False, False),  # past batch 64
    }
    rng = np.random.default_rng(0)
    for (m, k, n), taken in cases.items():
        assert (_turns(m, k, n), _turns(m, k, n, True)) == taken, (m, k, n)
        x = rng.standard_normal((m, k)).astype(np.float32)
        w = rng.standard_normal((n, k)).astype(np.float32)
        for against_gemm in (False, True):
            turned = _small_batch_product(x, w.T, against_gemm)
            assert (turned is not None) is taken[against_gemm], (m, k, n, against_gemm)
            if turned is not None:
                np.testing.assert_array_equal(turned.T, x @ w.T)
    x = rng.standard_normal((8, 64)).astype(np.float32)
    w = rng.standard_normal((512, 64)).astype(np.float32)
    assert _small_batch_product(x, w.T) is not None
    assert _small_batch_product(np.asfortranarray(x), w.T) is None  # x not row-major
    assert _small_batch_product(x, np.ascontiguousarray(w.T)) is None  # weight not transposed
    assert _small_batch_product(x.astype(np.int64), w.T.astype(np.int64)) is None
    assert _small_batch_product(x, w.T.astype(np.float64)) is None  # dtypes differ
    short = rng.standard_normal((512, 63)).astype(np.float32)
    assert _small_batch_product(x, short.T) is None  # shapes that do not multiply


def test_against_pytorch() -> None:
    if torch is None:
        pytest.skip("PyTorch is not installed: nothing to compare with")
    rng = np.random.default_rng(2)
    shapes = [(2, 1024, 64), (8, 256, 256), (32, 64, 64), (64, 256, 256), (16, 300, 5)]
    shapes += [(1, 5, 4), (3, 5, 4), (64, 10, 256), (7, 9, 1000)]  # Note [Linear by gemm]
    for m, n, k in shapes:
        x = rng.standard_normal((m, k)).astype(np.float32)
        w = rng.standard_normal((n, k)).astype(np.float32)
        b = rng.standard_normal(n).astype(np.float32)
        ours = F.linear(tt.tensor(x), tt.tensor(w), tt.tensor(b)).numpy()
        theirs = torch.nn.functional.linear(
            torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)
        ).numpy()
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5 * np.sqrt(k))
