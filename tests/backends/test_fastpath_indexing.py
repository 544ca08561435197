"""``x[i]`` and ``x[a:b:s]`` entered directly (select through its fixed-arity entry, one
slice of dim 0 without ``_apply``: tensor/_indexing.py ``getitem``) against the general
path (Note [Fast-path switch]) and PyTorch, across both sides of their guards: ints in
and out of range, NumPy integers and bools (the general path), slices with None, negative,
huge, zero and negative-step parts, 0-d and 1-d tensors, views, tensors that require
grad."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
from tests.backends.fastpath_support import ALL_DTYPES, same_both_ways, tensors

_SHAPES = [(), (0,), (1,), (5,), (2, 3), (4, 1), (3, 2, 2)]
_PART = st.sampled_from([None, 0, 1, 2, -1, -2, 3, 7, -9, 2**40, -(2**40), np.int64(1)])
_STEP = st.sampled_from([None, None, 1, 2, 3, -1, 0, np.int64(2)])


@st.composite
def keys(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["int", "slice", "slice", "other"]))
    if kind == "int":
        return draw(st.sampled_from([0, 1, -1, 2, -3, 4, 9, -9]))
    if kind == "slice":
        return slice(draw(_PART), draw(_PART), draw(_STEP))
    return draw(st.sampled_from([np.int64(1), True, False, ..., None]))


def _torch_takes(key: Any) -> bool:
    """PyTorch refuses a negative step; ours takes it (Note [Negative steps])."""
    return not (type(key) is slice and key.step is not None and key.step < 0)


@settings(max_examples=400, deadline=None)
@given(x=tensors(dtypes=ALL_DTYPES, shapes=_SHAPES, requires_grad=None), key=keys())
def test_getitem(x: Any, key: Any) -> None:
    def call(a: Any) -> Any:
        out = a[key]
        if a.requires_grad:
            out.sum().backward()
            return out, a.grad
        return out

    same_both_ways(call, x, torch_call=call if _torch_takes(key) else None)


@settings(max_examples=150, deadline=None)
@given(x=tensors(dtypes=ALL_DTYPES, shapes=_SHAPES), key=keys())
def test_getitem_is_a_view_where_basic(x: Any, key: Any) -> None:
    """A basic index's result shares ``x``'s memory and version counter, on both paths."""

    basic = type(key) is int or (type(key) is slice and (key.step is None or key.step > 0))

    def call(a: Any) -> Any:
        out = a[key]
        if basic and isinstance(a, tt.Tensor):
            assert out._base is (a._base if a._base is not None else a)
            assert out._version_counter is a._version_counter
        return out

    same_both_ways(call, x, torch_call=call if _torch_takes(key) else None)
