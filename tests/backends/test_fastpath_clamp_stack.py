"""Two fast paths against the general path (Note [Fast-path switch]) and PyTorch, each
driven across both sides of its guard by hypothesis: clamp with Python numbers on a
float32/float64 NumPy array (Note [Clamp fast path] in backends/common/ternary.py), and
stack of tensors of one dtype and shape along an int dim (cat's fast path, in
backends/common/joining.py)."""

from __future__ import annotations

import math
from typing import Any

import ml_dtypes
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
from tests.backends.fastpath_support import ALL_DTYPES, same_both_ways, tensors, torch

# Bounds on both sides of the guard: Python ints and floats (with -0.0, NaN, infinities,
# one past float32's range and one no float holds), None, bools, NumPy-free complex.
_BOUND = st.sampled_from(
    [None, None, 0, 1, -1, 0.5, -2.5, -0.0, 1e30, 3.5e38, math.nan, math.inf, -math.inf,
     2**70, 2**1030, True, 1j]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(x=tensors(dtypes=ALL_DTYPES, requires_grad=None), lo=_BOUND, hi=_BOUND)
def test_clamp_with_numbers(x: Any, lo: Any, hi: Any) -> None:
    def call(a: Any) -> Any:
        out = a.clamp(lo, hi)
        if a.requires_grad:
            out.sum().backward()
            return out, a.grad
        return out

    same_both_ways(call, x, torch_call=None if _huge(lo, hi) or _nan_beside(x, lo, hi) else call)


def _nan_beside(x: Any, lo: Any, hi: Any) -> bool:
    """PyTorch checks the bounds' range only when neither is NaN: ``clamp(1e30, nan)`` of
    a float16 tensor gives NaN there, where ours raises the overflow error it raises for
    ``clamp(1e30, 2.0)`` (PyTorch's too); left out of the comparison with it."""
    if not x.dtype.is_floating_point:
        return False
    big = float(ml_dtypes.finfo(x.dtype.numpy_dtype).max)
    nan = any(type(b) is float and math.isnan(b) for b in (lo, hi))
    return nan and any(type(b) is float and math.isfinite(b) and abs(b) > big for b in (lo, hi))


def _huge(*bounds: Any) -> bool:
    """Bounds PyTorch treats apart, left out of the comparison with it (both our paths are
    still compared): every Python int is an int64 Scalar there, so a bigger one is refused
    whatever the tensor's dtype (ours takes it as a number of the tensor's dtype); and a
    finite float past float32's range is refused or not depending on the other bound
    (``clamp(3.5e38, None)`` raises, ``clamp(3.5e38, nan)`` of a bool tensor gives NaN;
    ours raises PyTorch's overflow error for both)."""
    return any(
        (type(b) is int and not -(2**63) <= b < 2**63)
        or (type(b) is float and math.isfinite(b) and abs(b) > 3.4028234663852886e38)
        for b in bounds
    )


@settings(max_examples=100, deadline=None)
@given(x=tensors(dtypes=(tt.float32, tt.float64)), lo=_BOUND, hi=_BOUND)
def test_clamp_spellings(x: Any, lo: Any, hi: Any) -> None:
    """``tt.clamp`` with keywords and ``tt.clip`` alike."""
    huge = _huge(lo, hi)
    same_both_ways(
        lambda a: tt.clamp(a, min=lo, max=hi),
        x,
        torch_call=None if huge else lambda a: a.clamp(min=lo, max=hi),
    )
    clip = lambda a: (tt if isinstance(a, tt.Tensor) else torch).clip(a, lo, hi)  # noqa: E731
    same_both_ways(clip, x, torch_call=None if huge else clip)


_STACK_SHAPES = [(), (0,), (2,), (3,), (2, 3), (1, 3), (0, 3), (2, 3, 1)]
_STACK_DTYPES = (tt.float32, tt.float64, tt.float16, tt.bfloat16, tt.int64, tt.bool, tt.complex64)


@st.composite
def stack_inputs(draw: st.DrawFn) -> list[Any]:
    """1-4 tensors, usually of one dtype and shape (sometimes not), views among them."""
    k = draw(st.integers(1, 4))
    dt = draw(st.sampled_from(_STACK_DTYPES))
    shape = draw(st.sampled_from(_STACK_SHAPES))
    out = []
    for _ in range(k):
        d = dt if draw(st.integers(0, 4)) else draw(st.sampled_from(_STACK_DTYPES))
        s = shape if draw(st.integers(0, 4)) else draw(st.sampled_from(_STACK_SHAPES))
        out.append(draw(tensors(dtypes=[d], shapes=[s], requires_grad=None)))
    return out


@settings(max_examples=300, deadline=None)
@given(ts=stack_inputs(), dim=st.sampled_from([0, 1, -1, -2, 2, 3, -3, -4, 4, True, 1.0]))
def test_stack(ts: list[Any], dim: Any) -> None:
    def call(*a: Any) -> Any:
        lib = tt if isinstance(a[0], tt.Tensor) else torch
        out = lib.stack(list(a), dim)
        if any(t.requires_grad for t in a):
            out.sum().backward()
            return out, *[t.grad for t in a]
        return out

    same_both_ways(call, *ts, torch_call=call)
