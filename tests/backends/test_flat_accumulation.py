"""Note [Accumulation at flat indices] (``backends/cpu/shape.py``): the CPU's ``add_at``
and ``multiply_at`` give NumPy's ``ufunc.at`` bits on both sides of the guard: keys of
one to all dims (broadcast together, repeated positions), values broadcast or not,
every dtype kind, and the keys the vector path leaves to ``ufunc.at`` (negative and
out-of-range indices, slices, masks, non-contiguous and read-only targets); and the
embedding gradient that goes through it equals PyTorch's, duplicates and padding_idx
included."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
from backends.common import fastpaths
from backends.cpu.shape import INDEX_FNS

_DTYPES = [np.float32, np.float64, np.int64, np.int32, np.complex64, np.float16]


def _outcome(fn: Any, x: np.ndarray, key: Any, values: Any) -> tuple[Any, bytes]:
    x = x.copy()
    try:
        fn(x, key, values)
    except Exception as e:  # noqa: BLE001 - the error's type is what is compared
        return type(e), x.tobytes()
    return None, x.tobytes()


@st.composite
def _cases(draw: Any) -> tuple[np.ndarray, tuple[Any, ...], Any]:
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim)))
    dtype = draw(st.sampled_from(_DTYPES))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    n = draw(st.integers(1, ndim))
    count = draw(st.integers(0, 12))
    lo = -2 if draw(st.booleans()) else 0  # negative indices: ufunc.at's wrap
    extra = 1 if draw(st.integers(0, 9)) == 0 else 0  # one past the end: an IndexError
    key_shape = (count,) if draw(st.booleans()) else (count, 1)
    keys = []
    for i in range(n):
        k = rng.integers(lo, shape[i] + extra, key_shape if i == 0 else (count,))
        keys.append(k.astype(draw(st.sampled_from([np.int64, np.int32, np.intp]))))
    indexed = np.broadcast_shapes(*(k.shape for k in keys)) + shape[n:]
    kind = draw(st.sampled_from(["full", "scalar", "last dims", "python"]))
    if kind == "full":
        values: Any = (rng.standard_normal(indexed) * 4).astype(dtype)
    elif kind == "scalar":
        values = np.asarray(rng.standard_normal() * 4).astype(dtype)
    elif kind == "last dims":
        values = (rng.standard_normal(indexed[-1:] or (1,)) * 4).astype(dtype)
    else:
        values = 1.5 if np.dtype(dtype).kind in "fc" else 3
    layout = draw(st.sampled_from(["C", "C", "C", "transposed", "read-only"]))
    if layout == "transposed" and ndim > 1:
        x = np.ascontiguousarray(x.T).T  # Fortran order: the guard's other side
    elif layout == "read-only":
        x.flags.writeable = False
    return x, tuple(keys), values


@settings(deadline=None, max_examples=400)
@given(case=_cases(), op=st.sampled_from(["add", "multiply"]))
def test_same_bits_as_ufunc_at(case: tuple[np.ndarray, tuple[Any, ...], Any], op: str) -> None:
    x, key, values = case
    ours = INDEX_FNS[f"{op}_at"]
    ufunc = getattr(np, op)
    if not x.flags.writeable:  # the same refusal (or none, for no index) as ufunc.at's
        errors = []
        for fn in (ours, ufunc.at):
            try:
                fn(x, key, values)
            except Exception as e:  # noqa: BLE001 - the error's type is what is compared
                errors.append(type(e))
            else:
                errors.append(None)
        assert errors[0] is errors[1]
        return
    expected = _outcome(ufunc.at, x, key, values)
    assert _outcome(ours, x, key, values) == expected
    with fastpaths.disabled():
        assert _outcome(ours, x, key, values) == expected


def test_repeated_rows_accumulate_in_order() -> None:
    """Float addition is not associative: a row index repeated 64 times must add its
    rows in the order they come, as ufunc.at's loop over rows does."""
    rng = np.random.default_rng(0)
    idx = np.concatenate([np.zeros(64, np.int64), rng.integers(0, 9, 300)])
    g = (rng.standard_normal((idx.size, 33)) * 1e3).astype(np.float32)
    out, expected = np.zeros((9, 33), np.float32), np.zeros((9, 33), np.float32)
    INDEX_FNS["add_at"](out, (idx,), g)
    np.add.at(expected, idx, g)
    assert out.tobytes() == expected.tobytes()


def test_slices_and_masks_take_ufunc_at() -> None:
    x = np.arange(12.0).reshape(3, 4)
    for key in [(slice(None), np.array([0, 0, 1])), (np.array([True, False, True]),)]:
        a, b = x.copy(), x.copy()
        INDEX_FNS["add_at"](a, key, 1.0)
        np.add.at(b, key, 1.0)
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("padding_idx", [None, 0, 3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_embedding_gradient_matches_torch(padding_idx: int | None, dtype: str) -> None:
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    rng = np.random.default_rng(1)
    weight = rng.standard_normal((10, 6)).astype(dtype)
    idx = np.concatenate([np.full(20, 3), rng.integers(0, 10, 40)]).reshape(6, 10)
    g = rng.standard_normal((6, 10, 6)).astype(dtype)
    w = tt.tensor(weight).requires_grad_()
    tt.nn.functional.embedding(tt.tensor(idx), w, padding_idx=padding_idx).backward(tt.tensor(g))
    tw = torch.tensor(weight, requires_grad=True)
    torch.nn.functional.embedding(torch.tensor(idx), tw, padding_idx=padding_idx).backward(
        torch.tensor(g)
    )
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=tol, atol=tol)
    if padding_idx is not None:
        assert not w.grad.numpy()[padding_idx].any()
