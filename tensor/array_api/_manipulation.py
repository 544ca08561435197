"""The standard's manipulation functions over the ``tensor`` namespace's shape operators.

Imports: ``tensor`` and ``._helpers``.
"""

from __future__ import annotations

import builtins
from typing import Any

import tensor as tt
from tensor._tensor import Tensor

from ._helpers import axes, promoted_dtype

__all__ = [
    "broadcast_arrays",
    "broadcast_shapes",
    "broadcast_to",
    "concat",
    "expand_dims",
    "flip",
    "moveaxis",
    "permute_dims",
    "repeat",
    "reshape",
    "roll",
    "squeeze",
    "stack",
    "tile",
    "unstack",
]


def broadcast_arrays(*arrays: Tensor) -> tuple[Tensor, ...]:
    return tuple(tt.broadcast_tensors(*arrays))


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    try:
        return tuple(tt.broadcast_shapes(*shapes))
    except RuntimeError as e:
        raise ValueError(str(e)) from None


def broadcast_to(x: Tensor, /, shape: tuple[int, ...]) -> Tensor:
    return tt.broadcast_to(x, tuple(shape))


def _same_dtype(arrays: Any) -> list[Tensor]:
    arrays = [*arrays]
    dt = promoted_dtype(*arrays)
    return [a if a.dtype == dt else a.to(dt) for a in arrays]


def concat(arrays: Any, /, *, axis: int | None = 0) -> Tensor:
    arrays = _same_dtype(arrays)
    if axis is None:
        return tt.cat([a.reshape(-1) for a in arrays], 0)
    return tt.cat(arrays, axis)


def stack(arrays: Any, /, *, axis: int = 0) -> Tensor:
    return tt.stack(_same_dtype(arrays), axis)


def expand_dims(x: Tensor, /, axis: Any = 0) -> Tensor:
    if isinstance(axis, builtins.int):
        if not -x.ndim - 1 <= axis <= x.ndim:
            raise IndexError(f"expand_dims: axis {axis} is out of bounds for {x.ndim + 1} dims")
        return x.unsqueeze(axis)
    ndim = x.ndim + len(axis)
    positions = sorted(a % ndim if -ndim <= a < ndim else _bad_axis(a, ndim) for a in axis)
    if len(set(positions)) != len(positions):
        raise ValueError(f"expand_dims: repeated axis in {tuple(axis)}")
    for p in positions:
        x = x.unsqueeze(p)
    return x


def _bad_axis(a: int, ndim: int) -> int:
    raise IndexError(f"expand_dims: axis {a} is out of bounds for {ndim} dims")


def flip(x: Tensor, /, *, axis: Any = None) -> Tensor:
    dims = axes(axis, x.ndim)
    return tt.flip(x, tuple(range(x.ndim)) if dims is None else dims)


def moveaxis(x: Tensor, source: Any, destination: Any, /) -> Tensor:
    return tt.moveaxis(x, source, destination)


def permute_dims(x: Tensor, /, axes: tuple[int, ...]) -> Tensor:
    return tt.permute(x, tuple(axes))


def repeat(x: Tensor, repeats: Any, /, *, axis: int | None = None) -> Tensor:
    return tt.repeat_interleave(x, repeats, dim=axis)


def reshape(x: Tensor, /, shape: tuple[int, ...], *, copy: builtins.bool | None = None) -> Tensor:
    out = tt.reshape(x, tuple(shape))
    if copy:
        return out.clone()
    if copy is False and out is not x and (out._base is None or out._base is not (x._base or x)):
        raise ValueError("reshape: copy=False, but this reshape needs a copy")
    return out


def roll(x: Tensor, /, shift: Any, *, axis: Any = None) -> Tensor:
    if axis is None:
        return tt.roll(x.reshape(-1), shift, 0).reshape(x.shape)
    if isinstance(shift, builtins.int) and not isinstance(axis, builtins.int):
        shift = (shift,) * len(axis)
    return tt.roll(x, shift, axis)


def squeeze(x: Tensor, /, axis: Any) -> Tensor:
    dims = axes(axis, x.ndim)
    assert dims is not None
    for d in dims:
        if x.shape[d] != 1:
            raise ValueError(f"squeeze: axis {d} has size {x.shape[d]}, not 1")
    return tt.squeeze(x, dims) if dims else x


def tile(x: Tensor, repetitions: tuple[int, ...], /) -> Tensor:
    return tt.tile(x, tuple(repetitions))


def unstack(x: Tensor, /, *, axis: int = 0) -> tuple[Tensor, ...]:
    if x.ndim == 0:
        raise ValueError("unstack: x must have at least one dimension")
    return tuple(tt.unbind(x, axis))
