"""NumPy references of the shape, indexing, joining and sorting operators.

Imports: NumPy and the sibling ``samples`` module.  Each reference computes the
expected values from the samples' arrays, widened with ``up``, following
PyTorch's semantics where they differ from NumPy's (``chunk``'s sizes, NaN
order in sorts, ``unique`` keeping NaNs apart).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .samples import up


# -- references --------------------------------------------------------------------------------------
def _swap(x: Any, a: int, b: int) -> Any:
    return up(x) if np.ndim(x) < 2 else np.swapaxes(up(x), a, b)


def _expand(x: Any, size: list[int]) -> Any:
    lead = len(size) - np.ndim(x)
    shape = [np.shape(x)[i - lead] if s == -1 else s for i, s in enumerate(size)]
    return np.broadcast_to(up(x), shape)


def _slice(x: Any, dim: int, start: Any, end: Any, step: int) -> Any:
    return up(x)[(slice(None),) * (dim % np.ndim(x)) + (slice(start, end, step),)]


def _split(x: Any, size: Any, dim: int = 0) -> tuple[Any, ...]:
    n = np.shape(x)[dim]
    sizes = (
        list(size)
        if isinstance(size, (list, tuple))
        else [size] * (n // size) + ([n % size] if n % size else [])
    )
    cuts = np.cumsum(sizes)[:-1]
    return tuple(np.split(up(x), cuts, axis=dim))


def _chunk(x: Any, chunks: int, dim: int = 0) -> tuple[Any, ...]:
    n = np.shape(x)[dim]
    return _split(x, -(-n // chunks), dim)


def _squeeze(x: Any, dim: Any = None) -> Any:
    if dim is None or np.ndim(x) == 0:
        return np.squeeze(up(x))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return np.squeeze(up(x), axis=tuple(d for d in dims if np.shape(x)[d] == 1))


def _flatten(x: Any, start: int = 0, end: int = -1) -> Any:
    if np.ndim(x) == 0:
        return up(x).reshape(1)
    shape = np.shape(x)
    end %= len(shape)
    return up(x).reshape(*shape[:start], -1, *shape[end + 1 :])


def _unflatten(x: Any, dim: int, sizes: Any) -> Any:
    shape = list(np.shape(x))
    dim %= len(shape)
    return up(x).reshape(*shape[:dim], *sizes, *shape[dim + 1 :])


def _gather(x: Any, dim: int, idx: Any) -> Any:
    key = tuple(slice(None) if i == dim else slice(0, n) for i, n in enumerate(idx.shape))
    return np.take_along_axis(up(x)[key], idx, axis=dim)


def _scatter(
    x: Any, dim: int, idx: Any, src: Any = None, value: Any = None, reduce: Any = None
) -> Any:
    out = up(x).copy()
    for pos in np.ndindex(*idx.shape):
        target = list(pos)
        target[dim] = idx[pos]
        v = up(src)[pos] if src is not None else value
        if reduce == "add":
            out[tuple(target)] = out[tuple(target)] + v
        elif reduce == "multiply":
            out[tuple(target)] = out[tuple(target)] * v
        else:
            out[tuple(target)] = v
    return out


def _masked_fill(x: Any, mask: Any, value: Any) -> Any:
    shape = np.broadcast_shapes(np.shape(x), np.shape(mask))
    return np.where(np.broadcast_to(mask, shape), up(value), np.broadcast_to(up(x), shape))


def _take_along(x: Any, idx: Any, dim: Any = None) -> Any:
    if dim is None:
        return up(x).reshape(-1)[idx.reshape(-1)]
    shape_x, shape_i = list(np.shape(x)), list(np.shape(idx))
    shape_x[dim] = shape_i[dim] = 1
    b = list(np.broadcast_shapes(tuple(shape_x), tuple(shape_i)))
    bx, bi = list(b), list(b)
    bx[dim], bi[dim] = np.shape(x)[dim], np.shape(idx)[dim]
    return np.take_along_axis(np.broadcast_to(up(x), bx), np.broadcast_to(idx, bi), axis=dim)


def _index_put(x: Any, indices: list[Any], v: Any, accumulate: bool = False) -> Any:
    out = up(x).copy()
    if accumulate:
        np.add.at(out, tuple(indices), up(v))
    else:
        out[tuple(indices)] = up(v)
    return out


def _cat(tensors: list[Any], dim: int = 0) -> Any:
    kept = [up(t) for t in tensors if t.shape != (0,)]
    return np.concatenate(kept, axis=dim)


def _order(x: Any, dim: int = -1, descending: bool = False) -> tuple[Any, Any]:
    x = up(x)
    if x.ndim == 0:
        return x, np.zeros((), np.int64)
    if descending:
        flipped = np.flip(x, dim)
        idx = np.flip(np.argsort(flipped, axis=dim, kind="stable"), dim)
        idx = x.shape[dim] - 1 - idx
    else:
        idx = np.argsort(x, axis=dim, kind="stable")
    return np.take_along_axis(x, idx, axis=dim), idx


def _topk(x: Any, k: int, dim: int = -1, largest: bool = True) -> tuple[Any, Any]:
    v, i = _order(x, dim, largest)
    key = (slice(None),) * (dim % np.ndim(x)) + (slice(0, k),)
    return v[key], i[key]


def _unique(
    x: Any, return_inverse: bool = False, return_counts: bool = False, dim: Any = None
) -> Any:
    if dim is None:
        vals, inv, counts = np.unique(
            up(x), return_inverse=True, return_counts=True, equal_nan=False
        )
        inv = inv.reshape(np.shape(x))
    else:
        vals, inv, counts = np.unique(up(x), return_inverse=True, return_counts=True, axis=dim)
        inv = inv.reshape(-1)
    out = [vals] + ([inv] if return_inverse else []) + ([counts] if return_counts else [])
    return tuple(out) if len(out) > 1 else vals


def _nonzero(x: Any) -> Any:
    if np.ndim(x) == 0:
        return np.zeros((int(bool(x)), 0), np.int64)
    return np.argwhere(x)
