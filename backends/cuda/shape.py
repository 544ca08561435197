"""CUDA kernels of the shape, view, indexing, joining and sorting operators (CuPy arrays).

Imports: CuPy, ``backends.common`` and ``backends.cuda._compile``.

The kernels are the shared ones (``backends.common.views``/``indexing``/``joining``/
``sorting``) given CuPy's namespace.  Which CuPy calls do the work, and why:
- views (``reshape`` without a copy, ``broadcast_to``, strided ``diagonal``): CuPy
  arrays carry strides as NumPy's do, so a view is metadata only, no kernel;
- gather/``index``/``take_along_axis``/masks/``nonzero``: CuPy's fancy indexing
  kernels (one generated elementwise kernel each; ``nonzero`` needs a scan and a
  device-to-host size read, as PyTorch's does);
- ``scatter_add``/``index_put_(accumulate=True)``: ``cupyx.scatter_add`` (atomicAdd);
- ``scatter_(reduce="multiply")``: our ``scatter.cu`` kernel (compare-and-swap loops:
  CUDA has no atomic multiply and CuPy no scatter-multiply);
- ``sort``/``argsort``/``topk``: CuPy's sorts (CUB radix sort: better than anything
  we would write here);
- ``cat``/``stack``: ``cupy.concatenate`` (one copy kernel per input);
- ``searchsorted``: our ``search.cu`` kernel (PyTorch's binary search, one thread per
  value); ``isin``: CuPy's sort of the test elements, then ``search.cu``'s search of each
  element among them (Note [Searching operators] in ``backends.common.searching``).

Note [Writes to expanded views on CUDA]
NumPy marks broadcast views read-only, so on the CPU an in-place write into an
expanded tensor raises as in PyTorch.  CuPy arrays have no read-only flag: the
CUDA backend cannot refuse such a write yet, and the elements sharing memory get
one of the written values.  PyTorch raises; this difference is known and listed
in the README.
"""

from __future__ import annotations

from typing import Any

import cupy
import cupyx
import numpy as np
from cupy.lib.stride_tricks import as_strided

from ..common import indexing, joining, searching, sorting, variants, views
from ..common.elementwise import Namespace, rename_all
from ..common.frontend import FrontEnd
from . import _compile, _tables

__all__ = ["INDEX_FNS", "SEARCH_FNS", "VIEW_FNS", "kernels"]


def _reshape(x: Any, shape: tuple[int, ...], copy: bool | None) -> Any:
    if copy is None:
        return cupy.reshape(x, shape)
    if copy:
        return cupy.reshape(x, shape).copy()
    out = x.view()
    out.shape = shape  # AttributeError when no view has this shape (views.view reports it)
    return out


VIEW_FNS: dict[str, Any] = {
    "reshape": _reshape,
    "broadcast_to": cupy.broadcast_to,  # Note [Writes to expanded views on CUDA]
    "diagonal": views.strided_diagonal(as_strided),
}

# CUDA C type names of the dtypes scatter.cu is instantiated for (no complex).
SCATTER_TYPES = dict(_tables.CTYPES)


def _offsets(x: Any, key: tuple[Any, ...], shape: tuple[int, ...]) -> Any:
    # Element offsets of x[key] from x's first element, through x's strides (x may be a view).
    item = x.dtype.itemsize
    out = cupy.zeros(shape, dtype=np.int64)
    for d, k in enumerate(key):
        out += cupy.broadcast_to(cupy.asarray(k, dtype=np.int64), shape) * (x.strides[d] // item)
    return out


def _multiply_at(x: Any, key: tuple[Any, ...], values: Any) -> None:
    """``x[key] *= values`` with repeated indices all applied (NumPy's ``np.multiply.at``)."""
    shape = np.broadcast_shapes(*(cupy.asarray(k).shape for k in key), values.shape)
    offsets = cupy.ascontiguousarray(_offsets(x, key, shape)).ravel()
    vals = cupy.ascontiguousarray(cupy.broadcast_to(values.astype(x.dtype), shape)).ravel()
    n = offsets.size
    if n == 0:
        return
    name = SCATTER_TYPES.get(str(x.dtype))
    if name is None:  # complex: no atomic multiply; repeated indices in rounds instead
        _multiply_at_in_rounds(x, key, shape, offsets, vals)
        return
    fn = _compile.function("scatter.cu", f"scatter_mul<{name}>")
    threads = 256
    blocks = min((n + threads - 1) // threads, 65535)
    fn((blocks,), (threads,), (x, offsets, vals, np.int64(n)))


def _multiply_at_in_rounds(
    x: Any, key: tuple[Any, ...], shape: tuple[int, ...], offsets: Any, vals: Any
) -> None:
    """``x[key] *= vals`` applying every repeat of an index: round r multiplies in the r-th
    occurrence of each offset, so no round writes one element twice (fancy-index writes
    keep only one of repeated indices)."""
    order = cupy.argsort(offsets, kind="stable")
    ordered = offsets[order]
    n = ordered.size
    rank = cupy.empty(n, dtype=np.int64)
    rank[order] = cupy.arange(n) - cupy.searchsorted(ordered, ordered, side="left")
    flat_key = tuple(cupy.broadcast_to(cupy.asarray(k), shape).ravel() for k in key)
    for r in range(int(rank.max()) + 1):
        pick = rank == r
        x[tuple(k[pick] for k in flat_key)] *= vals[pick]


# The dtypes cupyx.scatter_add accumulates in (atomicAdd's).
_ATOMIC_ADD = frozenset(
    np.dtype(n) for n in ("int32", "int64", "uint32", "uint64", "float16", "float32", "float64")
)


def _add_at(x: Any, key: tuple[Any, ...], values: Any) -> None:
    """``x[key] += values`` with repeated indices all applied (NumPy's ``np.add.at``), for
    every dtype: complex as two real halves, bool as "any", narrow integers and bfloat16
    summed in a wider dtype (integer sums wrap the same either way)."""
    dt = x.dtype
    if dt in _ATOMIC_ADD:
        cupyx.scatter_add(x, key, values.astype(dt, copy=False))
        return
    if dt.kind == "c":
        v = values.astype(dt, copy=False)
        cupyx.scatter_add(x.real, key, cupy.ascontiguousarray(v.real))
        cupyx.scatter_add(x.imag, key, cupy.ascontiguousarray(v.imag))
        return
    wide = np.dtype(np.float32) if dt.kind == "V" else np.dtype(np.int64)
    total = cupy.zeros(x.shape, wide)
    cupyx.scatter_add(total, key, values.astype(wide))
    if dt.kind == "b":
        x |= total != 0
    else:
        x[...] = (x.astype(wide) + total).astype(dt)


# What the array API lacks: unbuffered accumulation at (repeated) indices.
INDEX_FNS: dict[str, Any] = {"add_at": _add_at, "multiply_at": _multiply_at}

_SEARCH_BLOCK = (256,)


def _grid(n: int) -> tuple[int]:
    return (max(1, min((n + 255) // 256, 65535)),)


def _searchsorted(bd: Any, v: Any, sorter: Any, right: bool, out_int32: bool) -> Any:
    out = cupy.empty(v.shape, dtype=np.int32 if out_int32 else np.int64)
    n_values = out.size
    if n_values == 0:
        return out
    name = _tables.CTYPES[str(bd.dtype) if bd.dtype.kind != "V" else "bfloat16"]
    fn = _compile.function(
        "search.cu", f"searchsorted_rows<{name}, {_tables.CTYPES[str(out.dtype)]}>"
    )
    bd = cupy.ascontiguousarray(bd)
    v = cupy.ascontiguousarray(v)
    has_sorter = sorter is not None
    # without one the kernel reads no sorter, but takes a pointer of its type
    s = cupy.ascontiguousarray(sorter) if has_sorter else cupy.empty((0,), dtype=np.int64)
    per_row = v.shape[-1] if v.ndim else 1
    args = (bd, s, v, out, np.int64(n_values), np.int64(per_row), np.int64(bd.shape[-1]),
            np.int32(bd.ndim > 1), np.int32(right), np.int32(has_sorter))  # fmt: skip
    fn(_grid(n_values), _SEARCH_BLOCK, args)
    return out


def _isin(x: Any, t: Any, assume_unique: bool, invert: bool) -> Any:
    if x.dtype.itemsize == 2 and x.dtype.kind in "fV":  # half precision: float32, exactly
        x, t = x.astype(np.float32), t.astype(np.float32)
    out = cupy.empty(x.shape, dtype=np.bool_)
    n = out.size
    if n == 0:
        return out
    ordered = cupy.sort(cupy.ravel(t))  # NaNs last
    fn = _compile.function("search.cu", f"isin_sorted<{_tables.CTYPES[str(x.dtype)]}>")
    args = (cupy.ascontiguousarray(x), ordered, out, np.int64(n), np.int64(ordered.size),
            np.int32(invert))  # fmt: skip
    fn(_grid(n), _SEARCH_BLOCK, args)
    return out


SEARCH_FNS: dict[str, Any] = {"searchsorted": _searchsorted, "isin": _isin}


def kernels(front: FrontEnd) -> dict[str, Any]:
    """Every shape-family CUDA kernel, by qualified overload name."""
    ns = Namespace(cupy.ndarray, __name__, front, asarray=cupy.asarray)
    out: dict[str, Any] = {}
    out.update(views.kernels(front, VIEW_FNS))
    out.update(variants.mutation_kernels(front, meta=False))
    out.update(indexing.kernels(ns, INDEX_FNS))
    out.update(joining.kernels(ns, {"diag": cupy.diag, "concat": cupy.concatenate}))
    out.update(sorting.kernels(ns))
    out.update(searching.kernels(ns, SEARCH_FNS))
    return rename_all(out, __name__)
