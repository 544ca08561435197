"""Note [Two BLAS thread pools]: the calls through SciPy's OpenBLAS stay on the calling
thread unless that library runs one thread anyway.  An axpy past 10,000 elements goes in
pieces (the same bits as one call); a gemm past 262,144 multiply-adds goes back to
NumPy's product, and F.linear's fast and general paths still agree with each other.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import tensor as tt
import tensor.nn.functional as F
from backends.common import fastpaths
from backends.cpu import _blas
from tests.backends.fastpath_support import assert_same


@pytest.fixture
def threads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Set SciPy's BLAS thread count as ``_blas`` reads it: ``threads[0] = n``."""
    count = [1]
    monkeypatch.setattr(_blas, "blas_threads", lambda: count[0])
    yield count


def test_threads_are_read_from_scipys_openblas() -> None:
    """A count on SciPy's wheels (0 only where its OpenBLAS is not found)."""
    _blas._functions()
    n = _blas.blas_threads()
    assert isinstance(n, int) and n >= 0
    if _blas._THREADS:
        assert n >= 1


@pytest.mark.parametrize("n", [10_000, 10_001, 25_000])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_axpy_in_pieces_gives_one_calls_bits(threads: list[int], n: int, dtype: type) -> None:
    rng = np.random.default_rng(n)
    shape = (n // 5, 5) if n % 5 == 0 else (n,)
    y0 = rng.standard_normal(n).astype(dtype).reshape(shape)
    x = rng.standard_normal(n).astype(dtype).reshape(shape)
    results = []
    for count in (1, 8):  # one call; pieces (threaded)
        threads[0] = count
        y = y0.copy()
        assert _blas.axpy(y, x, 0.37)
        results.append(y)
        y = y0.copy()
        assert _blas.axpy_checked(y, x, 0.37)
        results.append(y)
        y = y0.copy()
        assert _blas.axpy(y, np.asfortranarray(x), 0.37)  # x copied to C order first
        results.append(y)
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])
    threads[0] = 8
    strided = np.zeros((n, 2), dtype)[:, 0]
    assert not _blas.axpy(strided, x.reshape(-1), 0.37)  # written nowhere: refused
    assert not strided.any()


def test_gemm_past_one_threads_size_goes_back_to_numpy(threads: list[int]) -> None:
    rng = np.random.default_rng(0)
    for (m, k, n), small in (((64, 64, 64), True), ((64, 64, 65), False)):
        x = rng.standard_normal((m, k)).astype(np.float32)
        w = rng.standard_normal((n, k)).astype(np.float32)
        b = rng.standard_normal(n).astype(np.float32)
        threads[0] = 4
        assert (_blas.gemm(x, w.T, b) is not None) is small, (m, k, n)
        threads[0] = 1
        assert _blas.gemm(x, w.T, b) is not None
        threads[0] = 0  # not found: taken as threaded
        assert (_blas.gemm(x, w.T, b) is not None) is small


@pytest.mark.parametrize("count", [1, 4])
def test_linear_paths_agree_whatever_the_threads(threads: list[int], count: int) -> None:
    """F.linear with a bias, batch 64 256 -> 256 (gemm's with one thread; turned with
    several) and batch 8 (turned either way): the fast path, the general path."""
    threads[0] = count
    rng = np.random.default_rng(count)
    for m in (8, 64):
        x = tt.tensor(rng.standard_normal((m, 256)).astype(np.float32))
        w = tt.tensor(rng.standard_normal((256, 256)).astype(np.float32))
        b = tt.tensor(rng.standard_normal(256).astype(np.float32))
        fast = F.linear(x, w, b)
        with fastpaths.disabled():
            general = F.linear(x, w, b)
        assert_same(fast, general)
        expected = x.numpy() @ w.numpy().T + b.numpy()
        np.testing.assert_allclose(fast.numpy(), expected, rtol=1e-5, atol=1e-4)
