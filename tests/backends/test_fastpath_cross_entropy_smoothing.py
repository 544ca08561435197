"""Note [Cross-entropy fast path] with label smoothing and with class probabilities as
the target (``backends/common/nn.py``): the fast forward (one shift for the batch, each
row's smoothing term as ``C * log(sum) - sum(shifted)``, a probability row's loss as
``log(sum) * sum(c) - sum(c * shifted)``) and the ``_cross_entropy_backward`` kernel
that cross_entropy's formula now calls for them give the general path's values within
rounding, and PyTorch's, on both sides of the guard: class indices and probabilities,
smoothing of 0, a negative value (none: PyTorch's rule), (0, 1] and above 1 (an
error), weights, every reduction, ignore_index hit or not, rows far below the batch's
largest logit (the shared shift's underflow check), infinities and NaN."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
import tensor.nn.functional as F
from backends.common import fastpaths
from tests.backends.fastpath_support import torch

SMOOTHING = [0.0, 0.1, 0.5, 1.0, -0.3]


def _logits(rng: np.random.Generator, n: int, c: int, dtype: str, spread: str) -> np.ndarray:
    x = rng.standard_normal((n, c)) * 3
    if spread == "far row" and n > 1:
        x[0] -= 60.0  # far below the batch's largest logit, its exp sum still above the floor
    elif spread == "underflow" and n > 1:
        x[0] -= 1e5  # its exp sum underflows under the shared shift: the per-row path
    elif spread == "inf":
        x[0, 0] = math.inf
    elif spread == "nan":
        x[-1, -1] = math.nan
    return x.astype(dtype)


def _target(rng: np.random.Generator, n: int, c: int, dtype: str, kind: str) -> np.ndarray:
    if kind == "classes":
        return rng.integers(0, c, n)
    p = rng.random((n, c))
    return (p / p.sum(1, keepdims=True) if kind == "distribution" else p).astype(dtype)


def _run(x: np.ndarray, t: np.ndarray, backward: bool, **kw: object) -> tuple[np.ndarray, ...]:
    xt = tt.tensor(x).requires_grad_(backward)
    loss = F.cross_entropy(xt, tt.tensor(t), **kw)
    if not backward:
        return (loss.detach().numpy(),)
    g = tt.ones_like(loss)
    loss.backward(g)
    return loss.detach().numpy(), xt.grad.numpy()


def _close(a: np.ndarray, b: np.ndarray, dtype: str) -> None:
    tol = 2e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol, equal_nan=True)


# The guarded side (a mean, no weight, a negative ignore_index, finite logits) is drawn
# most often; every other value leaves the fast path somewhere.
@settings(deadline=None, max_examples=250)
@given(
    n=st.integers(1, 6),
    c=st.integers(1, 6),
    dtype=st.sampled_from(["float32", "float64"]),
    kind=st.sampled_from(["classes", "distribution", "weights"]),
    smoothing=st.sampled_from(SMOOTHING),
    reduction=st.sampled_from(["mean", "mean", "mean", "sum", "none"]),
    weighted=st.sampled_from([False, False, True]),
    ignore=st.sampled_from([-100, -100, 0]),
    spread=st.sampled_from(["normal", "normal", "far row", "underflow", "inf", "nan"]),
    backward=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_fast_and_general_paths_agree(
    n, c, dtype, kind, smoothing, reduction, weighted, ignore, spread, backward, seed
):
    _compare(n, c, dtype, kind, smoothing, reduction, weighted, ignore, spread, backward, seed)


@pytest.mark.parametrize("kind", ["classes", "distribution", "weights"])
@pytest.mark.parametrize("smoothing", SMOOTHING)
@pytest.mark.parametrize("spread", ["normal", "far row"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_guarded_side(kind: str, smoothing: float, spread: str, dtype: str) -> None:
    """Every kind of target and smoothing on the fast path's side of the guard."""
    for seed in range(3):
        _compare(8, 5, dtype, kind, smoothing, "mean", False, -100, spread, True, seed)


def _compare(n, c, dtype, kind, smoothing, reduction, weighted, ignore, spread, backward, seed):
    rng = np.random.default_rng(seed)
    x = _logits(rng, n, c, dtype, spread)
    t = _target(rng, n, c, dtype, kind)
    kw: dict[str, object] = {
        "label_smoothing": smoothing, "reduction": reduction, "ignore_index": ignore,
    }  # fmt: skip
    if weighted:
        kw["weight"] = tt.tensor(rng.random(c) + 0.5, dtype=getattr(tt, dtype))
    if kind != "classes" and ignore >= 0:  # PyTorch refuses it for probabilities
        for switch in (fastpaths.disabled, _nothing):
            with switch(), pytest.raises(RuntimeError, match="ignore_index is not supported"):
                _run(x, t, backward, **kw)
        return
    fast = _run(x, t, backward, **kw)
    with fastpaths.disabled():
        general = _run(x, t, backward, **kw)
    for a, b in zip(fast, general, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        _close(a, b, dtype)
    if torch is not None and spread in ("normal", "far row"):
        xt = torch.tensor(x, requires_grad=backward)
        tkw = dict(kw)
        if weighted:
            tkw["weight"] = torch.from_numpy(kw["weight"].numpy())  # type: ignore[attr-defined]
        loss = torch.nn.functional.cross_entropy(xt, torch.from_numpy(t), **tkw)
        _close(fast[0], loss.detach().numpy(), dtype)
        if backward:
            loss.backward(torch.ones_like(loss))
            _close(fast[1], xt.grad.numpy(), dtype)


@pytest.mark.parametrize("kind", ["classes", "distribution"])
@pytest.mark.parametrize("smoothing", [1.5, math.inf])
def test_smoothing_above_one_is_refused(kind: str, smoothing: float) -> None:
    """PyTorch: ``label_smoothing must be between 0.0 and 1.0. Got: 1.5``; the fast
    path's guard must not let such a call through."""
    rng = np.random.default_rng(0)
    x, t = _logits(rng, 3, 4, "float32", "normal"), _target(rng, 3, 4, "float32", kind)
    with pytest.raises(RuntimeError, match=r"cross_entropy\(\): label_smoothing must be between"):
        F.cross_entropy(tt.tensor(x), tt.tensor(t), label_smoothing=smoothing)


@pytest.mark.parametrize("kind", ["classes", "distribution"])
@pytest.mark.parametrize("smoothing", [-0.2, math.nan])
def test_smoothing_at_or_below_zero_smooths_nothing(kind: str, smoothing: float) -> None:
    """A wrong answer found here: PyTorch smooths only for a value above 0, and our
    forward agreed, but the backward formula smoothed with any nonzero value (a
    gradient off by ~0.025 for -0.1).  Loss and gradient equal the unsmoothed ones."""
    rng = np.random.default_rng(1)
    x, t = _logits(rng, 4, 3, "float64", "normal"), _target(rng, 4, 3, "float64", kind)
    for fast in (True, False):
        with fastpaths.disabled() if not fast else _nothing():
            smoothed = _run(x, t, True, label_smoothing=smoothing)
            plain = _run(x, t, True)
        for a, b in zip(smoothed, plain, strict=True):
            np.testing.assert_array_equal(a, b)


class _nothing:  # noqa: N801 (a context manager, named as one)
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def test_backward_kernel_refuses_mismatched_probabilities() -> None:
    """``_cross_entropy_backward`` with class probabilities of another dtype or shape
    names the argument and what it expected."""
    from dispatch import ops

    x = tt.zeros(2, 3)
    g = tt.tensor(1.0)
    for bad in (tt.zeros(2, 3, dtype=tt.float64), tt.zeros(3, 2)):
        with pytest.raises(RuntimeError, match="argument 'target' \\(class probabilities\\)"):
            ops.core._cross_entropy_backward.default(g, x, bad)


@pytest.mark.parametrize("ignore", [0, 3])
def test_probabilities_refuse_a_nonnegative_ignore_index(ignore: int) -> None:
    """PyTorch: ``ignore_index is not supported for floating point target`` (a negative
    one, the default -100 included, is accepted); ours computed a loss."""
    x, t = tt.zeros(2, 4), tt.full((2, 4), 0.25)
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point"):
        F.cross_entropy(x, t, ignore_index=ignore)
    assert F.cross_entropy(x, t, ignore_index=-1).item() == pytest.approx(math.log(4))
