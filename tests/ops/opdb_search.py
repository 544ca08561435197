"""Op-database entries of the searching operators (``searchsorted``, ``isin``).

Imports: NumPy and the sibling ``opentry``/``samples`` modules (never torch).

The ``searchsorted`` reference is PyTorch's binary search written out one value at a
time in plain Python (Note [Searching operators] in ``backends.common.searching``): it
gives PyTorch's positions where boundaries hold NaNs, where NumPy's ``searchsorted``
does not.  ``isin``'s is ``np.isin`` on widened values (a NaN is never in).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .opentry import OpEntry, _fn
from .samples import DTYPE_NAMES, FLOAT_NAMES, Sample, up, values

__all__ = ["entries"]

SEARCH_DTYPES = tuple(d for d in DTYPE_NAMES if not d.startswith("complex"))


def _bisect(row: list[Any], v: Any, right: bool, order: list[int] | None) -> int:
    """PyTorch's search of ``v`` in ``row`` (ATen's cus_lower_bound / cus_upper_bound),
    one value at a time: the reference of the CPU, CUDA and harness kernels."""
    start, end = 0, len(row)
    while start < end:
        mid = start + (end - start) // 2
        b = row[order[mid]] if order is not None else row[mid]
        if (not b > v) if right else (not b >= v):
            start = mid + 1
        else:
            end = mid
    return start


def _searchsorted_ref(
    bd: np.ndarray, v: Any, *, out_int32: bool = False, right: bool = False,
    side: str | None = None, sorter: np.ndarray | None = None,
) -> np.ndarray:  # fmt: skip
    right = right or side == "right"
    vals = np.asarray(up(v))
    n = bd.shape[-1]
    rows = up(bd).reshape(-1, n).tolist() if n else [[]] * max(1, bd.size)
    orders = None if sorter is None else sorter.reshape(-1, n).tolist()
    per_row = vals.shape[-1] if vals.ndim else 1
    out = [
        _bisect(rows[0 if bd.ndim == 1 else i // per_row], x, right,
                None if orders is None else orders[0 if bd.ndim == 1 else i // per_row])
        for i, x in enumerate(vals.reshape(-1).tolist())
    ]  # fmt: skip
    return np.asarray(out, dtype=np.int32 if out_int32 else np.int64).reshape(vals.shape)


def _sorted(dtype: str, rng: np.random.Generator, *shape: int) -> np.ndarray:
    x = values(dtype, shape, rng)
    return np.sort(x.astype(np.float32) if dtype == "bfloat16" else x, axis=-1).astype(x.dtype)


def _s(*args: Any, name: str, plain: bool = False, **kw: Any) -> Sample:
    return Sample(tuple(args), kw, name=name, plain=plain)


def _degenerate(sample: Sample) -> Sample:
    sample.degenerate = True  # PyTorch returns empty values before its dtype check
    return sample


def _searchsorted_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    bd = _sorted(dtype, rng, 6)
    v = values(dtype, (2, 3), rng)
    batched = _sorted(dtype, rng, 2, 5)
    unsorted = values(dtype, (7,), rng)
    order = np.argsort(up(unsorted), kind="stable").astype(np.int64)
    out = [
        _s(bd, v, name="1-D", plain=True),
        _s(batched, values(dtype, (2, 4), rng), name="batched"),
        _s(bd, v, right=True, name="right"),
        _s(batched, values(dtype, (2, 3), rng), side="right", name="side=right"),
        _s(bd, v, side="left", name="side=left"),
        _s(unsorted, v, sorter=order, name="sorter"),
        _s(
            np.stack([unsorted, unsorted[::-1]]),
            values(dtype, (2, 3), rng),
            side="right",
            sorter=np.stack([order, order[::-1].copy()]),
            name="batched sorter",
        ),  # fmt: skip
        _s(bd, v, out_int32=True, name="out_int32"),
        _s(bd, bd, name="ties"),
        _s(bd, bd, right=True, name="ties right"),
        _s(bd, v.T, name="non-contiguous values"),
        _s(bd[::2], values(dtype, (4,), rng), name="strided boundaries"),
        _s(bd[:0], v, name="empty boundaries"),
        _degenerate(_s(bd, v[:, :0], name="empty values")),
        _s(bd, 1, name="scalar"),
        _s(bd, values(dtype, (), rng), name="0-d value"),
        _s(bd, np.array([-2, 0, 5], dtype=np.int64), name="int64 values"),
        # errors, as PyTorch words them
        _s(bd, v, side="middle", name="bad side"),
        _s(bd, v, right=True, side="left", name="side contradicts right"),
        _s(batched, values(dtype, (3, 4), rng), name="leading dims differ"),
        _s(batched, 1, name="scalar with 2-D boundaries"),
        _s(bd, v, sorter=order[:3], name="sorter of another size"),
        _s(unsorted, v, sorter=order.astype(np.int32), name="int32 sorter"),
    ]
    if dtype in FLOAT_NAMES:
        nan = np.asarray(np.nan, dtype=bd.dtype)
        with_nan = np.concatenate([bd[:3], np.stack([nan, nan])])
        vn = np.concatenate([v.reshape(-1), np.stack([nan])]).astype(bd.dtype)
        out += [
            _s(bd, vn, name="nan values"),
            _s(with_nan, vn, name="nan boundaries"),
            _s(with_nan, vn, right=True, name="nan boundaries right"),
            _s(np.stack([with_nan, bd[:5]]), np.stack([vn[:4], vn[3:]]), name="nan batched"),
            _s(bd, 0.5, name="float scalar"),
        ]
    return out


def _isin_ref(x: Any, t: Any, *, assume_unique: bool = False, invert: bool = False) -> Any:
    return np.isin(np.asarray(up(x)), np.asarray(up(t)), invert=invert)


def _isin_samples(dtype: str, rng: np.random.Generator) -> list[Sample]:
    x = values(dtype, (3, 4), rng)
    t = values(dtype, (5,), rng)
    u = np.unique(up(t)).astype(t.dtype)
    out = [
        _s(x, t, name="tensors", plain=True),
        _s(x, t, invert=True, name="invert"),
        _s(x, u, assume_unique=True, name="assume_unique"),
        _s(x.T, values(dtype, (2, 3), rng), name="non-contiguous, 2-D test"),
        _s(x, t[:0], name="empty test elements"),
        _s(x[:0], t, name="empty elements"),
        _s(x, 1, name="scalar test element"),
        _s(1, t, name="scalar element"),
        _s(2, t, invert=True, name="scalar element invert"),
        _s(x, np.array([-1, 0, 2], dtype=np.int8), name="int8 test elements"),
    ]
    if dtype in FLOAT_NAMES:
        nan = np.asarray(np.nan, dtype=x.dtype)
        xn = np.concatenate([x.reshape(-1), np.stack([nan])])
        tn = np.concatenate([t, np.stack([nan])])
        out += [
            _s(xn, tn, name="nan never in"),
            _s(xn, tn, invert=True, name="nan invert"),
            _s(x, 1.5, name="float scalar"),
        ]
    return out


def entries() -> list[OpEntry]:
    return [
        OpEntry("searchsorted", "searchsorted", _fn("searchsorted"), _searchsorted_ref,
                _searchsorted_samples, dtypes=SEARCH_DTYPES),
        OpEntry("isin", "isin", _fn("isin"), _isin_ref, _isin_samples, dtypes=SEARCH_DTYPES),
    ]  # fmt: skip
