"""Property tests of addmm's fast path (``backends/common/linalg.py``, F.linear's
``addmm(bias, x, w.t())``): the product with the bias added in place gives the general
path's answer and PyTorch's on both sides of its guard: dtypes (one direct dtype against
mixed, half precision, bool), ``beta``/``alpha`` (the int 1 against 1.0, True, 0, 2), bias
shapes that broadcast and one that does not, transposed and expanded operands."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
from tests.backends.fastpath_support import same_both_ways

DTYPES = (tt.float32, tt.float64, tt.float16, tt.int64, tt.complex64, tt.bool)


def _filled(shape, dtype, seed):
    vals = (np.arange(int(np.prod(shape))) * (seed + 1)) % 5 - 2
    return tt.tensor(vals.reshape(shape)).to(dtype)


@settings(max_examples=80, deadline=None)
@given(
    n=st.sampled_from([0, 1, 3]),
    k=st.sampled_from([0, 2, 4]),
    p=st.sampled_from([1, 3]),
    dt=st.sampled_from(DTYPES),
    other=st.sampled_from(DTYPES),
    mixed=st.sampled_from(["none", "none", "bias", "mat2"]),
    bias=st.sampled_from(["row", "full", "col", "scalar", "1x1", "bad"]),
    coeffs=st.sampled_from([(1, 1)] * 4 + [(1.0, 1), (1, 1.0), (True, 1), (0, 1), (2, 1), (1, 3)]),
    transposed=st.booleans(),
)
def test_addmm_bias(n, k, p, dt, other, mixed, bias, coeffs, transposed):
    dt_bias = other if mixed == "bias" else dt
    dt1, dt2 = dt, other if mixed == "mat2" else dt
    shape = {
        "row": (p,),
        "full": (n, p),
        "col": (n, 1),
        "scalar": (),
        "1x1": (1, 1),
        "bad": (p + 1,),
    }[bias]
    c = _filled(shape, dt_bias, 0)
    a = _filled((n, k), dt1, 1)
    b = _filled((p, k), dt2, 2).t() if transposed else _filled((k, p), dt2, 2)
    beta, alpha = coeffs

    def call(c, a, b):
        lib = tt if isinstance(a, tt.Tensor) else __import__("torch")
        return lib.addmm(c, a, b, beta=beta, alpha=alpha)

    # PyTorch skips its dtype checks on some empty operands (as in test_addmm)
    checked = (a.numel() and b.numel()) or (mixed == "none" and dt is not tt.bool)
    same_both_ways(call, c, a, b, torch_call=call if checked else None)


def _addmm(dtype, beta, alpha, k, device="cpu"):
    c = tt.full((1,), 3, dtype=dtype, device=device)
    a, b = tt.ones((1, k), dtype=dtype, device=device), tt.ones((k, 1), dtype=dtype, device=device)
    return tt.addmm(c, a, b, beta=beta, alpha=alpha)


def test_addmm_converts_beta_and_alpha_to_the_dtype_as_pytorch():
    """PyTorch 2.13 converts beta and alpha to the matrices' dtype (checked): an integer
    dtype truncates them, refuses what does not fit and a complex number with an
    imaginary part; with an empty product (mat1 [n, 0]) the result is ``self * beta``,
    which refuses a beta of a higher kind than the dtype (found by test_addmm_bias with a
    random seed: int64, k=0, beta=1.0).  The Meta kernel refuses the same calls."""
    assert _addmm(tt.int64, 1.7, 1, 2).tolist() == [[5]]  # 1 * 3 + 2
    assert _addmm(tt.int64, 2.5, 1.5, 2).tolist() == [[8]]  # 2 * 3 + 1 * 2
    assert _addmm(tt.int64, -0.5, 1, 2).tolist() == [[2]]  # 0 * 3 + 2
    assert _addmm(tt.int64, 1, 1 + 0j, 2).tolist() == [[5]]
    assert _addmm(tt.float32, -0.5, 1, 2).tolist() == [[0.5]]
    assert _addmm(tt.int64, 1, 1.0, 0).tolist() == [[3]]  # alpha unused
    assert _addmm(tt.int64, 0.0, 1, 0).tolist() == [[0]]
    for dtype, beta, alpha, k in [
        (tt.int64, 1.0, 1, 0),
        (tt.int32, 2.0, 1, 0),
        (tt.int64, 1j, 1, 0),
        (tt.float32, 1 + 0j, 1, 0),
        (tt.uint8, -0.5, 1, 2),
        (tt.uint8, 300, 1, 2),
        (tt.int64, 1, 1j, 2),
        (tt.float32, 1j, 1, 2),
    ]:
        for device in ("cpu", "meta"):
            with pytest.raises(RuntimeError, match="can't be cast|without overflow"):
                _addmm(dtype, beta, alpha, k, device)


def test_an_empty_result_takes_any_beta():
    """The empty-product rule needs a result to write: [0, 1] and [1, 0] results take a
    float beta with integer matrices (PyTorch 2.13; a random seed found n=0)."""
    for n, p in [(0, 1), (1, 0), (0, 0)]:
        c, a, b = (
            tt.ones(p, dtype=tt.int64),
            tt.ones((n, 0), dtype=tt.int64),
            tt.ones((0, p), dtype=tt.int64),
        )
        assert tuple(tt.addmm(c, a, b, beta=1.0).shape) == (n, p)
