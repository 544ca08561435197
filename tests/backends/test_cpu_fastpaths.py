"""The CPU kernels' fast paths give the general path's results (Note [Tiny sums],
Note [Cross-entropy fast path], cat's fast path): same values within rounding, same signs
of zero, same errors, including the inputs that must leave the fast path."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensor as tt
import tensor.nn.functional as F


def _ce_reference(x: np.ndarray, t: np.ndarray) -> float:
    x = x.astype(np.float64)
    m = x.max(axis=1, keepdims=True)
    lse = np.log(np.exp(x - m).sum(axis=1)) + m[:, 0]
    return float(np.mean(lse - x[np.arange(len(t)), t]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "rows",
    [
        [[0.0, -1e4], [1e4, 0.0], [1.0, 2.0]],  # extreme logits
        [[-200.0, -201.0], [50.0, 0.0]],  # a row far below the batch's largest logit
        [[-1e30, -1e30 + 1e24], [3.0, 1.0]],  # a row whose exp() underflows entirely
        [[0.1, 0.2, 0.3]] * 64,
    ],
)
def test_cross_entropy_matches_the_per_row_formula(dtype: type, rows: list[list[float]]) -> None:
    x = np.array(rows, dtype=dtype)
    t = np.arange(len(rows)) % x.shape[1]
    got = float(F.cross_entropy(tt.tensor(x), tt.tensor(t)).item())
    expected = _ce_reference(x, t)
    assert math.isfinite(got)
    assert got == pytest.approx(expected, rel=1e-5 if dtype is np.float32 else 1e-12)


def test_cross_entropy_special_values_and_bad_targets() -> None:
    assert math.isnan(F.cross_entropy(tt.tensor([[math.inf, 0.0]]), tt.tensor([0])).item())
    assert math.isnan(F.cross_entropy(tt.tensor([[math.nan, 0.0]]), tt.tensor([1])).item())
    x = tt.tensor([[0.0, 1.0], [2.0, 3.0]])
    for bad in ([-1, 0], [0, 2]):
        with pytest.raises(IndexError, match="out of bounds"):
            F.cross_entropy(x, tt.tensor(bad))


@pytest.mark.parametrize("dtype", [tt.float32, tt.float64])
@pytest.mark.parametrize("n", [0, 1, 7, 256, 257])
def test_small_sums_match_pairwise_summation(dtype: tt.dtype, n: int) -> None:
    data = np.random.default_rng(n).standard_normal(n).astype(dtype.numpy_dtype)
    got = tt.tensor(data).sum()
    assert got.shape == () and got.dtype is dtype
    expected = np.add.reduce(data.astype(np.float64))
    tol = 1e-5 if dtype is tt.float32 else 1e-12
    assert float(got.item()) == pytest.approx(float(expected), rel=tol, abs=tol)


def test_sum_of_negative_zero_is_positive_zero_as_in_pytorch() -> None:
    out = tt.tensor([-0.0]).sum()
    assert float(out.item()) == 0.0 and math.copysign(1.0, float(out.item())) == 1.0
    assert math.isnan(tt.tensor([math.inf, -math.inf]).sum().item())
    out.add_(1)  # the result is an ordinary writeable tensor, not a view of a cache
    assert float(tt.tensor([-0.0]).sum().item()) == 0.0


@pytest.mark.parametrize("dim", [0, 1, -1, -2])
def test_cat_fast_path_matches_numpy(dim: int) -> None:
    rng = np.random.default_rng(abs(dim))
    parts = [rng.random((3, 4), dtype=np.float32) for _ in range(5)]
    parts.append(rng.random((4, 3), dtype=np.float32).T)  # not C-contiguous
    got = tt.cat(tuple(tt.from_numpy(p) for p in parts), dim)
    np.testing.assert_array_equal(got.numpy(), np.concatenate(parts, axis=dim))
    assert got.dtype is tt.float32
    mixed = tt.cat([tt.ones(2, dtype=tt.int64), tt.ones(1, dtype=tt.float32)])
    assert mixed.dtype is tt.float32 and mixed.tolist() == [1.0, 1.0, 1.0]


def test_cat_errors_and_legacy_empties_leave_the_fast_path() -> None:
    a = tt.ones(2, 3)
    empty = tt.zeros(0)
    assert tt.cat([empty, a, empty]).shape == (2, 3)  # legacy 1-D empties are skipped
    assert tt.cat([empty, empty]).shape == (0,)
    assert tt.cat([a, a], -1).shape == (2, 6)
    for dim in (2, -3, 2**40, 2**70):
        with pytest.raises(IndexError, match="Dimension out of range"):
            tt.cat([a, a], dim)
    with pytest.raises(RuntimeError, match="zero-dimensional tensor"):
        tt.cat([tt.tensor(1.0), tt.tensor(2.0)])
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        tt.cat([a, tt.ones(2, 2)])
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        tt.cat([a, tt.ones(3)])
