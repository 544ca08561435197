"""``backends.cpu._blas.axpy`` (Note [Fused add with alpha]): what it writes and what it
refuses, leaving ``y`` untouched.  SciPy's BLAS wrappers write into read-only arrays and
silently copy non-contiguous ones, so each of those cases is checked here."""

from __future__ import annotations

import numpy as np
import pytest

from backends.cpu import _blas


def _exact(y: np.ndarray, x: np.ndarray, alpha: float) -> np.ndarray:
    """``y + alpha * x`` for float32 rounded once: the float64 products of float32
    numbers are exact, and their float64 sums rounded to float32 round once here."""
    a = np.float64(np.float32(alpha))
    return (y.astype(np.float64) + x.astype(np.float64) * a).astype(np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (7,), (64, 64), (3, 4, 5)])
@pytest.mark.parametrize("x_layout", ["C", "transposed", "strided"])
def test_writes_y_in_place(dtype: type, shape: tuple[int, ...], x_layout: str) -> None:
    rng = np.random.default_rng(0)
    y = rng.standard_normal(shape).astype(dtype)
    x = rng.standard_normal(shape).astype(dtype)
    if x_layout == "transposed" and shape:
        x = np.ascontiguousarray(x.T).T  # same values, reversed strides
    elif x_layout == "strided" and shape:
        wide = np.zeros((*shape[:-1], 2 * shape[-1]), dtype)
        wide[..., ::2] = x
        x = wide[..., ::2]
    # The same elements paired whatever x's layout: as with a C-contiguous copy of x
    # (and, for float32, rounded once).
    want = y.copy()
    assert _blas.axpy(want, np.array(x, order="C"), -0.0137)
    if dtype is np.float32:
        np.testing.assert_array_equal(want, _exact(y, x, -0.0137))
    else:
        np.testing.assert_allclose(want, y - 0.0137 * x, rtol=1e-15, atol=1e-15)
    before = y.__array_interface__["data"][0]
    assert _blas.axpy(y, x, -0.0137)
    assert y.__array_interface__["data"][0] == before
    np.testing.assert_array_equal(y, want)


def test_x_may_be_y() -> None:
    y = np.arange(10, dtype=np.float32)
    assert _blas.axpy(y, y, 0.5)
    np.testing.assert_array_equal(y, np.arange(10, dtype=np.float32) * 1.5)


@pytest.mark.parametrize(
    "case", ["read-only", "transposed y", "strided y", "dtype", "shape", "zero alpha", "int"]
)
def test_refuses_and_leaves_y_alone(case: str) -> None:
    y = np.zeros((8, 8), np.float32)
    x = np.ones((8, 8), np.float32)
    alpha = 2.0
    if case == "read-only":
        y.flags.writeable = False
    elif case == "transposed y":
        y = np.zeros((8, 8), np.float32).T
    elif case == "strided y":
        y = np.zeros((8, 16), np.float32)[:, ::2]
    elif case == "dtype":
        x = x.astype(np.float64)
    elif case == "shape":
        x = np.ones(8, np.float32)
    elif case == "zero alpha":
        x[0, 0] = np.inf  # inf * 0 is NaN: BLAS would skip the product altogether
        alpha = 0.0
    elif case == "int":
        y, x = y.astype(np.int32), x.astype(np.int32)
    assert not _blas.axpy(y, x, alpha)
    assert (y == 0).all()


def test_fused_add_broadcasts_and_leaves_inputs_alone() -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 5)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    a0, b0 = a.copy(), b.copy()
    out = _blas.fused_add(a, b, 0.3)
    np.testing.assert_array_equal(out, _exact(a, np.broadcast_to(b, a.shape), 0.3))
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(b, b0)
    assert out.flags.c_contiguous and out.shape == (4, 5)
    assert _blas.fused_add(a, b.astype(np.float64), 0.3) is None  # dtypes differ
    assert _blas.fused_add(a, np.ones(3, np.float32), 0.3) is None  # shapes do not broadcast
