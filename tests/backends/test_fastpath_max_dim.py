"""``max``/``min`` along a dim of a NumPy matrix (Note [Max along a dim of a matrix] in
backends/common/reduction.py) against the general path (Note [Fast-path switch]) and
PyTorch, across both sides of its guard: matrices and other ranks, empty ones, views,
every real dtype, NaN, signed zeros and ties (values and indices), keepdim, gradients."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.backends.fastpath_support import ALL_DTYPES, same_both_ways, tensors

_SHAPES = [(2, 3), (1, 4), (4, 1), (3, 3), (0, 3), (3, 0), (5,), (2, 2, 2), ()]
_REAL = [dt for dt in ALL_DTYPES if not dt.is_complex]


@settings(max_examples=400, deadline=None)
@given(
    x=tensors(dtypes=_REAL, shapes=_SHAPES, requires_grad=None),
    which=st.sampled_from(["max", "min"]),
    dim=st.sampled_from([0, 1, -1, -2, 2]),
    keepdim=st.booleans(),
)
def test_max_min_dim(x: Any, which: str, dim: int, keepdim: bool) -> None:
    def call(a: Any) -> Any:
        values, indices = getattr(a, which)(dim, keepdim=keepdim)
        if a.requires_grad:
            values.sum().backward()
            return values, indices, a.grad
        return values, indices

    same_both_ways(call, x, torch_call=call)
