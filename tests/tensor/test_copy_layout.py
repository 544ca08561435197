"""Note [Copies keep the layout] (backends/composite/__init__.py): ``clone()``, ``to(dtype)``
and ``_to_copy`` lay a copy out as PyTorch's ``preserve_format`` does, ``contiguous()``
and ``memory_format="contiguous_format"`` row-major, ``channels_last`` as (N, H, W, C);
a leaf's ``.grad`` follows PyTorch's layout contract (the leaf's strides when it is
dense).  Driven over permuted, sliced and expanded tensors by hypothesis: the fast path
against the general path, both against PyTorch where it is installed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
from backends.common import fastpaths
from backends.composite import dense_order

try:
    import torch
except ImportError:  # compared with the general path alone
    torch = None


@st.composite
def layouts(draw: st.DrawFn) -> tuple[np.ndarray, list[int], tuple[slice, ...], list[int] | None]:
    """An array, a permutation of its dims, slices of the result, and a size to expand a
    size-1 dim to (or None)."""
    shape = draw(st.lists(st.integers(1, 4), min_size=0, max_size=4))
    array = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    perm = draw(st.permutations(range(len(shape))))
    slices = tuple(
        slice(draw(st.integers(0, 1)) if n > 1 else 0, None, draw(st.sampled_from([1, 1, 2])))
        for n in np.transpose(array, perm).shape
    )
    expand = None
    sliced = np.transpose(array, perm)[slices].shape
    ones = [i for i, n in enumerate(sliced) if n == 1]
    if ones and draw(st.booleans()):
        expand = list(sliced)
        expand[draw(st.sampled_from(ones))] = 3
    return array, list(perm), slices, expand


def _view(lib: Any, case: Any) -> Any:
    array, perm, slices, expand = case
    t = (tt.tensor if lib is tt else torch.tensor)(array)
    t = t.permute(*perm)[slices] if perm else t
    return t.expand(*expand) if expand is not None else t


COPIES = {
    "clone": lambda lib, t: t.clone(),
    "to(float64)": lambda lib, t: t.to(lib.float64),
    "to(int32)": lambda lib, t: t.to(lib.int32),
    "contiguous": lambda lib, t: t.contiguous(),
    "clone(contiguous_format)": lambda lib, t: t.clone(
        memory_format="contiguous_format" if lib is tt else torch.contiguous_format
    ),
}


def _sized_strides(t: Any) -> tuple[int, ...]:
    """The strides of the dims of more than one element (the others' do not matter)."""
    return tuple(s for s, n in zip(t.stride(), t.shape, strict=True) if n > 1)


@settings(max_examples=150, deadline=None)
@given(case=layouts(), name=st.sampled_from(sorted(COPIES)))
def test_copies_lay_out_as_pytorch(case: Any, name: str) -> None:
    copy = COPIES[name]
    ours = copy(tt, _view(tt, case))
    with fastpaths.disabled():
        general = copy(tt, _view(tt, case))
    np.testing.assert_array_equal(ours.numpy(), general.numpy())
    # Fast and general alike in every dim of more than one element (a dim of one has
    # no layout: its stride is whatever the copy that made it left, in PyTorch too).
    assert _sized_strides(ours) == _sized_strides(general), (name, ours.stride(), general.stride())
    assert ours._array.base is None or ours._array.base.base is None  # a copy, not a view
    if name.startswith("contiguous") or "contiguous_format" in name:
        assert ours.is_contiguous()
    # PyTorch's order of an expanded tensor depends on the strides of its dims of one
    # element, which NumPy and PyTorch set differently: compared for the others
    # (``dense_order`` itself is checked on strides given below).
    if torch is not None and case[3] is None:
        theirs = copy(torch, _view(torch, case))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        assert _sized_strides(ours) == _sized_strides(theirs), (
            name,
            ours.stride(),
            theirs.stride(),
        )


def test_a_transposed_copy_is_transposed() -> None:
    x = tt.ones(3, 4).t()
    assert x.clone().stride() == (1, 4) and not x.clone().is_contiguous()
    assert x.contiguous().stride() == (3, 1)
    assert tt.ones(2, 3, 4, 5).clone(memory_format="channels_last").stride() == (60, 1, 15, 3)


def test_bad_memory_formats_name_the_operator() -> None:
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
        tt.ones(3, 4).clone(memory_format="channels_last")
    with pytest.raises(TypeError, match="memory_format"):
        tt.clone(tt.ones(3), memory_format="rows")


@pytest.mark.parametrize("steal", [True, False])
def test_grad_follows_the_leafs_layout(steal: bool) -> None:
    """PyTorch's layout contract: a row-major leaf gets a row-major ``.grad`` whatever
    layout its gradient came in (a transposed copy here), a transposed leaf a transposed
    one; with the fast paths off (nothing stolen) the same."""
    with fastpaths.disabled() if not steal else _nothing():
        w = tt.ones(3, 4, requires_grad=True)
        (w.t().clone() * 2).sum().backward()
        assert w.grad.stride() == (4, 1)
        v = tt.ones(4, 3).t().requires_grad_()
        (v * 2).sum().backward()
        assert v.grad.stride() == (1, 3)
        np.testing.assert_array_equal(v.grad.numpy(), np.full((3, 4), 2.0))


class _nothing:  # noqa: N801 - a context manager spelled like one
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


@pytest.mark.parametrize(
    ("shape", "strides", "order"),
    [
        ((3, 4), (4, 1), [0, 1]),
        ((3, 4), (1, 3), [1, 0]),
        ((3, 2), (0, 2), [0, 1]),  # stride 0 stays where row-major order has it
        ((2, 3, 3, 1), (1, 2, 0, 0), [1, 0, 2, 3]),  # PyTorch's own example, transposed
        ((2, 2), (1, 1), [0, 1]),  # equal strides: the larger dim outer, else as they are
    ],
)
def test_dense_order_is_pytorchs(shape: Any, strides: Any, order: list[int]) -> None:
    assert dense_order(shape, strides) == order


@settings(max_examples=200, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=4),
    data=st.data(),
)
def test_dense_order_against_pytorchs_clone(shape: list[int], data: Any) -> None:
    """On the same sizes and strides (zeros and overlaps among them), ``dense_order``
    gives the strides PyTorch's ``clone`` gives an overlapping or non-dense tensor."""
    if torch is None:
        pytest.skip("PyTorch is not installed: dense_order is checked on the cases above")
    strides = data.draw(st.lists(st.integers(0, 12), min_size=len(shape), max_size=len(shape)))
    view = torch.as_strided(torch.zeros(200), shape, strides)
    expected = 1
    for stride, n in sorted((s, n) for s, n in zip(strides, shape, strict=True) if n > 1):
        if stride != expected:
            break
        expected *= n
    else:
        return  # dense and non-overlapping: PyTorch keeps the strides (NumPy's copies too)
    order = dense_order(tuple(shape), tuple(strides))
    ours = [0] * len(shape)
    step = 1
    for d in reversed(order):
        ours[d] = step
        step *= max(shape[d], 1)
    sized = [i for i, n in enumerate(shape) if n > 1]
    assert [ours[i] for i in sized] == [view.clone().stride()[i] for i in sized]
