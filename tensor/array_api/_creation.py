"""The standard's creation functions: ``shape=`` tuples, positional-only, ``device=``.

Imports: ``tensor``.  Each calls the ``tensor`` factory of its name.
"""

from __future__ import annotations

import builtins
from typing import Any

import tensor as tt
from tensor._tensor import Tensor

__all__ = [
    "arange",
    "asarray",
    "empty",
    "empty_like",
    "eye",
    "from_dlpack",
    "full",
    "full_like",
    "linspace",
    "meshgrid",
    "ones",
    "ones_like",
    "tril",
    "triu",
    "zeros",
    "zeros_like",
]


def _shape(shape: Any) -> tuple[int, ...]:
    return (shape,) if isinstance(shape, builtins.int) else tuple(shape)


def asarray(
    obj: Any, /, *, dtype: Any = None, device: Any = None, copy: builtins.bool | None = None
) -> Tensor:
    return tt.asarray(obj, dtype=dtype, device=device, copy=copy)


def arange(
    start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None
) -> Tensor:
    if stop is None:
        start, stop = 0, start
    if step != 0 and (stop - start) / step <= 0:  # an empty range (PyTorch refuses it)
        if dtype is None:
            floats = builtins.any(isinstance(v, float) for v in (start, stop, step))
            dtype = tt.get_default_dtype() if floats else tt.int64
        return tt.empty((0,), dtype=dtype, device=device)
    return tt.arange(start, stop, step, dtype=dtype, device=device)


def empty(shape: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    return tt.empty(_shape(shape), dtype=dtype, device=device)


def zeros(shape: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    return tt.zeros(_shape(shape), dtype=dtype, device=device)


def ones(shape: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    return tt.ones(_shape(shape), dtype=dtype, device=device)


def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    if dtype is None and isinstance(fill_value, builtins.bool):
        dtype = tt.bool
    elif dtype is None and isinstance(fill_value, builtins.int):
        dtype = tt.int64
    return tt.full(_shape(shape), fill_value, dtype=dtype, device=device)


def _like_device(x: Tensor, device: Any) -> Any:
    return x.device if device is None else device


def empty_like(x: Tensor, /, *, dtype: Any = None, device: Any = None) -> Tensor:
    return tt.empty_like(x, dtype=dtype, device=_like_device(x, device))


def zeros_like(x: Tensor, /, *, dtype: Any = None, device: Any = None) -> Tensor:
    return tt.zeros_like(x, dtype=dtype, device=_like_device(x, device))


def ones_like(x: Tensor, /, *, dtype: Any = None, device: Any = None) -> Tensor:
    return tt.ones_like(x, dtype=dtype, device=_like_device(x, device))


def full_like(x: Tensor, /, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    return tt.full_like(x, fill_value, dtype=dtype, device=_like_device(x, device))


def eye(
    n_rows: int,
    n_cols: int | None = None,
    /,
    *,
    k: int = 0,
    dtype: Any = None,
    device: Any = None,
) -> Tensor:
    n_cols = n_rows if n_cols is None else n_cols
    if k == 0:
        return tt.eye(n_rows, n_cols, dtype=dtype, device=device)
    # The k-th diagonal: where column - row == k.
    rows = tt.arange(n_rows, device=device).unsqueeze(1)
    cols = tt.arange(n_cols, device=device)
    return ((cols - rows) == k).to(tt.get_default_dtype() if dtype is None else dtype)


def linspace(
    start: Any,
    stop: Any,
    /,
    num: int,
    *,
    dtype: Any = None,
    device: Any = None,
    endpoint: builtins.bool = True,
) -> Tensor:
    if dtype is None and (isinstance(start, complex) or isinstance(stop, complex)):
        dtype = tt.complex64
    if endpoint:
        return tt.linspace(start, stop, num, dtype=dtype, device=device)
    # num points of num + 1 (the endpoint dropped), as NumPy does
    return tt.linspace(start, stop, num + 1, dtype=dtype, device=device)[:num].clone()


def from_dlpack(x: Any, /, *, device: Any = None, copy: builtins.bool | None = None) -> Tensor:
    out = tt.from_dlpack(x)
    if device is not None:
        out = out.to(device)
    if copy:
        out = out.clone()
    return out


def tril(x: Tensor, /, *, k: int = 0) -> Tensor:
    return tt.tril(x, k)


def triu(x: Tensor, /, *, k: int = 0) -> Tensor:
    return tt.triu(x, k)


def meshgrid(*arrays: Tensor, indexing: str = "xy") -> tuple[Tensor, ...]:
    return tuple(tt.meshgrid(*arrays, indexing=indexing))
