"""Note [Convolution by output position] (``backends/common/conv.py``): a convolution
whose output has fewer positions than its kernel (conv2d's weight gradient has that
shape) takes one product per output position; it agrees with the im2col path (the fast
paths off) within rounding, exactly for integers, on both sides of the guard: strides,
dilations, padding, groups, a bias, unbatched inputs, half precision; and with
PyTorch's conv2d and its weight gradient."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
from backends.common import fastpaths
from dispatch import ops
from tests.backends.fastpath_support import torch


@st.composite
def _convs(draw):  # type: ignore[no-untyped-def]
    groups = draw(st.sampled_from([1, 1, 2]))
    cg = draw(st.integers(1, 3))
    og = draw(st.integers(1, 3))
    kh, kw = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    sh, sw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    dh, dw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    ph, pw = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    # Spatial sizes from just past the dilated kernel (few output positions: the
    # guarded side) to a few kernels wide (many: the columns).
    h = dh * (kh - 1) + 1 - 2 * ph + draw(st.integers(0, 6))
    w = dw * (kw - 1) + 1 - 2 * pw + draw(st.integers(0, 6))
    if h < 1 or w < 1:
        h, w = max(h, 1) + 2 * ph, max(w, 1) + 2 * pw
    n = draw(st.sampled_from([None, 1, 3]))
    dtype = draw(st.sampled_from(["float32", "float64", "int64", "float16"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    shape = (groups * cg, h, w) if n is None else (n, groups * cg, h, w)
    x = rng.integers(-3, 4, shape) if dtype == "int64" else rng.standard_normal(shape)
    wt = rng.integers(-3, 4, (groups * og, cg, kh, kw))
    wt = wt if dtype == "int64" else rng.standard_normal(wt.shape)
    bias = rng.standard_normal(groups * og) if draw(st.booleans()) and dtype != "int64" else None
    kw_ = {"stride": (sh, sw), "padding": (ph, pw), "dilation": (dh, dw), "groups": groups}
    return x.astype(dtype), wt.astype(dtype), bias, kw_


def _conv(x, w, b, kw):  # type: ignore[no-untyped-def]
    dt = getattr(tt, str(x.dtype))
    bias = None if b is None else tt.tensor(b, dtype=dt)
    try:
        return tt.nn.functional.conv2d(tt.tensor(x), tt.tensor(w), bias, **kw).numpy()
    except RuntimeError as e:  # a shape the convolution refuses: refused both ways
        return type(e)


@settings(deadline=None, max_examples=300)
@given(case=_convs())
def test_by_position_matches_the_columns(case) -> None:  # type: ignore[no-untyped-def]
    x, w, b, kw = case
    fast = _conv(x, w, b, kw)
    with fastpaths.disabled():
        general = _conv(x, w, b, kw)
    if isinstance(general, type):
        assert fast is general
        return
    assert fast.dtype == general.dtype and fast.shape == general.shape
    if x.dtype.kind == "i":
        np.testing.assert_array_equal(fast, general)
    else:
        tol = {"float16": 2e-3, "float32": 2e-5, "float64": 1e-12}[str(x.dtype)]
        np.testing.assert_allclose(
            fast.astype(np.float64), general.astype(np.float64), rtol=tol, atol=tol * 10
        )


@pytest.mark.parametrize("padding", [0, 1])
@pytest.mark.parametrize("groups", [1, 3])
def test_weight_gradient_matches_torch(padding: int, groups: int) -> None:
    if torch is None:
        pytest.skip("PyTorch is not installed")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 6, 12, 12)).astype(np.float32)
    w = rng.standard_normal((6, 6 // groups, 3, 3)).astype(np.float32)
    ours = tt.tensor(w).requires_grad_()
    out = tt.nn.functional.conv2d(tt.tensor(x), ours, padding=padding, groups=groups)
    out.backward(tt.ones_like(out))
    theirs = torch.tensor(w, requires_grad=True)
    t_out = torch.nn.functional.conv2d(torch.tensor(x), theirs, padding=padding, groups=groups)
    t_out.backward(torch.ones_like(t_out))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-4, atol=1e-3)


@settings(deadline=None, max_examples=250)
@given(
    k=st.tuples(st.integers(1, 5), st.integers(1, 5)),
    s=st.sampled_from([None, 1, 2, (1, 3)]),
    p=st.sampled_from([0, 1]),
    d=st.sampled_from([1, 2]),
    ceil=st.booleans(),
    dtype=st.sampled_from(["float32", "float64", "int64", "float16"]),
    values=st.sampled_from(["normal", "ties", "zeros", "nan"]),
    n=st.sampled_from([None, 2]),
    seed=st.integers(0, 2**16),
)
def test_window_maxima_match_argmax(k, s, p, d, ceil, dtype, values, n, seed) -> None:  # type: ignore[no-untyped-def]
    """Note [Window maxima by comparison] against the argmax path: the same values (bits:
    the first of 0.0 and -0.0 wins in both) and the same indices, for windows up to 5x5
    (past 16 elements: the general path on both sides), with ties, signed zeros, and
    NaN (which leaves the fast path)."""
    rng = np.random.default_rng(seed)
    shape = (3, 7, 8) if n is None else (n, 3, 7, 8)
    if values == "ties":
        x = rng.integers(-2, 3, shape).astype(dtype)
    elif values == "zeros":
        x = rng.choice(np.array([0.0, -0.0, -1.0]), shape).astype(dtype)
    else:
        x = (rng.standard_normal(shape) * 3).astype(dtype)
        if values == "nan" and dtype != "int64":
            x.reshape(-1)[rng.integers(0, x.size, 5)] = np.nan
    kw = {"stride": s if s is not None else k, "padding": p, "dilation": d, "ceil_mode": ceil}

    def pool():  # type: ignore[no-untyped-def]
        try:
            v, i = ops.core.max_pool2d_with_indices.default(
                tt.tensor(x),
                list(k),
                **{
                    key: (list(val) if isinstance(val, tuple) else [val] * 2)
                    if key != "ceil_mode"
                    else val
                    for key, val in kw.items()
                },
            )
        except RuntimeError as e:
            return type(e)
        return v.numpy().tobytes(), i.numpy().tobytes()

    fast = pool()
    with fastpaths.disabled():
        assert pool() == fast


@pytest.mark.parametrize(("size", "k"), [(20, 12), (16, 8), (10, 3)])
def test_past_the_cap_of_positions_take_the_columns(size: int, k: int) -> None:
    """An output of more than 64 positions (9x9 from a 12x12 kernel: fewer than its 144
    elements, past the cap) and outputs of more positions than the kernel has elements
    (9x9 from 8x8, 8x8 from 3x3) take the columns: the same bits with the fast paths
    off."""
    rng = np.random.default_rng(k)
    x = rng.standard_normal((2, 3, size, size)).astype(np.float32)
    w = rng.standard_normal((4, 3, k, k)).astype(np.float32)
    fast = _conv(x, w, None, {})
    with fastpaths.disabled():
        general = _conv(x, w, None, {})
    assert fast.tobytes() == general.tobytes()
