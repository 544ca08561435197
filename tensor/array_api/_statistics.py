"""The standard's statistical, searching (argmax/argmin) and utility reductions.

Imports: ``tensor`` and ``._helpers``.  ``axis`` is an int, a tuple or None; ``axis=()``
reduces nothing (PyTorch's ``dim=()`` reduces everything: Note [A thin namespace]).
"""

from __future__ import annotations

import builtins
from typing import Any

import tensor as tt
from tensor._tensor import Tensor

from ._helpers import axes

__all__ = [
    "all",
    "any",
    "argmax",
    "argmin",
    "count_nonzero",
    "cumulative_prod",
    "cumulative_sum",
    "diff",
    "max",
    "mean",
    "min",
    "prod",
    "std",
    "sum",
    "var",
]


def _reduce(
    op: Any, x: Tensor, axis: Any, keepdims: builtins.bool, none_ok: builtins.bool = True, **kw: Any
) -> Tensor:
    """``op(x, dim, keepdim, **kw)`` over the standard's ``axis``."""
    dims = axes(axis, x.ndim)
    if dims is None:
        dims = tuple(range(x.ndim))
    if not dims:  # nothing to reduce: the op over no axes is the identity (cast by kw)
        dt = kw.get("dtype")
        return x.to(dt) if dt is not None else x.clone()
    return op(x, dims, keepdims, **kw)


def sum(
    x: Tensor, /, *, axis: Any = None, dtype: Any = None, keepdims: builtins.bool = False
) -> Tensor:  # noqa: A001
    out = _reduce(tt.sum, x, axis, keepdims, dtype=dtype)
    if (
        dtype is None
        and x.dtype in (tt.int8, tt.int16, tt.int32, tt.uint8, tt.bool)
        and out.dtype != tt.int64
    ):
        out = out.to(tt.int64)
    return out


def prod(
    x: Tensor, /, *, axis: Any = None, dtype: Any = None, keepdims: builtins.bool = False
) -> Tensor:
    dims = axes(axis, x.ndim)
    if dims is None:
        dims = tuple(range(x.ndim))
    if dtype is None and x.dtype in (tt.int8, tt.int16, tt.int32, tt.uint8, tt.bool):
        dtype = tt.int64
    if not dims:
        return x.to(dtype) if dtype is not None else x.clone()
    out = x
    for d in sorted(dims, reverse=True):  # PyTorch's prod takes one dim at a time
        out = tt.prod(out, d, keepdims, dtype=dtype)
    return out


def mean(x: Tensor, /, *, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:
    return _reduce(tt.mean, x, axis, keepdims)


def max(x: Tensor, /, *, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:  # noqa: A001
    return _reduce(tt.amax, x, axis, keepdims)


def min(x: Tensor, /, *, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:  # noqa: A001
    return _reduce(tt.amin, x, axis, keepdims)


def _moments(op: Any, x: Tensor, axis: Any, correction: Any, keepdims: builtins.bool) -> Tensor:
    dims = axes(axis, x.ndim)
    if dims is None:
        dims = tuple(range(x.ndim))
    if not dims:
        return x * 0  # no axes: the deviation of each element from itself
    return op(x, dims, correction=correction, keepdim=keepdims)


def std(
    x: Tensor, /, *, axis: Any = None, correction: Any = 0.0, keepdims: builtins.bool = False
) -> Tensor:
    return _moments(tt.std, x, axis, correction, keepdims)


def var(
    x: Tensor, /, *, axis: Any = None, correction: Any = 0.0, keepdims: builtins.bool = False
) -> Tensor:
    return _moments(tt.var, x, axis, correction, keepdims)


def all(x: Tensor, /, *, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:  # noqa: A001
    dims = axes(axis, x.ndim)
    if dims == ():
        return x.to(tt.bool)
    return (
        tt.all(x, dims if dims is not None else tuple(range(x.ndim)), keepdims)
        if x.ndim
        else tt.all(x)
    )


def any(x: Tensor, /, *, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:  # noqa: A001
    dims = axes(axis, x.ndim)
    if dims == ():
        return x.to(tt.bool)
    return (
        tt.any(x, dims if dims is not None else tuple(range(x.ndim)), keepdims)
        if x.ndim
        else tt.any(x)
    )


def _arg(op: Any, x: Tensor, axis: int | None, keepdims: builtins.bool) -> Tensor:
    if axis is None:
        out = op(x.reshape(-1), 0)
        return out.reshape((1,) * x.ndim) if keepdims else out
    return op(x, axis, keepdims)


def argmax(x: Tensor, /, *, axis: int | None = None, keepdims: builtins.bool = False) -> Tensor:
    return _arg(tt.argmax, x, axis, keepdims)


def argmin(x: Tensor, /, *, axis: int | None = None, keepdims: builtins.bool = False) -> Tensor:
    return _arg(tt.argmin, x, axis, keepdims)


def count_nonzero(x: Tensor, /, *, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:
    nonzero = x != 0
    dims = axes(axis, x.ndim)
    if dims == ():
        return nonzero.to(tt.int64)
    if dims is None:
        dims = tuple(range(x.ndim))
    if not dims:
        return nonzero.to(tt.int64)
    return tt.sum(nonzero, dims, keepdims, dtype=tt.int64)


def _cumulative(
    op: Any, initial: int, x: Tensor, axis: int | None, dtype: Any, include_initial: builtins.bool
) -> Tensor:
    if axis is None:
        if x.ndim > 1:
            raise ValueError("axis is required for arrays of more than one dimension")
        axis = 0
    if x.ndim == 0:
        raise ValueError("x must have at least one dimension")
    if dtype is None and x.dtype in (tt.int8, tt.int16, tt.int32, tt.uint8, tt.bool):
        dtype = tt.int64
    out = op(x, axis, dtype=dtype)
    if include_initial:
        shape = list(x.shape)
        shape[axis] = 1
        first = tt.full(shape, initial, dtype=out.dtype, device=out.device)
        out = tt.cat([first, out], axis)
    return out


def cumulative_sum(
    x: Tensor,
    /,
    *,
    axis: int | None = None,
    dtype: Any = None,
    include_initial: builtins.bool = False,
) -> Tensor:
    return _cumulative(tt.cumsum, 0, x, axis, dtype, include_initial)


def cumulative_prod(
    x: Tensor,
    /,
    *,
    axis: int | None = None,
    dtype: Any = None,
    include_initial: builtins.bool = False,
) -> Tensor:
    return _cumulative(tt.cumprod, 1, x, axis, dtype, include_initial)


def diff(
    x: Tensor,
    /,
    *,
    axis: int = -1,
    n: int = 1,
    prepend: Tensor | None = None,
    append: Tensor | None = None,
) -> Tensor:
    return tt.diff(x, n, axis, prepend, append)
