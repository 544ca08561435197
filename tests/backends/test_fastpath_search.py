"""searchsorted's CPU fast path (``np.searchsorted`` for 1-D boundaries without NaN)
against the general path (PyTorch's binary search, vectorised: Note [Searching
operators] in ``backends.common.searching``) and PyTorch, on both sides of its guard:
1-D boundaries with and without NaNs, batched boundaries, sorters, both sides, int32
results, integer and half-precision dtypes, NaN and infinite values, ties.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as tt
from backends.common import searching
from backends.common.elementwise import Namespace
from tensor._frontend import FRONT
from tests.backends.fastpath_support import same_both_ways

_DTYPES = [tt.float32, tt.float64, tt.float16, tt.bfloat16, tt.int64, tt.int16, tt.uint8]
_FLOATS = st.sampled_from([0.0, -0.0, 1.0, -1.5, 2.0, 2.0, 3.5, np.inf, -np.inf, np.nan])


def _array(draw: st.DrawFn, dtype: tt.dtype, shape: tuple[int, ...], nan: bool) -> np.ndarray:
    n = int(np.prod(shape))
    if dtype.is_floating_point:
        vals = draw(st.lists(_FLOATS if nan else st.integers(-4, 4), min_size=n, max_size=n))
        return np.array(vals, dtype=np.float64).reshape(shape)
    low = 0 if dtype is tt.uint8 else -4
    return np.array(draw(st.lists(st.integers(low, 4), min_size=n, max_size=n))).reshape(shape)


@st.composite
def searches(draw: st.DrawFn) -> tuple[Any, Any, dict[str, Any]]:
    dtype = draw(st.sampled_from(_DTYPES))
    batched = draw(st.booleans())
    n = draw(st.integers(0, 9))
    lead = (draw(st.integers(1, 3)),) if batched else ()
    bd = np.sort(_array(draw, dtype, (*lead, n), draw(st.booleans())), axis=-1)  # NaNs last
    vals = _array(draw, dtype, (*lead, draw(st.integers(0, 6))), True)
    kwargs: dict[str, Any] = {}
    if draw(st.booleans()):
        kwargs["right"] = True
    if draw(st.booleans()):
        kwargs["out_int32"] = True
    if draw(st.booleans()):  # the same sorted rows, shuffled and read through a sorter
        perm = np.argsort(np.random.default_rng(n).random(bd.shape), axis=-1)
        shuffled = np.empty_like(bd)
        np.put_along_axis(shuffled, perm, bd, axis=-1)
        bd, kwargs["sorter"] = shuffled, tt.from_numpy(perm.astype(np.int64))
    as_tt = tt.from_numpy(bd).to(dtype), tt.from_numpy(vals).to(dtype)
    return as_tt[0], as_tt[1], kwargs


@settings(max_examples=300, deadline=None)
@given(case=searches())
def test_searchsorted_fast_path_matches_the_search(case: Any) -> None:
    bd, vals, kwargs = case

    def torch_call(b: Any, v: Any) -> Any:
        import torch

        kw = dict(kwargs)
        if "sorter" in kw:
            kw["sorter"] = torch.from_numpy(kw["sorter"].numpy())
        return torch.searchsorted(b, v, **kw)

    same_both_ways(lambda b, v: tt.searchsorted(b, v, **kwargs), bd, vals, torch_call=torch_call)


@settings(max_examples=100, deadline=None)
@given(
    x=st.lists(_FLOATS, max_size=12),
    t=st.lists(_FLOATS, max_size=8),
    invert=st.booleans(),
    dtype=st.sampled_from([tt.float32, tt.float64, tt.bfloat16]),
)
def test_isin_nan_is_never_in(x: list[float], t: list[float], invert: bool, dtype: Any) -> None:
    """isin on the CPU (``np.isin``) and the namespace's sort-and-search give PyTorch's
    answers: -0.0 is 0.0, infinities are found, NaN never is."""
    a = tt.tensor(x, dtype=tt.float64).to(dtype)
    b = tt.tensor(t, dtype=tt.float64).to(dtype)
    got = tt.isin(a, b, invert=invert)
    fns = searching.namespace_fns(Namespace(np.ndarray, __name__, FRONT, asarray=np.asarray))
    general = fns["isin"](a.float().numpy(), b.float().numpy(), False, invert)
    expected = np.isin(np.array(x), np.array(t), invert=invert)  # NaN != NaN
    np.testing.assert_array_equal(got.numpy(), expected)  # every value is exact in bfloat16
    np.testing.assert_array_equal(general, got.numpy())
    try:
        import torch
    except ImportError:
        return
    theirs = torch.isin(torch.tensor(x, dtype=torch.float64).to(getattr(torch, dtype.name)),
                        torch.tensor(t, dtype=torch.float64).to(getattr(torch, dtype.name)),
                        invert=invert)  # fmt: skip
    np.testing.assert_array_equal(got.numpy(), theirs.numpy())
