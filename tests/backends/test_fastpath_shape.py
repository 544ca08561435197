"""The shape fast paths against the general path (Note [Fast-path switch]) and PyTorch:
Note [View fast path] (view/reshape with raw sizes, unsqueeze's dim, a matrix's
transpose behind ``.T``/``mT`` and ``t()``) and cat's fast path (one dtype, an int dim), each driven
across both sides of its guard by hypothesis.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
from tests.backends.fastpath_support import ALL_DTYPES, same_both_ways, tensors, torch

_SHAPES = [(), (0,), (1,), (6,), (2, 3), (3, 1), (0, 2), (4, 5), (2, 3, 4), (1, 4)]
# Sizes that cross the raw-size guard: -1 (inferred), -2 and below (refused), sizes that
# do or don't match the count, 0, bools and floats (PyTorch refuses both), big ints.
_SIZE = st.sampled_from([-1, -1, -2, -3, 0, 1, 2, 3, 4, 6, 12, 24, True, 2.0, 2**63])


@st.composite
def sizes(draw: st.DrawFn) -> Any:
    """A size for view/reshape: a list or tuple of 0-3 entries."""
    size = draw(st.lists(_SIZE, max_size=3))
    return tuple(size) if draw(st.booleans()) else size


def _torch(size: Any, call: Any) -> Any:
    """``call`` for PyTorch, unless ``size`` holds a bool: PyTorch reads True as 1 in a
    size; we refuse it (listed, deliberate)."""
    return None if any(type(s) is bool for s in size) else call


@settings(max_examples=200, deadline=None)
@given(x=tensors(dtypes=ALL_DTYPES, shapes=_SHAPES, requires_grad=None), size=sizes())
def test_view(x: Any, size: Any) -> None:
    same_both_ways(lambda a: a.view(size), x, torch_call=_torch(size, lambda a: a.view(size)))


@settings(max_examples=200, deadline=None)
@given(x=tensors(dtypes=ALL_DTYPES, shapes=_SHAPES, requires_grad=None), size=sizes())
def test_reshape(x: Any, size: Any) -> None:
    """Reshape that views where it can and copies where it must (transposed, sliced,
    expanded inputs), on both paths."""
    same_both_ways(lambda a: a.reshape(size), x, torch_call=_torch(size, lambda a: a.reshape(size)))


@settings(max_examples=60, deadline=None)
@given(x=tensors(shapes=_SHAPES, requires_grad=None), size=sizes())
def test_view_star_sizes(x: Any, size: Any) -> None:
    """``x.view(2, -1)`` (sizes as arguments) and reshape's backward (a view of a grad)."""

    def call(a: Any) -> Any:
        out = a.reshape(*size) if size else a.reshape(())
        if a.requires_grad:
            out.sum().backward()
            return out, a.grad
        return out

    same_both_ways(call, x, torch_call=_torch(size, call))


@settings(max_examples=150, deadline=None)
@given(
    x=tensors(shapes=_SHAPES, requires_grad=None),
    dim=st.sampled_from([0, 1, 2, 3, 4, -1, -2, -3, -4, -5, True, 1.0, None]),
)
def test_unsqueeze(x: Any, dim: Any) -> None:
    """The dim guard: -ndim-1 <= dim <= ndim in range, one past either end raising."""
    same_both_ways(lambda a: a.unsqueeze(dim), x, torch_call=lambda a: a.unsqueeze(dim))


@settings(max_examples=150, deadline=None)
@given(
    x=tensors(shapes=_SHAPES, requires_grad=None),
    dims=st.tuples(*[st.sampled_from([0, 1, -1, -2, 2, -3, True])] * 2),
)
def test_transpose(x: Any, dims: tuple[Any, Any]) -> None:
    """The matrix fast path (``n == 2``, dims in [-2, 2) and different) and the rest."""
    same_both_ways(lambda a: a.transpose(*dims), x, torch_call=lambda a: a.transpose(*dims))


@settings(max_examples=100, deadline=None)
@given(x=tensors(shapes=_SHAPES, requires_grad=None))
def test_t(x: Any) -> None:
    """t's matrix fast path (``n == 2``) and the rest: vectors, scalars, and the error for
    more than two dims; with a backward (TBackward0) when ``x`` requires grad."""

    def call(a: Any) -> Any:
        out = a.t()
        if a.requires_grad:
            (out * 2).sum().backward()
            return out, a.grad
        return out

    same_both_ways(call, x, torch_call=call)


@settings(max_examples=100, deadline=None)
@given(x=tensors(shapes=_SHAPES, requires_grad=None), attr=st.sampled_from(["T", "mT"]))
def test_T_and_mT(x: Any, attr: str) -> None:  # noqa: N802
    def call(a: Any) -> Any:
        if attr == "T" and a.ndim not in (0, 2):  # PyTorch: deprecated (a warning), permute
            return a.permute(*range(a.ndim - 1, -1, -1))
        out = getattr(a, attr)
        if a.requires_grad:
            (out * 2).sum().backward()
            return out, a.grad
        return out

    same_both_ways(call, x, torch_call=call)


@settings(max_examples=200, deadline=None)
@given(
    x=tensors(shapes=_SHAPES, requires_grad=None),
    dims=st.lists(st.sampled_from([0, 1, 2, 3, -1, -2, -3, -4, True, 1.0]), max_size=4),
    as_tuple=st.booleans(),
)
def test_permute(x: Any, dims: list[Any], as_tuple: bool) -> None:
    """permute's fast path (a list of the rank's length, of ints in [0, rank), none twice:
    ``x.T``'s dims) and the rest: negative dims, repeats, wrong lengths, tuples, bools
    and floats (refused by the call's checker; bools are PyTorch's 1 and 0, refused as in
    sizes), through ``tt.permute`` and the method."""
    order = tuple(dims) if as_tuple else dims

    def calling(lib: Any) -> Any:
        def call(a: Any) -> Any:
            out = a.permute(*order) if as_tuple else lib.permute(a, order)
            if a.requires_grad:
                (out * 2).sum().backward()
                return out, a.grad
            return out

        return call

    same_both_ways(
        calling(tt), x, torch_call=_torch(order, calling(torch)) if torch is not None else None
    )


@pytest.mark.parametrize(
    ("shape", "dims"),
    [
        ((2, 3), [0, 0]),  # repeated
        ((2, 3), [1, 1]),
        ((2, 3, 4), [0, 2, 2]),
        ((2, 3), [2, 0]),  # out of range
        ((2, 3), [-1, 0]),  # negative: the general path's
        ((2, 3), [1]),  # too short
        ((2, 3), [1, 0, 2]),  # too long
        ((), []),
        ((3,), [0]),
        ((2, 3, 4), [2, 0, 1]),
    ],
)
def test_permute_edges(shape: tuple[int, ...], dims: list[int]) -> None:
    """Both sides of the fast path's guard, each case drawn for sure."""
    x = tt.ones(*shape)
    torch_call = (lambda a: torch.permute(a, dims)) if torch is not None else None
    same_both_ways(lambda a: tt.permute(a, dims), x, torch_call=torch_call)


def test_T_is_permute_as_in_pytorch() -> None:  # noqa: N802
    """PyTorch's ``x.T`` is ``numpy_T``, a permute whatever the rank: a matrix's result
    has PermuteBackward0 (``mT`` and ``t()`` keep theirs), and a rank other than 2 warns
    that it is deprecated."""
    import warnings

    m = tt.ones(2, 3, requires_grad=True)
    assert m.T.grad_fn.name() == "PermuteBackward0"
    assert m.mT.grad_fn.name() == "TransposeBackward0"
    assert m.t().grad_fn.name() == "TBackward0"
    assert m.T._base is m and tuple(m.T.shape) == (3, 2)
    for shape, text in (((), "deprecated on 0-D"), ((3,), "dimension other than 2")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _ = tt.ones(*shape).T
        assert len(caught) == 1 and text in str(caught[0].message), shape
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _ = m.T  # a matrix: no warning
    if torch is not None:
        assert torch.ones(2, 3, requires_grad=True).T.grad_fn.name() == "PermuteBackward0"


# -- cat ---------------------------------------------------------------------------------------
_CAT_SHAPES = [(0,), (2,), (3,), (2, 3), (1, 3), (2, 2), (0, 3), (2, 0), (), (2, 3, 1)]
_CAT_DTYPES = (tt.float32, tt.float64, tt.float16, tt.bfloat16, tt.int64, tt.int32, tt.bool)


@st.composite
def cat_inputs(draw: st.DrawFn) -> list[Any]:
    """1-4 tensors, usually of one dtype (sometimes mixed), shapes that join or don't,
    legacy empty 1-D tensors among them, views."""
    k = draw(st.integers(1, 4))
    dt = draw(st.sampled_from(_CAT_DTYPES))
    shape = draw(st.sampled_from(_CAT_SHAPES))
    out = []
    for _ in range(k):
        d = dt if draw(st.integers(0, 3)) else draw(st.sampled_from(_CAT_DTYPES))
        s = shape if draw(st.integers(0, 2)) else draw(st.sampled_from(_CAT_SHAPES))
        out.append(draw(tensors(dtypes=[d], shapes=[s], requires_grad=None)))
    return out


@settings(max_examples=250, deadline=None)
@given(ts=cat_inputs(), dim=st.sampled_from([0, 1, -1, -2, 2, -3, True, None, 1.0]))
def test_cat(ts: list[Any], dim: Any) -> None:
    def call(*a: Any) -> Any:
        lib = tt if isinstance(a[0], tt.Tensor) else torch
        out = lib.cat(list(a), dim)
        if any(t.requires_grad for t in a):
            out.sum().backward()
            return out, *[t.grad for t in a]
        return out

    same_both_ways(call, *ts, torch_call=call)


@settings(max_examples=60, deadline=None)
@given(ts=cat_inputs(), dim=st.sampled_from([0, -1]))
def test_cat_out(ts: list[Any], dim: Any) -> None:
    """``out=`` takes the general path; the result and the written tensor agree."""
    dt = ts[0].dtype

    def call(*a: Any) -> Any:
        lib = tt if isinstance(a[0], tt.Tensor) else torch
        ldt = dt if lib is tt else getattr(torch, str(dt).rpartition(".")[2])
        out = lib.empty(0, dtype=ldt)
        r = lib.cat([t.detach() for t in a], dim, out=out)
        return r, out

    same_both_ways(call, *ts, torch_call=call)
