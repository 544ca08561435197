"""``expand``'s view from the ndarray constructor (Note [Expand fast path] in
backends/cpu/shape.py) against NumPy's ``broadcast_to`` (the general path, Note
[Fast-path switch]) and PyTorch, across both sides of its guard: contiguous, transposed,
sliced and already-expanded tensors, bfloat16 (no buffer), sizes that broadcast, keep
(-1), add leading dims, or do not fit; the result is read-only (a write raises)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
from backends.common import fastpaths
from tests.backends.fastpath_support import ALL_DTYPES, same_both_ways, tensors

_SHAPES = [(), (1,), (3,), (1, 3), (2, 1), (2, 3), (0,), (1, 0), (2, 1, 1)]
_SIZE = st.lists(st.sampled_from([-1, -1, 1, 2, 3, 4, 0, -2]), max_size=4)


@settings(max_examples=300, deadline=None)
@given(x=tensors(dtypes=ALL_DTYPES, shapes=_SHAPES, requires_grad=None), size=_SIZE)
def test_expand(x: Any, size: list[int]) -> None:
    def call(a: Any) -> Any:
        out = a.expand(*size) if size else a.expand(())
        if a.requires_grad:
            out.sum().backward()
            return out, a.grad
        return out

    # Negative sizes PyTorch takes where the result is empty (``tensor(0).expand(-1, 0)``
    # is a tensor of size (-1, 0), an empty one expanded by [-2, -1] of size (-2, 0));
    # ours refuses -1 in a new dim and every size below -1, as PyTorch does otherwise.
    odd = any(s < -1 for s in size) or any(s < 0 for s in size[: len(size) - x.ndim])
    same_both_ways(call, x, torch_call=None if odd else call)


@settings(max_examples=100, deadline=None)
@given(x=tensors(dtypes=(tt.float32, tt.int64, tt.bfloat16, tt.bool), shapes=_SHAPES))
def test_expanded_is_a_read_only_view(x: Any) -> None:
    def call(a: Any) -> Any:
        out = a.expand(2, *a.shape)
        if isinstance(a, tt.Tensor):
            assert out._base is (a._base if a._base is not None else a)
            assert not out._array.flags.writeable
        out.add_(1)  # more than one element per memory location: refused (both)
        return out

    same_both_ways(call, x, torch_call=call)


@settings(max_examples=200, deadline=None)
@given(x=tensors(dtypes=ALL_DTYPES, shapes=_SHAPES), size=_SIZE)
def test_expand_strides_are_numpys(x: Any, size: list[int]) -> None:
    """The fast path's strides are ``np.broadcast_to``'s in every dim (0 for each dim of
    one, where PyTorch keeps the stride): copies lay out by strides (Note [Copies keep the
    layout]), so fast and general copies of an expanded tensor agree."""
    try:
        with fastpaths.disabled():
            general = x.expand(*size)
    except RuntimeError:
        return
    fast = x.expand(*size)
    assert fast.stride() == general.stride(), (x.shape, x.stride(), size)
    assert fast.clone().stride() == general.clone().stride()
